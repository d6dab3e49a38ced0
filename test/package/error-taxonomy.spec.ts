import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect } from 'chai'
import * as pkg from '../../index.ts'
import {
  AgentDisposedError,
  ContentFilterError,
  PeerDependencyError,
  SessionFileError,
  SessionStoreError,
  SubagentBudgetError,
  SubagentDepthError,
  SubagentError,
  TreeLeasedError,
  UnsupportedCapabilityError,
  UnsupportedSchemaError,
} from '../../index.ts'
import { DisposedError, ERROR_CODES, HookMisuseError, isErrorCode } from '../../lib/errors.ts'
import { MissingTextError } from '../../lib/text/i18n.ts'
import { ToolCallError } from '../../plugins/code-mode/errors.ts'
import { TurnCancelledError } from '../../plugins/host/agents/agent.ts'
import { CordisAssumptionError } from '../../cordis-glue/bridge.ts'
import { HostConfigError } from '../../plugins/loader/config-file.ts'
import { McpCallError } from '../../plugins/mcp-tools/errors.ts'
import { ModelRequestError } from '../../plugins/openai-model/errors.ts'
import { AgentDefinitionError } from '../../plugins/agent-definitions/errors.ts'

const root = join(import.meta.dirname, '../..')

/** Every error class of the package, built once, with the code it must carry. */
const classes: Record<string, [build: () => SubagentError, code: string]> = {
  SubagentError: [() => new SubagentError('CONFIG', 'x'), 'CONFIG'],
  SubagentDepthError: [() => new SubagentDepthError(3, 2), 'DEPTH_EXCEEDED'],
  UnsupportedSchemaError: [() => new UnsupportedSchemaError(['$ref']), 'UNSUPPORTED_SCHEMA'],
  UnsupportedCapabilityError: [() => new UnsupportedCapabilityError('outputSchema'), 'UNSUPPORTED_CAPABILITY'],
  AgentDisposedError: [() => new AgentDisposedError('a'), 'AGENT_DISPOSED'],
  SubagentBudgetError: [() => new SubagentBudgetError('children', 2, 2), 'BUDGET_EXHAUSTED'],
  DisposedError: [() => new DisposedError('the loader'), 'DISPOSED'],
  HookMisuseError: [() => new HookMisuseError('settle', 'x'), 'HOOK_MISUSE'],
  MissingTextError: [() => new MissingTextError('a.b', 'zh-CN'), 'MISSING_TEXT'],
  PeerDependencyError: [() => new PeerDependencyError('cordis', 'x'), 'PEER_DEPENDENCY'],
  ToolCallError: [() => new ToolCallError('x', 'MY_CODE'), 'TOOL_FAILED'],
  TurnCancelledError: [() => new TurnCancelledError({ kind: 'user' }), 'ABORTED'],
  HostConfigError: [() => new HostConfigError('x'), 'CONFIG'],
  ModelRequestError: [() => new ModelRequestError('x'), 'MODEL_FAILED'],
  ContentFilterError: [() => new ContentFilterError(), 'CONTENT_FILTERED'],
  SessionFileError: [() => new SessionFileError('s', 'x'), 'SESSION_FILE'],
  SessionStoreError: [() => new SessionStoreError('x'), 'SESSION_STORE'],
  TreeLeasedError: [() => new TreeLeasedError('r'), 'TREE_LEASED'],
  CordisAssumptionError: [() => new CordisAssumptionError('x'), 'PEER_DEPENDENCY'],
  McpCallError: [() => new McpCallError('MCP_TIMEOUT', 's', 'x'), 'MCP_TIMEOUT'],
  AgentDefinitionError: [() => new AgentDefinitionError('a', 'x'), 'INVALID_AGENT_DEFINITION'],
}

/**
 * Error classes outside the taxonomy, and why: an argument error is the built-in type SPEC names,
 * and a program's own error keeps the name the program gave it.
 */
const outside: Record<string, string> = {
  JsonDepthError: 'a TypeError: the value handed in is not JSON data',
  InterpreterError: "carries a run_code program's own error out, under the program's name",
}

// host-environment codes the package reads (errno, module resolution, environment variables), never puts on an error
const foreignCodes = new Set([
  'EEXIST',
  'ENOENT',
  'EMFILE',
  'ENFILE',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_MODULE_NOT_FOUND',
  'MODULE_NOT_FOUND',
  'ERR_UNKNOWN_FILE_EXTENSION',
  'OPENAI_API_KEY',
  'DEEPSEEK_API_KEY',
  // the signal that ends an MCP server process that outlived its grace period
  'SIGKILL',
  // an HTTP method (the inspector's decision route)
  'POST',
])

function productFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, dir, file))
}

const sources = ['cordis-glue', 'lib', 'plugins', 'locales'].flatMap(productFiles).map((file) => ({
  file: relative(root, file),
  text: readFileSync(file, 'utf8'),
}))

describe('error taxonomy', () => {
  it('reads the product sources it checks', () => {
    expect(sources.map((source) => source.file)).to.include.members(['lib/errors.ts', 'plugins/host/tools/pipeline.ts'])
  })

  for (const [name, [build, code]] of Object.entries(classes)) {
    it(`gives ${name} its name and the code ${code}, recognised across package copies`, () => {
      const error = build()
      expect([error.name, error.code, SubagentError.is(error), error instanceof Error]).to.deep.equal([name, code, true, true])
    })
  }

  it('lists every error class the sources declare, in the taxonomy or outside it with a reason', () => {
    const declared = sources.flatMap(({ text }) => [...text.matchAll(/\bclass (\w+) extends (\w*Error)\b/g)].map((match) => match[1]))
    expect(declared.sort()).to.deep.equal([...Object.keys(classes), ...Object.keys(outside)].sort())
  })

  it('re-exports from the root entry only errors that extend SubagentError', () => {
    const entry: Record<string, unknown> = { ...pkg }
    const errors = Object.entries(entry).filter(
      ([, value]) => typeof value === 'function' && (value as { prototype?: unknown }).prototype instanceof Error,
    )
    expect(errors.length).to.be.greaterThan(0)
    for (const [name, value] of errors) {
      expect(value === SubagentError || (value as { prototype: unknown }).prototype instanceof SubagentError, name).to.equal(true)
      expect(classes, name).to.have.property(name)
    }
  })

  it('throws no plain Error from the product sources: every fault is a named class with a code', () => {
    const plain = sources.flatMap(({ file, text }) =>
      text
        .split('\n')
        .filter((line) => /\bnew Error\(/.test(line) && !line.trimStart().startsWith('//') && !line.trimStart().startsWith('*'))
        .map((line) => `${file}: ${line.trim()}`),
    )
    expect(plain).to.deep.equal([])
  })

  it('holds each code once', () => {
    expect(new Set(ERROR_CODES).size).to.equal(ERROR_CODES.length)
  })

  it('holds every upper-case code literal of the product sources', () => {
    const unknown: string[] = []
    for (const { file, text } of sources) {
      for (const [, literal] of text.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,})'/g)) {
        if (!isErrorCode(literal) && !foreignCodes.has(literal)) unknown.push(`${file}: ${literal}`)
      }
    }
    expect(unknown).to.deep.equal([])
  })

  it('holds no code that the sources never use', () => {
    // the list itself does not count as a use
    const list = /ERROR_CODES = Object\.freeze\(\[[^\]]*\]/
    const used = new Set(sources.flatMap(({ text }) => [...text.replace(list, '').matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map((match) => match[1])))
    expect(ERROR_CODES.filter((code) => !used.has(code))).to.deep.equal([])
  })

  it('recognises a code of the taxonomy and nothing else', () => {
    expect([isErrorCode('ABORTED'), isErrorCode('aborted'), isErrorCode('NOPE'), isErrorCode(1)]).to.deep.equal([true, false, false, false])
  })
})
