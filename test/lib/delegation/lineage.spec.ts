import { expect } from 'chai'
import { rootIdOf } from '../../../lib/delegation/lineage.ts'
import type { Agent } from '../../../lib/types.ts'

function agent(id: string, parentSession?: string): Agent {
  return { id, session: { header: { id, createdAt: 0, ...(parentSession ? { parentSession } : {}) } } } as unknown as Agent
}

describe('rootIdOf', () => {
  const root = agent('root')
  const child = agent('child', 'root')
  const grandchild = agent('grandchild', 'child')
  const live = new Map([root, child, grandchild].map((a) => [a.id, a]))

  it('answers an agent without a parent with its own id', () => {
    expect(rootIdOf(root, (id) => live.get(id))).to.equal('root')
  })

  it('follows parent links up to the root', () => {
    expect(rootIdOf(grandchild, (id) => live.get(id))).to.equal('root')
  })

  it('answers the last parentSession seen when an ancestor is not live', () => {
    expect(rootIdOf(grandchild, (id) => (id === 'child' ? child : undefined))).to.equal('root')
    expect(rootIdOf(agent('resumed', 'gone'), () => undefined)).to.equal('gone')
  })
})
