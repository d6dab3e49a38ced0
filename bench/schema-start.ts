/**
 * What a large output schema costs at `start()`: the event loop is blocked for the
 * synchronous part of `spawn()` (entry checks, the subset check, compiling the validator), then
 * again when the child's first capture is validated. Prints one JSON line: per schema size, the
 * schema's JSON size, the synchronous part of `spawn()`, the whole start, and the run to its
 * committed result. Run: `node --import tsx bench/schema-start.ts` (`--quick` for 1,000 only).
 */
import { Context } from 'cordis'
import { Host } from '../plugins/host/index.ts'
import InProcessRun from '../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'
import StructuredOutput from '../plugins/structured-output/index.ts'

const sizes = process.argv.includes('--quick') ? [1_000] : [1_000, 60_000]
const log = (message: string) => process.stderr.write(`${message}\n`)

interface Figure {
  properties: number
  schema_kb: number
  spawn_sync_ms: number
  start_ms: number
  run_ms: number
}

function schemaOf(properties: number): { type: 'object'; properties: Record<string, { type: 'string' }> } {
  const declared: Record<string, { type: 'string' }> = {}
  for (let i = 0; i < properties; i++) declared[`field_${i}`] = { type: 'string' }
  return { type: 'object', properties: declared }
}

async function main(): Promise<void> {
  const root = new Context()
  await root.plugin(Host, { maxSteps: 8 })
  await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
  await root.plugin(InProcessRun)
  await root.plugin(StructuredOutput, {})
  const { agent: parent } = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'bench' } })
  // warm-up: module code and the JIT, with a small schema
  root.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { field_0: 'x' } }] })
  const warm = await root.inprocessRun.spawn({ parent, prompt: 'warm up', signal: new AbortController().signal, outputSchema: schemaOf(10) })
  await warm.result
  await warm.dispose()

  const figures: Figure[] = []
  for (const properties of sizes) {
    log(`bench: output schema with ${properties} properties`)
    const outputSchema = schemaOf(properties)
    root.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { field_0: 'x' } }] })
    const t0 = performance.now()
    const starting = root.inprocessRun.spawn({ parent, prompt: 'answer', signal: new AbortController().signal, outputSchema })
    const t1 = performance.now()
    const run = await starting
    const t2 = performance.now()
    const result = await run.result
    const t3 = performance.now()
    if (result.stopReason !== 'completed') throw new Error(`run ended ${result.stopReason}: ${result.diagnostic}`)
    await run.dispose()
    figures.push({
      properties,
      schema_kb: Math.round(JSON.stringify(outputSchema).length / 1024),
      spawn_sync_ms: +(t1 - t0).toFixed(1),
      start_ms: +(t2 - t0).toFixed(1),
      run_ms: +(t3 - t0).toFixed(1),
    })
  }
  process.stdout.write(`${JSON.stringify({ node: process.version, figures })}\n`)
}

await main()
