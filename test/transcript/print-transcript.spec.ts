import { expect } from 'chai'
import { printTranscript } from '../../index.ts'
import type { ModelAdapter, StreamPart } from '../../lib/types.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import '../support/unhandled.ts'

/** A model whose reply arrives in the given pieces, each one only when the test releases it. */
function gatedModel(pieces: string[]): { adapter: ModelAdapter; release: () => void } {
  let open: () => void = () => {}
  const adapter: ModelAdapter = {
    async *stream(): AsyncGenerator<StreamPart> {
      for (const text of pieces) {
        await new Promise<void>((resolve) => (open = resolve))
        yield { type: 'text-delta', text }
      }
      yield { type: 'finish', reason: 'stop', usage: { inputTokens: 5, outputTokens: 3 } }
    },
  }
  return { adapter, release: () => open() }
}

describe('printTranscript', () => {
  let host: TestHost
  let baseline: Snapshot

  beforeEach(async () => {
    host = await createHost()
    baseline = host.snapshot()
  })

  afterEach(async () => {
    await host.root.agents.disposeAll()
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('writes a turn text as its deltas arrive, before the message ends', async () => {
    let output = ''
    let waiting: { text: string; resolve: () => void } | undefined
    const written = (text: string) => new Promise<void>((resolve) => (output.includes(text) ? resolve() : (waiting = { text, resolve })))
    const stop = printTranscript(host.root, {
      out: {
        write(text: string) {
          output += text
          if (waiting && output.includes(waiting.text)) waiting.resolve()
        },
      },
    })
    const model = gatedModel(['Stream', 'ing works', ' fine'])
    host.root.models.register('gated', model.adapter)
    const { agent } = await host.root.agents.create({ agentOptions: { provider: 'gated', model: 'test' } })
    agent.followup('go')
    await written('user       go\n')
    model.release()
    await written('assistant  Stream')
    expect(output).to.not.include('ing works')
    model.release()
    await written('assistant  Streaming works')
    expect(output).to.not.include('fine')
    model.release()
    await agent.whenIdle()
    expect(output).to.match(/^user {7}go\nassistant {2}Streaming works fine\n {11}turn 1 completed · 5 in \/ 3 out tokens · [\d.]+ ms\n\n$/)
    stop()
  })

  it('stops writing once its dispose function is called', async () => {
    let output = ''
    const stop = printTranscript(host.root, { out: { write: (text: string) => (output += text) } })
    stop()
    host.scripted.push({ text: 'unseen' })
    const agent = await host.agent()
    agent.followup('go')
    await agent.whenIdle()
    expect(output).to.equal('')
  })
})
