import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect } from 'chai'
import { buildSessionTree, type SessionTreeNode } from '../../lib/delegation/session-tree.ts'
import type { SubagentInfo } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { parseSessionFile } from '../../plugins/session-files/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { createFilesHost, type FilesHost } from '../session-files/fixture.ts'
import { treeModel } from './model.ts'

/** label (callId) → children, from the headers only. */
/** The tree as nested names; siblings sorted by name, since concurrent `subagent` calls may start in the same millisecond. */
function outline(nodes: SessionTreeNode[]): unknown[] {
  const named = nodes.map((node) => {
    const { label = 'root', callId } = node.header
    return { name: callId === undefined ? label : `${label} (${callId})`, node }
  })
  named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return named.map(({ name, node }) => (node.children.length ? { [name]: outline(node.children) } : name))
}

describe('lineage', () => {
  let host: FilesHost

  beforeEach(async () => {
    host = await createFilesHost(undefined, {}, [InProcessRun, [SubagentTool, {} as SubagentTool.Config]])
    host.scripted.repeat(
      treeModel({
        root: { calls: [{ id: 'call_a', label: 'alpha' }, { id: 'call_b', label: 'beta' }], text: 'root done' },
        alpha: { calls: [{ id: 'call_a1', label: 'alpha-1' }], text: 'alpha done' },
        'alpha-1': { text: 'leaf' },
        beta: { text: 'beta done' },
      }),
    )
  })

  it('rebuilds the whole tree from a folder of session files alone', async () => {
    const { agent: root } = await host.create({ agentOptions: { provider: 'scripted', model: 'm' } })
    root.followup('delegate')
    await root.whenIdle()
    await host.files.flush()
    const names = (await readdir(host.dir)).filter((name) => name.endsWith('.jsonl'))
    const headers = await Promise.all(
      names.map(async (name) => parseSessionFile(name.slice(0, -'.jsonl'.length), await readFile(join(host.dir, name), 'utf8')).header),
    )
    expect(outline(buildSessionTree(headers))).to.deep.equal([
      { root: [{ 'alpha (call_a)': ['alpha-1 (call_a1)'] }, 'beta (call_b)'] },
    ])
  })

  it('carries the root id on subagent/start and subagent/end of every depth', async () => {
    const infos: SubagentInfo[] = []
    host.on('subagent/start', (info) => void infos.push(info))
    host.on('subagent/end', (info) => void infos.push(info))
    const { agent: root } = await host.create({ agentOptions: { provider: 'scripted', model: 'm' } })
    root.followup('delegate')
    await root.whenIdle()
    expect(infos).to.have.length(6)
    expect(new Set(infos.map((info) => info.rootId))).to.deep.equal(new Set([root.id]))
    expect(infos.filter((info) => info.stopReason).map((info) => `${info.label} ${info.callId}`).sort()).to.deep.equal([
      'alpha call_a',
      'alpha-1 call_a1',
      'beta call_b',
    ])
  })

  it('keeps label and callId through a resume', async () => {
    const { agent: root } = await host.create({ agentOptions: { provider: 'scripted', model: 'm' } })
    root.followup('delegate')
    await root.whenIdle()
    await host.files.flush()
    const childId = (await readdir(host.dir))
      .map((name) => name.slice(0, -'.jsonl'.length))
      .find((id) => id !== root.id && host.root.agents.get(id) === undefined)
    const resumed = await host.root.agents.resume(childId!, { agentOptions: { provider: 'scripted', model: 'm' } })
    const { label, callId } = resumed.agent.session.header
    // the pair the parent's tool call gave this child, not only a well-formed one (SPEC §10)
    expect([['alpha', 'call_a'], ['alpha-1', 'call_a1'], ['beta', 'call_b']]).to.deep.include([label, callId])
    await resumed.dispose()
  })
})
