/**
 * The documentation's code, run as written (extracted at test time, not copied): the TypeScript
 * example of the README's "Install", "Use it" and "Typed results" of docs/host-api.md, "Watching a
 * run's progress" and the console view of "The demo" of docs/watching.md. Fragments get the names
 * they take for granted from a test host.
 */
import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, SubagentResult, SubagentRun } from '../../lib/types.ts'
import { StructuredOutput } from '../../plugins/structured-output/index.ts'
import { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import { codeBlocks, onlyBlock, readDoc, section } from './markdown.ts'
import { runSnippet } from './run-snippet.ts'

const readme = readDoc('README.md')
const hostApi = readDoc('docs/host-api.md')
const watching = readDoc('docs/watching.md')

/** The `// main.ts` block of "Install". */
function mainTs(): string {
  const block = codeBlocks(section(readme, 'Install'), 'ts').find((candidate) => candidate.body.startsWith('// main.ts\n'))
  if (!block) throw new Error('README "Install" has no "// main.ts" block')
  return block.body
}

/** Collects what a snippet writes to a stream or logs, line by line. */
class Capture {
  text = ''
  readonly stream = {
    write: (chunk: string): boolean => {
      this.text += chunk
      return true
    },
  }
  readonly console = {
    log: (...args: unknown[]): void => {
      this.text += `${args.map(String).join(' ')}\n`
    },
  }
  lines(): string[] {
    return this.text.split('\n').filter((line) => line !== '')
  }
}

describe('README and docs snippets', () => {
  describe('"Use it"', () => {
    it('runs as written: the child answers through structured_output and leaves nothing behind', async () => {
      const { ctx, parent, run, result } = (await runSnippet(onlyBlock(section(hostApi, 'Use it'), 'ts'), {}, [
        'ctx',
        'parent',
        'run',
        'result',
      ])) as { ctx: Context; parent: Agent; run: SubagentRun; result: SubagentResult }
      expect(result).to.deep.include({ stopReason: 'completed', structured: { verdict: 'ship it' } })
      expect(ctx.agents.list()).to.deep.equal([parent])
      expect(ctx.sessions.get(run.id)).to.equal(undefined)
    })
  })

  describe('"Install"', () => {
    it('runs the main.ts example as written: the scripted child completes with "done"', async () => {
      const { ctx, agent, result } = (await runSnippet(mainTs(), {}, ['ctx', 'agent', 'result'])) as {
        ctx: Context
        agent: Agent
        result: SubagentResult
      }
      expect(result).to.deep.equal({ output: [{ type: 'text', text: 'done' }], stopReason: 'completed' })
      expect(ctx.agents.list()).to.deep.equal([agent])
    })
  })

  describe('fragments on a test host', () => {
    let host: TestHost
    let parent: Agent
    const prompt = 'Review the change.'

    beforeEach(async () => {
      host = await createHost()
      await host.root.plugin(InProcessRun)
      parent = await host.agent()
    })

    it('"Typed results": a schemastery outputSchema gives the structured value', async () => {
      await host.root.plugin(StructuredOutput)
      const before = host.snapshot()
      host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { verdict: 'hold', notes: ['flaky test'] } }] })
      const { run, structured } = (await runSnippet(
        onlyBlock(section(hostApi, 'Typed results'), 'ts'),
        { ctx: host.root, parent, prompt, signal: AbortSignal.timeout(10_000) },
        ['run', 'structured'],
      )) as { run: SubagentRun; structured: unknown }
      expect(structured).to.deep.equal({ verdict: 'hold', notes: ['flaky test'] })
      await run.dispose()
      expect(host.snapshot()).to.deep.equal(before)
    })

    it('"Watching a run\'s progress": prints each event of the child with its lineage, reads the result and leaves no listener', async () => {
      const capture = new Capture()
      const before = host.snapshot()
      host.scripted.push({ text: 'reviewed' })
      const { run, result } = (await runSnippet(
        onlyBlock(section(watching, "Watching a run's progress"), 'ts'),
        { ctx: host.root, parent, prompt, signal: AbortSignal.timeout(10_000), console: capture.console },
        ['run', 'result'],
      )) as { run: SubagentRun; result: SubagentResult }
      const line = (seq: number, type: string) => `  ${run.id} (child of ${parent.id}) #${seq} ${type}`
      expect(capture.lines()).to.deep.equal([
        line(0, 'turn/start'),
        line(1, 'user/message'),
        line(2, 'step/start'),
        line(3, 'assistant/delta'),
        line(4, 'assistant/message'),
        line(5, 'turn/end'),
      ])
      expect(result).to.deep.equal({ output: [{ type: 'text', text: 'reviewed' }], stopReason: 'completed' })
      await run.dispose()
      expect(host.snapshot()).to.deep.equal(before)
    })

    it('"The demo": printTranscript prints a run with its hook lines until stopped, and stopping removes its listeners', async () => {
      const capture = new Capture()
      const before = host.snapshot()
      const demo = section(watching, 'The demo')
      const { stop } = (await runSnippet(
        onlyBlock(demo, 'ts'),
        { ctx: host.root, process: { stdout: capture.stream } },
        ['stop'],
      )) as { stop: () => void }
      host.scripted.push({ text: 'reviewed' })
      const run = await host.root.inprocessRun.spawn({ parent, prompt, signal: AbortSignal.timeout(10_000) })
      await run.result
      const id = run.id.slice(0, 8)
      expect(capture.lines().slice(0, 4)).to.deep.equal([
        `  ┌─ child · spawn · depth 1 · agent ${id}`,
        `  │ hook       subagent/start run ${id} · parent ${parent.id.slice(0, 8)} · root ${parent.id.slice(0, 8)}`,
        '  │ hook       turn/start 1 (message)',
        `  │ task       ${prompt}`,
      ])
      expect(capture.text).to.include(`  │ hook       subagent/end run ${id} · completed\n`)
      stop()
      const printed = capture.text
      host.scripted.push({ text: 'again' })
      const second = await host.root.inprocessRun.spawn({ parent, prompt, signal: AbortSignal.timeout(10_000) })
      await second.result
      expect(capture.text).to.equal(printed)
      await Promise.all([run.dispose(), second.dispose()])
      expect(host.snapshot()).to.deep.equal(before)
    })
  })
})
