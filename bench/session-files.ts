/**
 * `SessionFiles` write cost: what one persisted event costs when every event is its own write (an
 * append awaited to the file before the next), and per event when many agents run a turn at once
 * (writes batch). Temp folder, removed afterwards. Prints one JSON line.
 * Run: `npm run bench:files` (`--quick` scales the counts down).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { Host } from '../plugins/host/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'
import { SessionFiles } from '../plugins/session-files/index.ts'
import { median } from './stats.ts'

const quick = process.argv.includes('--quick')
const sequentialEvents = quick ? 500 : 5000
const concurrentAgents = quick ? 100 : 1000
const rounds = quick ? 2 : 5
const log = (message: string) => process.stderr.write(`${message}\n`)


async function main(): Promise<void> {
  const started = performance.now()
  const dir = await mkdtemp(join(tmpdir(), 'bench-session-files-'))
  const root = new Context()
  try {
    await root.plugin(Host, { maxSteps: 32 })
    await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
    const files = root.plugin(SessionFiles, { dir })
    await files
    root.scripted.repeat({ text: 'ok', usage: { inputTokens: 16, outputTokens: 1 } })
    const options = { agentOptions: { provider: 'scripted', model: 'bench' } }

    log('bench: one event per write, sequential')
    const single = await root.agents.create(options)
    const samples = new Array<number>(sequentialEvents)
    for (let i = -Math.ceil(sequentialEvents / 5); i < sequentialEvents; i++) {
      const t0 = performance.now()
      single.agent.session.append('bench/event', { i })
      await root.sessionFiles.flush()
      if (i >= 0) samples[i] = (performance.now() - t0) * 1000
    }
    await single.dispose()

    log(`bench: ${concurrentAgents} agents running one turn each, concurrently`)
    const perEvent: number[] = []
    for (let round = 0; round <= rounds; round++) {
      const t0 = performance.now()
      const handles = await Promise.all(Array.from({ length: concurrentAgents }, () => root.agents.create(options)))
      for (const handle of handles) handle.agent.followup('go')
      await Promise.all(handles.map((handle) => handle.agent.whenIdle()))
      await root.sessionFiles.flush()
      const wall = (performance.now() - t0) * 1000
      const events = handles.reduce((sum, handle) => sum + handle.agent.session.events.length, 0)
      await Promise.all(handles.map((handle) => handle.dispose()))
      await root.sessionFiles.flush()
      // round 0 warms up
      if (round > 0) perEvent.push(wall / events)
    }

    process.stdout.write(
      `${JSON.stringify({
        event_write_p50_us: Math.round(median(samples) * 10) / 10,
        concurrent_us_per_event: Math.round(median(perEvent) * 10) / 10,
        concurrent_agents: concurrentAgents,
        node: process.version,
        wall_s: Math.round((performance.now() - started) / 100) / 10,
      })}\n`,
    )
    await files.dispose()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
