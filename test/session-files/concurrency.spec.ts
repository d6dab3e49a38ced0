import { expect } from 'chai'
import type { ModelRequest } from '../../lib/types.ts'
import type { ScriptedResponse } from '../../plugins/scripted-model/index.ts'
import { createFilesHost, expectedLines, type FilesHost, scriptedOptions } from './fixture.ts'

/** Three tool steps, then a text answer naming the agent: every agent streams many events. */
function answer(request: ModelRequest): ScriptedResponse {
  const steps = request.messages.filter((message) => message.role === 'tool').length
  const prompt = (request.messages[0].content[0] as { text: string }).text
  if (steps < 3) return { text: `step ${steps} of ${prompt}`, toolCalls: [{ name: 'echo', arguments: { text: prompt } }] }
  return { text: `done with ${prompt}` }
}

describe('SessionFiles concurrent writes', () => {
  let host: FilesHost

  beforeEach(async () => {
    host = await createFilesHost()
  })

  it('writes each of several concurrently running agents to its own file without interleaving', async () => {
    const release = host.root.tools.register({
      name: 'echo',
      description: 'Echoes its text.',
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
      execute: (args: { text: string }) => args.text,
    })
    host.scripted.repeat(answer)
    const handles = await Promise.all(
      Array.from({ length: 6 }, () => host.root.agents.create({ agentOptions: scriptedOptions })),
    )
    for (const [index, handle] of handles.entries()) handle.agent.followup(`task ${index}`)
    await Promise.all(handles.map((handle) => handle.agent.whenIdle()))
    await host.files.flush()
    for (const [index, handle] of handles.entries()) {
      expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
      expect(JSON.stringify(await host.lines(handle.agent.id))).to.not.match(new RegExp(`task (?!${index}\\b)\\d`))
    }
    await Promise.all(handles.map((handle) => handle.dispose()))
    host.scripted.repeat(undefined)
    release()
    await host.expectClean()
  })

  it('keeps a burst of appends in seq order in one file', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    for (let i = 0; i < 500; i++) handle.agent.session.append('note/burst', { i })
    await host.files.flush()
    const lines = await host.lines(handle.agent.id)
    expect(lines).to.have.length(501)
    expect(lines).to.deep.equal(expectedLines(handle.agent))
    await handle.dispose()
    await host.expectClean()
  })
})
