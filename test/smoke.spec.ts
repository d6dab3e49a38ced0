import { expect } from 'chai'
import { SubagentDepthError } from '../lib/errors.ts'
describe('smoke', () => { it('builds the depth error message', () => { expect(new SubagentDepthError(2, 1).message).to.equal('subagent depth 2 exceeds maxDepth 1') }) })
