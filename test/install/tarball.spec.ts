/**
 * The packed package as a new user gets it: `npm pack`, installed with the cordis peer into a
 * fresh project (from the local npm cache when it can), then used only as the README's "Install"
 * section says. Packed from a clean copy of the work tree, with no build run first (`prepack`
 * builds). Slow (a build and two installs): `npm run test:install`, run by `.ci/run`, not
 * part of `npm test`.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect } from 'chai'
import { sendStream, startChatServer, textChunk, finishChunk, type ChatServer } from '../openai-model/chat-server.ts'
import { installSnippets } from './readme-snippets.ts'

const run = promisify(execFile)
const repo = fileURLToPath(new URL('../../', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const snippets = installSnippets(new URL('../../README.md', import.meta.url))
const manifest = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as {
  version: string
  peerDependencies: Record<string, string>
}

interface Outcome {
  code: number
  stdout: string
  stderr: string
}

/** Runs a command in `cwd` and reports how it ended; never rejects on a non-zero exit. */
async function outcome(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 16 << 20 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failure = error as { code?: unknown; stdout?: string; stderr?: string }
    return { code: typeof failure.code === 'number' ? failure.code : -1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' }
  }
}

async function install(project: string, specs: string[]): Promise<void> {
  const result = await outcome(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', ...specs], project)
  if (result.code !== 0) throw new Error(`npm install ${specs.join(' ')} failed:\n${result.stderr}`)
}

/** `node --input-type=module -e <code>` in the project; the last line of stdout is the answer. */
function evalModule(project: string, code: string, nodeArgs: string[] = []): Promise<Outcome> {
  return outcome(process.execPath, [...nodeArgs, '--input-type=module', '-e', code], project)
}

const peer = (name: string) => `${name}@${manifest.peerDependencies[name]}`

// resolving any of these fails as if the package were not installed
const blockPeers = `
import { register } from 'node:module'
const hooks = \`
const blocked = /^(openai|pg|quickjs-emscripten|@jitl\\\\/quickjs-wasmfile-release-sync|@modelcontextprotocol\\\\/sdk)(\\\\/|$)/
export async function resolve(specifier, context, next) {
  if (!blocked.test(specifier)) return next(specifier, context)
  throw Object.assign(new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' })
}\`
register('data:text/javascript,' + encodeURIComponent(hooks))
`

/**
 * The files a clone of the work tree holds (tracked, or new and not ignored) copied to a fresh
 * folder, with the repository's installed `node_modules` linked in (a clone runs `npm ci` first;
 * linking spares that install, and `npm pack` never packs `node_modules`).
 */
async function cleanCopy(from: string): Promise<string> {
  const to = await mkdtemp(join(tmpdir(), 'subagent-inprocess-clone-'))
  const listed = await outcome('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], from)
  if (listed.code !== 0) throw new Error(`git ls-files failed:\n${listed.stderr}`)
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(from, file))) continue
    await mkdir(dirname(join(to, file)), { recursive: true })
    await copyFile(join(from, file), join(to, file))
  }
  await symlink(join(from, 'node_modules'), join(to, 'node_modules'), 'dir')
  return to
}

describe('the packed package in a fresh project', function () {
  this.timeout(300_000)
  let project: string
  let tarball: string
  const cleanup: string[] = []

  before(async () => {
    project = await mkdtemp(join(tmpdir(), 'subagent-inprocess-install-'))
    // packed from a clean copy of the work tree (what a clone holds: no dist/, nothing ignored),
    // with no build run first: `npm pack` itself must build (`prepack`)
    const clone = await cleanCopy(repo)
    cleanup.push(clone)
    expect(existsSync(join(clone, 'dist')), 'the clean copy has no dist/').to.equal(false)
    const pack = await outcome(npm, ['pack', '--json', '--pack-destination', project], clone)
    if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`)
    const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m))) as { filename: string; files: { path: string }[] }[]
    tarball = join(project, packed!.filename)
    // the entry and the CLI are in the tarball: built by `npm pack` itself
    expect(packed!.files.map((file) => file.path)).to.include.members(['dist/index.js', 'dist/bin/subagent-inprocess.js'])
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }))
    await writeFile(join(project, 'block-peers.mjs'), blockPeers)
    // what the README's first line installs, plus openai; QuickJS comes later
    await install(project, [tarball, peer('cordis'), peer('openai')])
  })

  after(async () => {
    if (project) await rm(project, { recursive: true, force: true })
    for (const folder of cleanup) await rm(folder, { recursive: true, force: true })
  })

  describe('without the optional peers', () => {
    it('imports the root entry from JS without loading openai, QuickJS or the MCP SDK', async () => {
      const result = await evalModule(
        project,
        "const m = await import('subagent-inprocess'); console.log(typeof m.Host, typeof m.OpenAIModel, typeof m.CodeMode, typeof m.McpTools)",
        ['--import', './block-peers.mjs'],
      )
      expect(result.stderr).to.equal('')
      expect(result.stdout.trim()).to.equal('function function function function')
    })

    it('refuses to start OpenAIModel without openai, naming the package and its install line', async () => {
      const result = await evalModule(
        project,
        `import { Context } from 'cordis'
         import { Host, OpenAIModel } from 'subagent-inprocess'
         const ctx = new Context()
         await ctx.plugin(Host)
         await ctx.plugin(OpenAIModel, { model: 'm' }).then(() => console.log('started'), (error) => console.log(error.name + ': ' + error.message))`,
        ['--import', './block-peers.mjs'],
      )
      expect(result.stdout.trim()).to.equal(
        'PeerDependencyError: OpenAIModel needs the optional package "openai", which is not installed: npm i openai@^6.30.1',
      )
    })

    it('refuses to start CodeMode without QuickJS, naming the package and its install line', async () => {
      const result = await evalModule(
        project,
        `import { Context } from 'cordis'
         import { Host } from 'subagent-inprocess'
         import CodeMode from 'subagent-inprocess/code-mode'
         const ctx = new Context()
         await ctx.plugin(Host)
         await ctx.plugin(CodeMode).then(() => console.log('started'), (error) => console.log(error.name + ': ' + error.message))`,
      )
      expect(result.stdout.trim()).to.equal(
        'PeerDependencyError: CodeMode needs the optional package "quickjs-emscripten", which is not installed: npm i quickjs-emscripten@^0.32.0',
      )
    })

    it('refuses require() with a message that says how to load it', async () => {
      const result = await outcome(process.execPath, ['-e', "require('subagent-inprocess')"], project)
      expect(result.code).to.equal(1)
      expect(result.stderr).to.include(
        "Error: subagent-inprocess is an ES module package and cannot be loaded with require(): use `import` (from CommonJS: `await import('subagent-inprocess')`)",
      )
    })

    it('fails at load naming the supported cordis when the host has another release', async () => {
      const cordisManifest = join(project, 'node_modules/cordis/package.json')
      const original = await readFile(cordisManifest, 'utf8')
      await writeFile(cordisManifest, original.replace('"version": "4.0.0-rc.10"', '"version": "3.18.1"'))
      try {
        const result = await evalModule(project, "await import('subagent-inprocess')")
        expect(result.code).to.equal(1)
        expect(result.stderr).to.include(
          'PeerDependencyError: subagent-inprocess supports cordis 4.0.0-rc.10 only, but the host loads cordis 3.18.1: npm i cordis@4.0.0-rc.10',
        )
      } finally {
        await writeFile(cordisManifest, original)
      }
    })

    it('installs neither tsx nor its esbuild (no install-script warning)', async () => {
      const result = await outcome(npm, ['ls', '--all', '--parseable'], project)
      expect(result.stdout).not.to.include('esbuild')
      expect(result.stdout).not.to.include('tsx')
    })
  })

  describe('with every peer installed', () => {
    let server: ChatServer

    before(async () => {
      await install(project, [peer('quickjs-emscripten'), peer('@jitl/quickjs-wasmfile-release-sync')])
      server = await startChatServer((_request, response) => sendStream(response, [textChunk('hello from the loopback'), finishChunk('stop')]))
    })

    after(async () => {
      await server?.close()
    })

    it('ships the plugin READMEs, the license and source maps with their sources, and no .ts sources', async () => {
      const pack = await outcome(npm, ['pack', '--dry-run', '--json'], repo)
      const files = (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path)
      expect(files).to.include.members(['LICENSE', 'plugins/openai-model/README.md', 'plugins/code-mode/README.md', 'locales/en-US.yml'])
      expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).to.deep.equal([])
      const map = JSON.parse(await readFile(join(project, 'node_modules/subagent-inprocess/dist/index.js.map'), 'utf8'))
      expect(map.sourcesContent).to.be.an('array').with.lengthOf(map.sources.length)
      expect(map.sourcesContent[0]).to.include("export { CodeMode } from './plugins/code-mode/index.ts'")
    })

    it('type-checks the README TypeScript example under moduleResolution Bundler', async () => {
      await writeFile(join(project, 'tsconfig.json'), snippets.get('tsconfig.json') ?? '')
      await writeFile(join(project, 'main.ts'), snippets.get('main.ts') ?? '')
      const tsc = join(repo, 'node_modules/typescript/bin/tsc')
      const result = await outcome(process.execPath, [tsc, '-p', 'tsconfig.json'], project)
      expect(result.stdout + result.stderr).to.equal('')
      expect(result.code).to.equal(0)
    })

    it('loads every plugin by package subpath from the README config and answers from a keyless loopback server', async () => {
      const config = (snippets.get('host.yml') ?? '').replace('http://127.0.0.1:11434/v1', server.baseURL)
      await writeFile(join(project, 'host.yml'), config)
      await writeFile(join(project, 'ask.mjs'), snippets.get('ask.mjs') ?? '')
      // no key anywhere: neither in the config nor in the environment
      const keyless = { OPENAI_API_KEY: undefined, DEEPSEEK_API_KEY: undefined, OPENAI_BASE_URL: undefined }
      const result = await outcome(join(project, 'node_modules/.bin/subagent-inprocess'), ['start', 'host.yml'], project, keyless)
      expect(result.stderr).not.to.match(/error|warning/)
      expect(result.stdout.trim()).to.equal('completed hello from the loopback')
      expect(result.code).to.equal(0)
      expect(server.requests).to.have.lengthOf(1)
      expect(server.requests[0]!.body.model).to.equal('llama3.2')
      expect(server.requests[0]!.headers.authorization).to.equal(undefined)
    })
  })
})
