import { expect } from 'chai'
import { createFixture, type Fixture } from './fixture.ts'

/** The number in a `call_<n>` id, or `undefined` for any other shape. */
function counterOf(id: string): number | undefined {
  const match = /^call_(\d+)$/.exec(id)
  return match ? Number(match[1]) : undefined
}

/** Has the model call `run_code` (no id given) with a program making one nested call; returns both ids. */
async function modelRunsCode(fixture: Fixture): Promise<{ outer: string; nested: string }> {
  const before = fixture.results.length
  fixture.host.scripted.push({ toolCalls: [{ name: 'run_code', arguments: { code: 'return await tools.search({ q: "x" })' } }] }, { text: 'done' })
  fixture.agent.followup('go')
  await fixture.agent.whenIdle()
  const [nested, outer] = fixture.results.slice(before)
  return { outer: outer!.exec.callId, nested: nested!.exec.callId }
}

describe('tool call ids', () => {
  it('gives a nested Code Mode call an id no scripted model call has, even when both have issued as many ids', async () => {
    const fixture = await createFixture()
    const probe = await modelRunsCode(fixture)
    // with a counter per source, bring the one behind level so that both would issue the same next id
    const scripted = counterOf(probe.outer)
    const host = counterOf(probe.nested)
    if (scripted !== undefined && host !== undefined && scripted < host) {
      fixture.host.scripted.push({ toolCalls: Array.from({ length: host - scripted }, () => ({ name: 'plain', arguments: {} })) }, { text: 'done' })
      fixture.agent.followup('catch up')
      await fixture.agent.whenIdle()
    }
    if (scripted !== undefined && host !== undefined && host < scripted) {
      for (let call = host; call < scripted; call++) await fixture.host.root.tools.execute({ name: 'plain', arguments: {}, agent: fixture.agent })
    }
    const { outer, nested } = await modelRunsCode(fixture)
    expect(nested).to.not.equal(outer)
    const ids = fixture.results.map(({ exec }) => exec.callId)
    expect(new Set(ids).size).to.equal(ids.length)
  })
})
