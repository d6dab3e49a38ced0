/**
 * The code of the plugin READMEs, run as written (extracted at test time): StructuredOutput's two
 * examples, and the Loader's config-format example loaded as a host config.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { Context } from 'cordis'
import Schema from 'schemastery'
import type { Agent, SubagentRun } from '../../lib/types.ts'
import { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import { Loader } from '../../plugins/loader/index.ts'
import { StructuredOutput } from '../../plugins/structured-output/index.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import { codeBlocks, onlyBlock, readDoc, section } from './markdown.ts'
import { runSnippet } from './run-snippet.ts'

describe('plugin README snippets', () => {
  describe('plugins/structured-output/README.md', () => {
    const [first, second] = codeBlocks(readDoc('plugins/structured-output/README.md'), 'ts')
    let host: TestHost
    let parent: Agent
    const given = () => ({ ctx: host.root, parent, prompt: 'How many?', signal: AbortSignal.timeout(10_000) })

    beforeEach(async () => {
      host = await createHost()
      await host.root.plugin(InProcessRun)
      parent = await host.agent()
    })

    it('runs the first example as written: the plugin loads and the run completes with the value', async () => {
      host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { answer: 42 } }] })
      const { run, stopReason, structured } = (await runSnippet(first!.body, { ...given(), StructuredOutput }, [
        'run',
        'stopReason',
        'structured',
      ])) as { run: SubagentRun; stopReason: string; structured: unknown }
      expect([stopReason, structured]).to.deep.equal(['completed', { answer: 42 }])
      await run.dispose()
    })

    it('runs the schemastery example as written: the run completes with the value', async () => {
      await host.root.plugin(StructuredOutput)
      host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { answer: 42 } }] })
      const { run, structured } = (await runSnippet(second!.body, { ...given(), Schema }, ['run', 'structured'])) as {
        run: SubagentRun
        structured: unknown
      }
      expect(structured).to.deep.equal({ answer: 42 })
      await run.dispose()
    })
  })

  describe('plugins/loader/README.md', () => {
    let dir: string

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'docs-loader-'))
    })

    afterEach(() => rm(dir, { recursive: true, force: true }))

    it('loads the "Config format" example: the host entry with its config, the disabled entry skipped', async () => {
      const example = onlyBlock(section(readDoc('plugins/loader/README.md'), 'Config format'), 'yaml')
      // the example's path is relative to a config file at the repository root
      const host = fileURLToPath(new URL('../../plugins/host/index.ts', import.meta.url))
      const file = join(dir, 'cordis.yml')
      await writeFile(file, example.replace('./plugins/host/index.ts', host))
      const root = new Context()
      const loader = new Loader(root, file)
      try {
        const report = await loader.start()
        expect([report.loaded, report.failed, loader.loaded()]).to.deep.equal([['host'], [], ['host']])
        expect(loader.fiber('host')?.config).to.deep.equal({ maxSteps: 16 })
      } finally {
        await loader.dispose()
      }
    })
  })
})
