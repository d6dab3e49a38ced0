import { expect } from 'chai'
import { buildSessionTree, type SessionTreeNode } from '../../../lib/delegation/session-tree.ts'
import type { SessionHeader } from '../../../lib/types.ts'

function header(id: string, createdAt: number, parentSession?: string): SessionHeader {
  return parentSession === undefined ? { id, createdAt } : { id, createdAt, parentSession, origin: 'subagent' }
}

function shape(nodes: SessionTreeNode[]): unknown[] {
  return nodes.map((node) => (node.children.length ? { [node.header.id]: shape(node.children) } : node.header.id))
}

describe('buildSessionTree', () => {
  it('nests children under their parent in creation order', () => {
    const tree = buildSessionTree([header('b', 3, 'root'), header('root', 1), header('a', 2, 'root'), header('a1', 4, 'a')])
    expect(shape(tree)).to.deep.equal([{ root: [{ a: ['a1'] }, 'b'] }])
  })

  it('makes a child whose parent file is missing a root of its own', () => {
    expect(shape(buildSessionTree([header('orphan', 2, 'gone'), header('root', 1)]))).to.deep.equal(['root', 'orphan'])
  })

  it('keeps the first header of a duplicate id', () => {
    const tree = buildSessionTree([header('x', 1), header('x', 5, 'y'), header('y', 2)])
    expect(tree.map((node) => node.header.createdAt)).to.deep.equal([1, 2])
  })

  it('breaks a cycle of hand-edited parent links instead of dropping its members', () => {
    const tree = buildSessionTree([header('a', 1, 'b'), header('b', 2, 'a')])
    expect(shape(tree)).to.deep.equal([{ b: ['a'] }])
  })
})
