/**
 * The demo end to end: `cordis.yml` through the CLI, as `npm start` runs it, with no API key.
 */
import { expect } from 'chai'
import { chooseModel, type DemoDriver } from '../../demo/driver.ts'
import { onlyBlock, readDoc, section } from '../docs/markdown.ts'
import { type ChatServer, finishChunk, sendStream, startChatServer, textChunk } from '../openai-model/chat-server.ts'
import { type CliOutcome as Outcome, runCli } from '../support/cli.ts'

/** The captured transcript docs/watching.md shows ("The demo"). */
const captured = onlyBlock(section(readDoc('docs/watching.md'), 'The demo'), 'text')

/**
 * A transcript with its run-dependent parts replaced (ids, whole or cut short, and durations), split into
 * the parent's lines, in order, and the children's start and end lines, sorted: the children run
 * side by side, so how their streamed lines interleave is not fixed, while the parent's side is.
 */
function normalized(transcript: string): { parent: string[]; children: string[] } {
  const lines = transcript
    .replace(/\b[0-9a-f]{8}(?:-[0-9a-f]*)*…?/g, '<id>')
    .replace(/ · [\d.,]+ ms$/gm, ' · <t> ms')
    .split('\n')
    .filter((line) => line !== '')
  const child = (line: string) => /^ {2}[│┌└]/.test(line)
  return {
    parent: lines.filter((line) => !child(line)),
    children: lines.filter((line) => /^ {2}[┌└]/.test(line)).sort(),
  }
}

function runDemo(extra: string[] = []): Promise<Outcome> {
  const env = { ...process.env }
  delete env.DEEPSEEK_API_KEY
  delete env.OPENAI_API_KEY
  delete env.OPENAI_BASE_URL
  return runCli(['start', 'cordis.yml', ...extra], env)
}

describe('the demo (npm start)', function () {
  // one Node process with tsx, loading every plugin
  this.timeout(90_000)
  let outcome: Outcome

  before(async () => {
    outcome = await runDemo()
  })

  it('exits 0 with nothing on stderr', () => {
    expect([outcome.code, outcome.stderr]).to.deep.equal([0, ''])
  })

  it('names the config file it runs in the header', () => {
    expect(outcome.stdout.split('\n').slice(0, 3)).to.deep.equal([
      'subagent-inprocess demo: a parent agent delegates to in-process subagents',
      'config: cordis.yml',
      'model: scripted/demo (no DEEPSEEK_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL: replies come from demo/script.ts, token counts are estimates)',
    ])
  })

  it('runs on the scripted model without a key', () => {
    expect(outcome.stdout).to.include('model: scripted/demo (no DEEPSEEK_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL')
  })

  it('starts a spawned, a forked, a structured and a background child in one step, in model order, then the release child, then two children by definition name', () => {
    const lines = outcome.stdout.split('\n')
    expect(lines.filter((line) => line.includes('┌─ child ')).map((line) => line.split(' · ').slice(0, 2).join(' · ').trim())).to.deep.equal([
      '┌─ child "migration-note" · spawn',
      '┌─ child "changelog" · fork',
      '┌─ child "checklist" · spawn',
      '┌─ child "compat-scan" · spawn',
      '┌─ child "release" · spawn',
      '┌─ child "api-check" · spawn',
      '┌─ child "review" · spawn',
    ])
    expect(outcome.stdout).to.include('assistant  → subagent (spawn, "compat-scan", in the background): ')
    expect(outcome.stdout).to.include('assistant  → subagent (spawn, "api-check", agent "researcher"): ')
    expect(outcome.stdout).to.include('assistant  → subagent (spawn, "review", agent "reviewer"): ')
  })

  it('completes every child', () => {
    const ends = outcome.stdout
      .split('\n')
      .filter((line) => line.includes('└─ '))
      .map((line) => line.split(' · ')[0].trim())
    // the finishing order follows the children's scripted delays, not the call order: not asserted
    expect([...ends].sort()).to.deep.equal([
      '└─ "api-check" completed',
      '└─ "changelog" completed',
      '└─ "checklist" completed',
      '└─ "compat-scan" completed',
      '└─ "migration-note" completed',
      '└─ "release" completed',
      '└─ "review" completed',
    ])
  })

  it('hands the parent the foreground results in model order, the background call as its start text', () => {
    const results = outcome.stdout.split('\n').filter((line) => line.startsWith('tool       subagent '))
    expect(results).to.have.length(7)
    expect(results[0]).to.match(/^tool {7}subagent ✓ Replace every `queue\.peek\(\)` call/)
    expect(results[1]).to.match(/^tool {7}subagent ✓ ## tinyqueue 2\.0\.0/)
    expect(results[2]).to.match(/^tool {7}subagent ✓ \{"version":"2\.0\.0"/)
    expect(results[3]).to.match(/^tool {7}subagent ✓ subagent "compat-scan" started in the background as run /)
    expect(results[4]).to.match(/^tool {7}subagent ✓ Done: tinyqueue@2\.0\.0 published under "latest"/)
    // the reviewer definition's output schema: its verdict comes back as JSON
    expect(results[6]).to.equal('tool       subagent ✓ {"verdict":"approve","issues":[]}')
  })

  it("routes the release child's publish request to the CLI with the child's path, and answers it for the person (no keyboard)", () => {
    const lines = outcome.stdout.split('\n')
    const asked = lines.findIndex((line) => line.startsWith('approval needed: '))
    expect(lines[asked]).to.match(/^approval needed: child "release" · depth 1 · path root [0-9a-f]{8} › release [0-9a-f]{8}$/)
    expect(lines.slice(asked + 1, asked + 11)).to.deep.equal([
      '  tool       publish',
      '  arguments  {',
      '               "package": "tinyqueue",',
      '               "version": "2.0.0",',
      '               "tag": "latest"',
      '             }',
      '  no terminal to answer at: waiting for another answerer or the timeout',
      '(no keyboard: the demo answers "y" for the person, see README "Approvals")',
      'approved: child "release" runs publish (user)',
      '  │ tool       publish ✓ tinyqueue@2.0.0 published under "latest" (demo: nothing left this machine)',
    ])
  })

  it('delivers the background result to the parent as a message, and the parent answers it', () => {
    expect(outcome.stdout).to.match(/\nmessage {4}Background subagent "compat-scan" \(run [0-9a-f-]+\) finished:\n/)
    expect(outcome.stdout).to.match(/\nassistant {2}Compat scan is back: /)
    expect(outcome.stdout).to.match(/turn 3 completed/)
  })

  it('indents the children under the parent', () => {
    expect(outcome.stdout).to.match(/\n {2}│ task {7}Write the 2\.0\.0 changelog entry from what we discussed\.\n/)
  })

  it('prints the structured value of the checklist child', () => {
    expect(outcome.stdout).to.include('  │ structured {\n  │              "version": "2.0.0",\n  │              "breaking": true,')
  })

  it("prints the parent's side of the transcript docs/watching.md shows, ids and durations aside", () => {
    expect(normalized(outcome.stdout).parent).to.deep.equal(normalized(captured).parent)
  })

  it("starts and ends the children docs/watching.md's transcript shows, ids and durations aside", () => {
    expect(normalized(outcome.stdout).children).to.deep.equal(normalized(captured).children)
  })

  it('keeps demo/TRANSCRIPT.md showing the transcript docs/watching.md shows', () => {
    expect(onlyBlock(readDoc('demo/TRANSCRIPT.md'), 'text')).to.equal(captured)
  })

  it('ends with the summary line, showing the usage of the whole delegation tree', () => {
    expect(outcome.stdout).to.match(
      /\ndone: 7 of 7 subagents completed · tree usage [\d,]+ in \/ [\d,]+ out tokens, \d+ model requests · \d+ ms\n$/,
    )
  })
})

describe('chooseModel', () => {
  const auto: DemoDriver.Config = { provider: 'auto' }

  it('picks DeepSeek when DEEPSEEK_API_KEY is set', () => {
    const choice = chooseModel(auto, { DEEPSEEK_API_KEY: 'k', OPENAI_API_KEY: 'k' })
    expect([choice.provider, choice.model]).to.deep.equal(['deepseek', 'deepseek-chat'])
  })

  it('picks OpenAI when only OPENAI_API_KEY is set', () => {
    const choice = chooseModel(auto, { OPENAI_API_KEY: 'k' })
    expect([choice.provider, choice.model]).to.deep.equal(['openai', 'gpt-4o-mini'])
  })

  it('falls back to the scripted model without a key', () => {
    const choice = chooseModel(auto, {})
    expect([choice.provider, choice.model]).to.deep.equal(['scripted', 'demo'])
  })

  it('picks the keyless server named by OPENAI_BASE_URL, with OPENAI_MODEL, when no key is set', () => {
    const choice = chooseModel(auto, { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_MODEL: 'qwen' })
    expect([choice.provider, choice.model]).to.deep.equal(['openai', 'qwen'])
    expect(choice.note).to.equal("OPENAI_BASE_URL is http://127.0.0.1:9/v1, no key: set OPENAI_MODEL to name the server's model")
  })

  it('uses a provider and model set in the config as they are', () => {
    const choice = chooseModel({ provider: 'local', model: 'qwen' }, { DEEPSEEK_API_KEY: 'k' })
    expect([choice.provider, choice.model]).to.deep.equal(['local', 'qwen'])
  })
})

describe('the demo with --locale zh-CN', function () {
  this.timeout(90_000)

  it('recognises the background result, the release message and the definitions scene in zh-CN and ends after the seven children', async () => {
    const outcome = await runDemo(['--locale', 'zh-CN'])
    expect([outcome.code, outcome.stderr]).to.deep.equal([0, ''])
    expect(outcome.stdout.split('\n').filter((line) => line.includes('┌─ '))).to.have.length(7)
    expect(outcome.stdout).to.match(/\n完成：7 个子代理中有 7 个完成/)
    expect(outcome.stdout).to.include('\n已批准：子代理 "release" 运行 publish（user）\n')
  })
})

describe('the demo against a keyless server named by OPENAI_BASE_URL', function () {
  // one Node process with tsx, loading every plugin
  this.timeout(90_000)
  let server: ChatServer | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('talks to the server and, when its model never delegates, says why it finished with problems', async () => {
    server = await startChatServer((_request, response) => sendStream(response, [textChunk('I will do it myself.'), finishChunk('stop')]))
    const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'plain' }
    delete env.DEEPSEEK_API_KEY
    delete env.OPENAI_API_KEY
    const outcome = await runCli(['start', 'cordis.yml', '--quiet'], env)
    expect(server.requests.length).to.be.greaterThan(0)
    expect(server.requests.every((request) => request.headers.authorization === undefined)).to.equal(true)
    expect(outcome.code).to.equal(1)
    const lines = outcome.stdout.trimEnd().split('\n')
    expect(lines.at(-2)).to.match(/^finished with problems: 0 of 0 subagents completed/)
    expect(lines.at(-1)).to.equal(
      'why: the model answered without calling the subagent tool, so no subagent ran (the task asks for four calls; a model without tool calling cannot delegate)',
    )
  })
})
