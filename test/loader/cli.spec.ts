/**
 * The `subagent-inprocess` command, run as a child process (tsx, as `npm start` runs it).
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { expect } from 'chai'
import { parseSessionFile } from '../../plugins/session-files/index.ts'
import { type ChatServer, finishChunk, sendStream, startChatServer, textChunk } from '../openai-model/chat-server.ts'
import { projectRoot, runCli } from '../support/cli.ts'
import { probeSource, type Workspace, workspace } from './fixture.ts'

describe('subagent-inprocess start', function () {
  // each case starts a Node process with tsx
  this.timeout(60_000)
  let space: Workspace

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('starts no plugin of a config with a rejected entry, wherever it is listed, and exits with 1', async () => {
    space.write('probe.ts', probeSource('v1'))
    const marker = join(space.dir, 'started')
    space.write('marks.ts', `import { writeFileSync } from 'node:fs'\nexport default function Marks() { writeFileSync(${JSON.stringify(marker)}, 'yes') }\n`)
    space.write('cordis.yml', 'plugins:\n  marks: { path: ./marks.ts }\n  bad: { path: ./probe.ts, config: { count: -1 } }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.equal(
      'error [loader] plugin "bad": count: expected number >= 0 but got -1\n' +
        '1 failed at start; nothing was started (run with --watch to start the rest and fix it live)\n',
    )
    expect(existsSync(marker)).to.equal(false)
  })

  it('exits with 1 naming the missing service when no plugin of the config provides what an entry needs', async () => {
    space.write('needs.ts', 'export default function Needs() {}\nNeeds.inject = ["inprocessRun"]\n')
    space.write('cordis.yml', 'plugins:\n  needs: { path: ./needs.ts }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.equal(
      'warning [loader] plugin "needs": waiting for "inprocessRun", which no loaded plugin provides\n' +
        'plugin "needs" needs "inprocessRun", which no plugin of the config provides; stopping (add the plugin that provides it to the config)\n',
    )
  })

  it('names a missing optional package in one line, with no stack trace, when OpenAIModel cannot start', async () => {
    const blocker = join(space.dir, 'block-openai.mjs')
    space.write(
      'block-openai.mjs',
      `import { register } from 'node:module'
const hooks = \`export async function resolve(specifier, context, next) {
  if (!/^openai(\\\\/|$)/.test(specifier)) return next(specifier, context)
  throw Object.assign(new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' })
}\`
register('data:text/javascript,' + encodeURIComponent(hooks))
`,
    )
    const host = join(projectRoot, 'plugins/host/index.ts')
    const model = join(projectRoot, 'plugins/openai-model/index.ts')
    space.write(
      'cordis.yml',
      `plugins:\n  host: { path: ${JSON.stringify(host)} }\n  openai: { path: ${JSON.stringify(model)}, config: { provider: openai, model: m } }\n`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', blocker, 'bin/subagent-inprocess.ts', 'start', space.configFile], {
      cwd: projectRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const [code] = await once(child, 'close')
    const fix = 'OpenAIModel needs the optional package "openai", which is not installed: npm i openai@^6.30.1'
    expect(code).to.equal(1)
    expect(stderr).to.equal(
      `error [open-ai-model] PeerDependencyError: ${fix}\n` +
        `error [loader] plugin "openai": failed to apply: ${fix}\n` +
        '1 failed at start; stopping (run with --watch to keep the rest running and fix it live)\n',
    )
  })

  it('exits with the code a plugin asks for when every entry started', async () => {
    space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
    space.write('cordis.yml', 'plugins:\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(3)
    expect(outcome.stderr).to.equal('')
  })

  it('serves the inspector on 127.0.0.1 with --inspect and says where', async () => {
    space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
    space.write('cordis.yml', 'plugins:\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile, '--inspect'])
    expect(outcome.code).to.equal(3)
    expect(outcome.stderr).to.match(/^inspector: http:\/\/127\.0\.0\.1:\d+\/\n$/)
  })

  it('exits with 1 when an entry failed at start, even if a plugin then asks to exit with 0', async () => {
    space.write('probe.ts', probeSource('v1'))
    space.write('quit.ts', probeSource('v1', { emitExit: 0 }))
    space.write('cordis.yml', 'plugins:\n  bad: { path: ./probe.ts, config: { count: -1 } }\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(1)
  })

  it('stops with exit 1 and says why when an entry fails at start and nothing asks to exit', async () => {
    space.write('probe.ts', probeSource('v1'))
    space.write('cordis.yml', 'plugins:\n  bad: { path: ./probe.ts, config: { maxcount: 2 } }\n  good: { path: ./probe.ts }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.equal(
      'error [loader] plugin "bad": unknown key "maxcount" (valid keys: name, greeting, count)\n' +
        '1 failed at start; nothing was started (run with --watch to start the rest and fix it live)\n',
    )
  })

  it('gives the plugins the locale chosen with --locale', async () => {
    const schemastery = import.meta.resolve('schemastery')
    space.write(
      'said.ts',
      `import Schema from ${JSON.stringify(schemastery)}
export default function Said(ctx: any, config: any) { ctx.emit('loader/exit', config.locale === 'zh-CN' ? 5 : 6) }
Said.Config = Schema.object({ locale: Schema.string() })
`,
    )
    space.write('cordis.yml', 'plugins:\n  said: { path: ./said.ts }\n')
    const outcome = await runCli(['start', space.configFile, '--locale', 'zh-CN'])
    expect(outcome.code).to.equal(5)
  })

  it('prints the usage with the reason when start is given a second config file', async () => {
    const outcome = await runCli(['start', 'cordis.yml', 'my.yml'])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(
      /^unexpected argument "my\.yml": "start" takes one config file and already has "cordis\.yml" \(npm start passes cordis\.yml; run "npx tsx bin\/subagent-inprocess\.ts start my\.yml"\)\n\nusage: /,
    )
  })

  it('prints the usage with the reason when no command is given', async () => {
    const outcome = await runCli([])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^missing command \("start", "inspect", "resume" or "check"\)\n\nusage: /)
  })

  it('keeps running with --watch after an entry fails at start, until it is stopped', async () => {
    space.write('probe.ts', probeSource('v1'))
    space.write('cordis.yml', 'plugins:\n  bad: { path: ./probe.ts, config: { count: -1 } }\n  good: { path: ./probe.ts }\n')
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', 'start', space.configFile, '--watch'], {
      cwd: projectRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    const closed = once(child, 'close')
    // stopped only once it says it is watching: a host that gave up would have closed by then
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk
        if (stderr.includes('watching ')) resolve()
      })
      child.on('close', () => resolve())
    })
    child.kill('SIGTERM')
    const [code] = await closed
    expect(code).to.equal(143)
    expect(stderr).to.equal(
      `error [loader] plugin "bad": count: expected number >= 0 but got -1\nwatching ${space.configFile} and its plugin files\n`,
    )
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

describe('subagent-inprocess start with a local model server', function () {
  this.timeout(60_000)
  let space: Workspace
  let server: ChatServer | undefined

  beforeEach(() => {
    space = workspace()
  })

  afterEach(async () => {
    await server?.close()
    server = undefined
    await space.cleanup()
  })

  it('completes a turn against a keyless server named only in the config, sending no Authorization header', async () => {
    server = await startChatServer((_request, response) => sendStream(response, [textChunk('local answer'), finishChunk('stop')]))
    const root = new URL('../../', import.meta.url).pathname
    // prints the answer and exits 0 when the turn completed, 1 otherwise
    space.write(
      'ask.ts',
      `import type { Context } from 'cordis'
export const inject = ['agents']
export function apply(ctx: Context) {
  void (async () => {
    const { agent } = await ctx.agents.create({ agentOptions: { provider: 'local', model: 'llama3.2' } })
    agent.followup('hello')
    await agent.whenIdle()
    const ends = agent.session.events.filter((event) => event.type === 'turn/end')
    const messages = agent.session.events.filter((event) => event.type === 'assistant/message')
    process.stdout.write(JSON.stringify((messages.at(-1)?.data as any)?.content) + '\\n')
    ctx.emit('loader/exit', (ends.at(-1)?.data as any)?.reason.kind === 'completed' ? 0 : 1)
  })()
}
`,
    )
    space.write(
      'cordis.yml',
      `plugins:
  host: { path: ${root}plugins/host/index.ts }
  local: { path: ${root}plugins/openai-model/index.ts, config: { provider: local, baseURL: "${server.baseURL}" } }
  ask: { path: ./ask.ts }
`,
    )
    const env = { ...process.env }
    delete env.OPENAI_API_KEY
    delete env.OPENAI_BASE_URL
    const outcome = await runCli(['start', space.configFile], env)
    expect([outcome.code, outcome.stdout, outcome.stderr]).to.deep.equal([0, '[{"type":"text","text":"local answer"}]\n', ''])
    expect(server.requests[0]!.headers).not.to.have.property('authorization')
    expect(server.requests[0]!.body.model).to.equal('llama3.2')
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
    expect(outcome.stdout).to.match(/^done: 7 of 7 subagents completed · tree usage [\d,]+ in \/ [\d,]+ out tokens, \d+ model requests · \d+ ms\n$/)
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

describe('subagent-inprocess start with a closed stdout', function () {
  this.timeout(60_000)
  let space: Workspace

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('stops the host with exit 141 and no stack trace when its reader goes away mid-stream, keeping the session file whole', async () => {
    const root = new URL('../../', import.meta.url).pathname
    // an agent that answers in a stream of text turn after turn: the transcript writes to stdout
    // until the process ends (one endless message would not do: the transcript shows 14 lines of it)
    space.write(
      'forever.ts',
      `import type { Context } from 'cordis'
import type { ModelRequest, StreamPart } from '${root}lib/types.ts'
export default function Forever(ctx: Context) {
  ctx.models.register('forever', {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      for (let i = 0; i < 40; i++) {
        yield { type: 'text-delta', text: 'tick ' }
        await new Promise((resolve) => setImmediate(resolve))
      }
      yield { type: 'finish', reason: 'stop' }
    },
  })
  void ctx.agents.create({ sessionId: 'streamer', agentOptions: { provider: 'forever', model: 'm' } }).then(({ agent }) => {
    ctx.on('session/event', (session, event) => {
      if (session !== agent.session || event.type !== 'turn/end') return
      try {
        agent.followup('again')
      } catch {
        // disposed with the plugin
      }
    })
    agent.followup('go')
  })
}
Forever.inject = ['agents', 'models']
`,
    )
    space.write(
      'cordis.yml',
      `plugins:
  host: { path: ${root}plugins/host/index.ts }
  session-files: { path: ${root}plugins/session-files/index.ts, config: { dir: ${JSON.stringify(join(space.dir, "sessions"))} } }
  transcript: { path: ${root}plugins/transcript/index.ts }
  forever: { path: ./forever.ts }
`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', 'start', space.configFile], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    // the reader goes away after the first streamed text, as `| head -c 1` would
    child.stdout.once('data', () => child.stdout.destroy())
    const [code] = (await once(child, 'close')) as [number | null]
    expect([code, stderr]).to.deep.equal([141, ''])
    // the entries were unloaded: the file is whole, every turn it started has ended
    const { events, isTorn } = parseSessionFile('streamer', readFileSync(join(space.dir, 'sessions', 'streamer.jsonl'), 'utf8'))
    expect(isTorn).to.equal(false)
    const starts = events.filter((event) => event.type === 'turn/start').length
    expect(starts).to.be.greaterThan(0)
    expect(events.filter((event) => event.type === 'turn/end').length).to.equal(starts)
    expect(events.at(-1)?.type).to.equal('turn/end')
  })
})
