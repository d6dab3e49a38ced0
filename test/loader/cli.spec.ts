/**
 * The `subagent-inprocess` command, run as a child process (tsx, as `npm start` runs it).
 */
import { expect } from 'chai'
import { runCli } from '../support/cli.ts'
import { probeSource, type Workspace, workspace } from './fixture.ts'

describe('subagent-inprocess start', function () {
  // each case starts a Node process with tsx
  this.timeout(60_000)
  let space: Workspace

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('prints a rejected entry config to stderr, loads the rest and exits with the code a plugin asks for', async () => {
    space.write('probe.ts', probeSource('v1'))
    space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
    space.write('cordis.yml', 'plugins:\n  bad: { path: ./probe.ts, config: { count: -1 } }\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(3)
    expect(outcome.stderr).to.equal('error [loader] plugin "bad": count: expected number >= 0 but got -1\n')
  })

  it('serves the inspector on 127.0.0.1 with --inspect and says where', async () => {
    space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
    space.write('cordis.yml', 'plugins:\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile, '--inspect'])
    expect(outcome.code).to.equal(3)
    expect(outcome.stderr).to.match(/^inspector: http:\/\/127\.0\.0\.1:\d+\/\n$/)
  })

  it('exits with 1 when the config file cannot be read', async () => {
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.match(/^error \[loader\] cannot read host config ".*cordis\.yml": ENOENT/)
  })

  it('prints the usage and exits with 2 for an unknown command', async () => {
    const outcome = await runCli(['serve'])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^unknown command "serve"\n\nusage: subagent-inprocess start \[config\] \[--watch\]/)
  })

  it('prints its help in the locale chosen with --locale', async () => {
    const outcome = await runCli(['--locale', 'zh-CN', '--help'])
    expect(outcome.code).to.equal(0)
    expect(outcome.stdout).to.match(/^用法：subagent-inprocess start/)
  })

  it('rejects a locale it does not ship with exit code 2', async () => {
    const outcome = await runCli(['start', '--locale', 'fr-FR'])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^unknown locale "fr-FR" \(en-US or zh-CN\)/)
  })
})

describe('subagent-inprocess start with background subagents', function () {
  this.timeout(60_000)
  let space: Workspace

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('waits for a pending background subagent to deliver before it exits', async () => {
    const root = new URL('../../', import.meta.url).pathname
    // the child answers after a short timer, so it is still pending when the plugin asks to exit
    space.write(
      'background.ts',
      `import type { Context } from 'cordis'
import type { ModelRequest, StreamPart } from '${root}lib/types.ts'
export default function BackgroundProbe(ctx: Context) {
  ctx.models.register('probe', {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      const isChild = (request.agent.session.header.delegationDepth ?? 0) > 0
      if (isChild) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        yield { type: 'text-delta', text: 'slow done' }
      } else if (request.messages.length === 1) {
        yield { type: 'tool-call', id: 'call_bg', name: 'subagent', arguments: JSON.stringify({ prompt: 'slow task', label: 'late', background: true }) }
      } else {
        yield { type: 'text-delta', text: 'ok' }
      }
      yield { type: 'finish', reason: 'stop' }
    },
  })
  ctx.on('session/event', (session, event) => {
    const data = event.data as { source?: { kind: string }; content?: { text: string }[] }
    if (event.type === 'user/message' && data.source?.kind === 'plugin') process.stdout.write('delivered: ' + data.content![0].text + '\\n')
  })
  void (async () => {
    const { agent } = await ctx.agents.create({ agentOptions: { provider: 'probe', model: 'probe' } })
    agent.followup('start it')
    await agent.whenIdle()
    process.stdout.write('pending: ' + ctx.subagentTool.pending(agent).map((run) => run.label).join(',') + '\\n')
    ctx.emit('loader/exit', 0)
  })()
}
BackgroundProbe.inject = ['agents', 'models', 'subagentTool']
`,
    )
    space.write(
      'cordis.yml',
      `plugins:
  host: { path: ${root}plugins/host/index.ts }
  inprocess-run: { path: ${root}plugins/inprocess-run/index.ts }
  subagent-tool: { path: ${root}plugins/subagent-tool/index.ts }
  probe: { path: ./background.ts }
`,
    )
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.stderr).to.equal('')
    expect(outcome.code).to.equal(0)
    expect(outcome.stdout).to.match(/^pending: late\ndelivered: Background subagent "late" \(run [0-9a-f-]+\) finished:\nslow done\n$/)
  })
})

describe('subagent-inprocess start --quiet / --verbose (the demo config)', function () {
  // each case starts a Node process with tsx, loading every plugin of the demo
  this.timeout(90_000)
  const env = { ...process.env }
  delete env.DEEPSEEK_API_KEY
  delete env.OPENAI_API_KEY

  it('prints only the final summary with --quiet', async () => {
    const outcome = await runCli(['start', 'cordis.yml', '--quiet'], env)
    expect([outcome.code, outcome.stderr]).to.deep.equal([0, ''])
    expect(outcome.stdout).to.match(/^done: 4 of 4 subagents completed · tree usage [\d,]+ in \/ [\d,]+ out tokens, \d+ model requests · \d+ ms\n$/)
  })

  it('adds a line per subagent hook and turn start with --verbose', async () => {
    const outcome = await runCli(['start', 'cordis.yml', '--verbose'], env)
    expect(outcome.code).to.equal(0)
    expect(outcome.stdout).to.match(/\n {2}│ hook {7}subagent\/start run [0-9a-f]{8} · parent [0-9a-f]{8} · root [0-9a-f]{8}\n/)
    expect(outcome.stdout).to.match(/\n {2}│ hook {7}(\[[\w-]+\] )?subagent\/end run [0-9a-f]{8} · completed\n/)
    expect(outcome.stdout).to.match(/\nhook {7}turn\/start 1 \(message\)\n/)
  })

  it('rejects --verbose with --quiet with exit code 2', async () => {
    const outcome = await runCli(['start', 'cordis.yml', '--verbose', '--quiet'], env)
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^--verbose and --quiet cannot be used together\n\nusage: /)
  })
})
