import { expect } from 'chai'
import { isSecretOptionName, recordedAgentOptions } from '../../../lib/session/agent-options-record.ts'

describe('recordedAgentOptions (what a session header keeps of the options, SPEC §14)', () => {
  it('keeps the very options object when every option is JSON and none is a secret', () => {
    const options = Object.freeze({ provider: 'openai', model: 'gpt', maxTokens: 100, maxSteps: 4, subagentDepth: 1 })
    expect(recordedAgentOptions(options)).to.equal(options)
  })

  it('leaves out options named like credentials, whatever their value', () => {
    const options = { provider: 'openai', apiKey: 'sk-123', accessToken: 't', password: 'p', clientSecret: 's', maxTokens: 9 }
    const recorded = recordedAgentOptions(options)
    expect(recorded).to.deep.equal({ provider: 'openai', maxTokens: 9 })
    expect(Object.isFrozen(recorded)).to.equal(true)
  })

  it('leaves out values that are not JSON data and keeps nested JSON', () => {
    const recorded = recordedAgentOptions({ model: 'm', onEvent: () => {}, when: new Date(0), gone: undefined, approval: { default: 'ask' } })
    expect(recorded).to.deep.equal({ model: 'm', approval: { default: 'ask' } })
  })

  it('records nothing when nothing qualifies', () => {
    expect(recordedAgentOptions({})).to.equal(undefined)
    expect(recordedAgentOptions({ apiKey: 'sk' })).to.equal(undefined)
  })

  it('keeps an own __proto__ option as a plain key of the copy', () => {
    const options = JSON.parse('{"__proto__": {"x": 1}, "token": "t"}') as Record<string, unknown>
    const recorded = recordedAgentOptions(options)!
    expect(Object.getPrototypeOf(recorded)).to.equal(Object.prototype)
    expect(Object.keys(recorded)).to.deep.equal(['__proto__'])
  })

  it('treats maxTokens as a count, and key-like names as secrets', () => {
    expect(isSecretOptionName('maxTokens')).to.equal(false)
    expect(['apiKey', 'api_key', 'authorization', 'sessionToken', 'credentials'].map(isSecretOptionName)).to.deep.equal([true, true, true, true, true])
  })
})
