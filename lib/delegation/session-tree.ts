/**
 * Rebuilds a delegation tree from session headers alone (SPEC §10 lineage): `parentSession` links
 * a child to its parent, `label` and `callId` say what it was and which tool call started it.
 */
import type { SessionHeader } from '../types.ts'

export interface SessionTreeNode {
  readonly header: SessionHeader
  /** Children in `createdAt` order (ties: id). */
  readonly children: SessionTreeNode[]
}

function byCreation(a: SessionTreeNode, b: SessionTreeNode): number {
  return a.header.createdAt - b.header.createdAt || (a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0)
}

/**
 * The forest the headers form. A header whose `parentSession` is not among `headers` (its
 * parent's file is missing) becomes a root, so nothing is dropped; roots and children are in
 * `createdAt` order. A duplicate id keeps the first header. Cycles (hand-edited files) cannot
 * form: a node joins its parent only when that does not make it its own ancestor.
 */
export function buildSessionTree(headers: readonly SessionHeader[]): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>()
  for (const header of headers) if (!nodes.has(header.id)) nodes.set(header.id, { header, children: [] })
  const parentOf = new Map<string, string>()
  const roots: SessionTreeNode[] = []
  for (const node of nodes.values()) {
    const parentId = node.header.parentSession
    const parent = parentId === undefined ? undefined : nodes.get(parentId)
    if (!parent || isAncestor(node.header.id, parent.header.id, parentOf)) {
      roots.push(node)
      continue
    }
    parentOf.set(node.header.id, parent.header.id)
    parent.children.push(node)
  }
  for (const node of nodes.values()) node.children.sort(byCreation)
  return roots.sort(byCreation)
}

function isAncestor(candidate: string, of: string, parentOf: ReadonlyMap<string, string>): boolean {
  for (let id: string | undefined = of; id !== undefined; id = parentOf.get(id)) if (id === candidate) return true
  return false
}
