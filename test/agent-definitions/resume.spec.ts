import { rmSync } from 'node:fs'
import { expect } from 'chai'
import AgentDefinitions from '../../plugins/agent-definitions/index.ts'
import { crashCopy, durableHost } from '../durable/fixture.ts'
import { definitionText, tempFolder, writeDefinition } from './fixture.ts'

const tool = (name: string) => ({ name, description: name, parameters: { type: 'object' }, execute: async () => ({ isError: false, content: [] }) })

describe('AgentDefinitions: a child started from a definition, resumed (SPEC §12, §14)', () => {
  it('keeps its definition name, persona and tool filter, prefixes as expanded at start', async () => {
    const folder = tempFolder()
    writeDefinition(folder, 'reader.md', definitionText({ name: 'reader', description: 'Reads.', tools: ['read_*'] }, 'You only read.'))
    try {
      const first = await durableHost(undefined, [[AgentDefinitions, { dirs: [folder], watch: false }]])
      for (const name of ['read_a', 'read_b', 'write']) first.root.tools.register(tool(name))
      const root = await first.agent()
      first.scripted.push({ text: 'done' })
      const run = await first.root.inprocessRun.spawn({ parent: root, prompt: 'task', agent: 'reader', signal: new AbortController().signal })
      await run.result
      const dir = await crashCopy(first)

      // the definition is gone by the time of the resume: what the child started with still holds
      rmSync(folder, { recursive: true, force: true })
      const second = await durableHost(dir)
      for (const name of ['read_a', 'read_b', 'read_c', 'write']) second.root.tools.register(tool(name))
      const tree = await second.root.inprocessRun.resumeTree(root.id)
      const [child] = tree.agents
      expect(child!.session.header.agent).to.equal('reader')
      expect(second.root.tools.schemas(child).map((schema) => schema.name)).to.deep.equal(['read_a', 'read_b'])
      expect((await second.root.systemPrompt.assemble(child!)).text).to.include('You only read.')
      await tree.dispose()
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })
})
