import { expect } from 'chai'
import type { Agent, ToolSchema } from '../../lib/types.ts'
import { TurnModelRequest } from '../../plugins/host/agents/model-request.ts'
import { TurnState } from '../../plugins/host/agents/turn-state.ts'

const agent = { id: 'a' } as unknown as Agent
const tool: ToolSchema = { name: 'echo', description: 'echoes', parameters: { type: 'object' } }

describe('TurnModelRequest', () => {
  it('has tools and maxTokens as own keys only when they are set', () => {
    const state = new TurnState(1)
    expect(Object.keys(new TurnModelRequest(agent, 'm', 'sys', [], [], undefined, state))).to.deep.equal([
      'agent',
      'model',
      'system',
      'messages',
      'signal',
    ])
    expect(Object.keys(new TurnModelRequest(agent, 'm', 'sys', [], [tool], 64, state))).to.deep.equal([
      'agent',
      'model',
      'system',
      'messages',
      'tools',
      'maxTokens',
      'signal',
    ])
  })

  it("reads the turn's signal, so a spread copy carries it as a plain value", () => {
    const state = new TurnState(1)
    const request = new TurnModelRequest(agent, 'm', 'sys', [], [], undefined, state)
    const copy = { ...request }
    expect(copy.signal).to.equal(state.signal)
    expect(Object.getOwnPropertyDescriptor(copy, 'signal')?.value).to.equal(state.signal)
  })

  it('hands a reader an aborted signal when the turn was cancelled before the first read', () => {
    const state = new TurnState(2)
    const request = new TurnModelRequest(agent, 'm', 'sys', [], [], undefined, state)
    state.cancel({ kind: 'user' })
    expect(request.signal.aborted).to.equal(true)
    expect((request.signal.reason as Error).message).to.equal('turn cancelled (user)')
  })
})
