import { expect } from 'chai'
import { Context } from 'cordis'
import Host from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import '../support/unhandled.ts'

async function loadError(config: unknown): Promise<string | undefined> {
  const root = new Context()
  await root.plugin(Host, {} as Host.Config)
  await root.plugin(InProcessRun)
  return root.plugin(TreeBudget, config as TreeBudget.Config).then(
    () => undefined,
    (error: Error) => error.message,
  )
}

describe('TreeBudget config (SPEC §9)', () => {
  it('reads an empty config as unlimited with 16 concurrent runs per parent', () => {
    expect(TreeBudget.Config({})).to.deep.equal({ maxConcurrent: 16 })
  })

  it('rejects a negative limit naming the field', async () => {
    expect(await loadError({ maxTokens: -1 })).to.equal('invalid config:\n  - $.maxTokens expected number >= 0 but got -1 (at maxTokens)')
  })

  it('rejects a fractional limit naming the field', async () => {
    expect(await loadError({ maxChildren: 1.5 })).to.equal('invalid config:\n  - $.maxChildren expected number multiple of 1 but got 1.5 (at maxChildren)')
  })

  it('rejects a NaN limit naming the field', async () => {
    expect(await loadError({ maxModelRequests: Number.NaN })).to.equal('invalid config:\n  - $.maxModelRequests expected number multiple of 1 but got NaN (at maxModelRequests)')
  })

  it('rejects a limit beyond the safe-integer range naming the field', async () => {
    expect(await loadError({ maxTokens: 2 ** 53 })).to.equal('invalid config:\n  - $.maxTokens expected number <= 9007199254740991 but got 9007199254740992 (at maxTokens)')
  })

  it('rejects a maxConcurrent of 0, which could never start anything', async () => {
    expect(await loadError({ maxConcurrent: 0 })).to.equal('invalid config:\n  - $.maxConcurrent expected number >= 1 but got 0 (at maxConcurrent)')
  })

  it('describes every field in both locales', () => {
    const fields = TreeBudget.Config.dict!
    for (const name of ['maxConcurrent', 'maxChildren', 'maxTokens', 'maxModelRequests']) {
      expect(Object.keys(fields[name].meta.description as object), name).to.deep.equal(['en-US', 'zh-CN'])
    }
  })
})
