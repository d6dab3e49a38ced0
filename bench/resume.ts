/**
 * Whole-tree resume with `SessionFiles` (SPEC §14): how long `resumeTree` takes to publish a stored
 * tree of one root, `width` children and `width × depth2` grandchildren (each with one finished turn),
 * beside resuming the same agents one by one with `agents.resume` (owner given, no tree walk). Each
 * round resumes a fresh copy of the folder in a fresh host; the copy is not timed. Prints one JSON line.
 * Run: `npm run bench:resume` (`--quick` scales the counts down).
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import type { Agent } from '../lib/types.ts'
import { Host } from '../plugins/host/index.ts'
import { InProcessRun } from '../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'
import { SessionFiles } from '../plugins/session-files/index.ts'
import { printSummary, runBenchmark } from './report.ts'
import { median } from './stats.ts'

const quick = process.argv.includes('--quick')
const width = quick ? 10 : 50
const perChild = 2
const rounds = quick ? 3 : 9
const options = { agentOptions: { provider: 'scripted', model: 'bench' } }


async function host(dir: string): Promise<Context> {
  const root = new Context()
  await root.plugin(Host, { maxSteps: 8 })
  await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
  await root.plugin(SessionFiles, { dir })
  await root.plugin(InProcessRun)
  root.scripted.repeat({ text: 'ok', usage: { inputTokens: 16, outputTokens: 1 } })
  return root
}

/** The stored tree: parents first. */
async function buildTree(dir: string): Promise<{ rootId: string; order: { id: string; parent?: string }[] }> {
  const root = await host(dir)
  const turn = async (agent: Agent) => {
    agent.followup('go')
    await agent.whenIdle()
  }
  const top = (await root.agents.create(options)).agent
  await turn(top)
  const order: { id: string; parent?: string }[] = [{ id: top.id }]
  for (let i = 0; i < width; i++) {
    const child = (await root.agents.create({ ...options, owner: top, header: { parentSession: top.id, origin: 'subagent', delegationDepth: 1 } })).agent
    await turn(child)
    order.push({ id: child.id, parent: top.id })
    for (let j = 0; j < perChild; j++) {
      const header = { parentSession: child.id, origin: 'subagent' as const, delegationDepth: 2 }
      const grandchild = (await root.agents.create({ ...options, owner: child, header })).agent
      await turn(grandchild)
      order.push({ id: grandchild.id, parent: child.id })
    }
  }
  await root.sessionFiles.flush()
  // left as a crash leaves it: nothing disposed, so nothing is recorded disposed
  return { rootId: top.id, order }
}

async function main(): Promise<void> {
  const started = performance.now()
  const source = await mkdtemp(join(tmpdir(), 'bench-resume-'))
  try {
    const { rootId, order } = await buildTree(source)
    const tree: number[] = []
    const single: number[] = []
    for (let round = 0; round <= rounds; round++) {
      for (const kind of round % 2 ? (['single', 'tree'] as const) : (['tree', 'single'] as const)) {
        const dir = `${source}-${round}-${kind}`
        await cp(source, dir, { recursive: true })
        const root = await host(dir)
        const t0 = performance.now()
        if (kind === 'tree') {
          await root.inprocessRun.resumeTree(rootId)
        } else {
          const agents = new Map<string, Agent>()
          for (const { id, parent } of order) {
            const owner = parent === undefined ? undefined : agents.get(parent)
            agents.set(id, (await root.agents.resume(id, owner ? { owner } : {})).agent)
          }
        }
        const ms = performance.now() - t0
        // the first round warms up
        if (round > 0) (kind === 'tree' ? tree : single).push(ms)
        await root.sessionFiles.flush()
        await rm(dir, { recursive: true, force: true })
      }
    }
    printSummary(
      {
        agents: order.length,
        rounds,
        resume_tree_ms_p50: Math.round(median(tree) * 10) / 10,
        resume_each_ms_p50: Math.round(median(single) * 10) / 10,
        resume_tree_us_per_agent: Math.round((median(tree) * 1000) / order.length),
        tree_vs_each: Math.round((median(tree) / median(single)) * 100) / 100,
      },
      started,
      quick,
    )
  } finally {
    await rm(source, { recursive: true, force: true })
  }
  process.exit(0)
}

runBenchmark(main)
