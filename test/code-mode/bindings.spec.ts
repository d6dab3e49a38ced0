import { expect } from 'chai'
import type { ToolExecution } from '../../lib/types.ts'
import { bindingsFor } from '../../plugins/code-mode/tool.ts'
import type { Tools } from '../../plugins/host/index.ts'
import { deoptimize, inYoungGeneration } from '../support/heap.ts'

describe('Code Mode bindings', () => {
  // a pretenured binding would keep its run_code call's objects alive across scavenges
  it('makes each tool binding in the young generation when run_code runs as unoptimized code', () => {
    const tools = { schemas: () => [{ name: 'echo' }, { name: 'run_code' }, { name: 'read' }] } as unknown as Tools
    const exec = { agent: {}, token: Symbol('run_code'), signal: new AbortController().signal } as unknown as ToolExecution
    deoptimize(bindingsFor)
    const bindings = bindingsFor(tools, exec)
    expect(Object.keys(bindings)).to.deep.equal(['echo', 'read'])
    expect(Object.values(bindings).map((binding) => inYoungGeneration(binding))).to.deep.equal([true, true])
  })
})
