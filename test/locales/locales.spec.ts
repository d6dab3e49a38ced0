import { expect } from 'chai'
import type { Plugin } from 'cordis'
import type Schema from 'schemastery'
import DemoDriver from '../../demo/driver.ts'
import Transcript, { TranscriptPrinter } from '../../plugins/transcript/index.ts'
import { type Dictionary, LOCALES, lookup } from '../../lib/text/i18n.ts'
import { DIAGNOSTIC_PARAM_NAMES } from '../../lib/text/diagnostic.ts'
import type { JsonSchema, SessionEventData, SessionEvent, ToolSchema } from '../../lib/types.ts'
import { dictionaries, text } from '../../locales/index.ts'
import Approvals from '../../plugins/approvals/index.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import Host from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import OpenAIModel from '../../plugins/openai-model/index.ts'
import ScriptedModel from '../../plugins/scripted-model/index.ts'
import SessionFiles from '../../plugins/session-files/index.ts'
import StructuredOutput, {
  alreadyRecorded,
  RECORDED_TEXT,
  STRUCTURED_OUTPUT_DESCRIPTION,
  STRUCTURED_OUTPUT_INSTRUCTION,
} from '../../plugins/structured-output/index.ts'
import SubagentTool, { incompleteHeadings, toolParameters, toToolResult } from '../../plugins/subagent-tool/index.ts'
import type { TestHost } from '../support/harness.ts'
import { type Scene, scene } from '../support/scene.ts'

/** Every path in `dictionary`: a text as `a.b`, a section as `a.b/`, so a text/section clash counts too. */
function walk(dictionary: Dictionary, prefix = ''): string[] {
  const paths: string[] = []
  for (const [key, value] of Object.entries(dictionary)) {
    if (typeof value === 'string') paths.push(prefix + key)
    else paths.push(`${prefix + key}/`, ...walk(value, `${prefix + key}.`))
  }
  return paths
}

function placeholders(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z_]\w*)\}/g)].map((match) => match[1]!).sort()
}

describe('locale files', () => {
  it('hold the same keys in en-US and zh-CN', () => {
    const english = new Set(walk(dictionaries['en-US']))
    const chinese = new Set(walk(dictionaries['zh-CN']))
    expect({
      'only in en-US': [...english].filter((path) => !chinese.has(path)),
      'only in zh-CN': [...chinese].filter((path) => !english.has(path)),
    }).to.deep.equal({ 'only in en-US': [], 'only in zh-CN': [] })
  })

  it('use the same placeholders for a key in every locale', () => {
    const mismatches = walk(dictionaries['en-US'])
      .filter((path) => !path.endsWith('/'))
      .filter((key) => {
        const [english, chinese] = LOCALES.map((locale) => placeholders(String(lookup(dictionaries[locale], key) ?? "")))
        return english!.join() !== chinese!.join()
      })
    expect(mismatches).to.deep.equal([])
  })

  it('hold no empty text', () => {
    const empty = LOCALES.flatMap((locale) =>
      walk(dictionaries[locale]).filter((path) => !path.endsWith('/') && !(lookup(dictionaries[locale], path) as string).trim()),
    )
    expect(empty).to.deep.equal([])
  })
})

describe('en-US texts (SPEC)', () => {
  it('pin the structured_output tool description (SPEC §3)', () => {
    expect(text('en-US', 'structuredOutput.description')).to.equal(
      "Report your final structured result. Call this exactly once, when your answer is complete; the arguments must match this tool's parameter schema exactly.",
    )
  })

  it('pin the structured_output instruction (SPEC §3)', () => {
    expect(text('en-US', 'structuredOutput.instruction')).to.equal(
      'When you have your final answer, you MUST report it by calling the `structured_output` tool with arguments matching its parameter schema exactly. Do not finish with a plain text answer: only the tool call counts as your result.',
    )
  })

  it('pin the four subagent headings of SPEC §6 and the budget one of §9', () => {
    expect(dictionaries['en-US'].subagentTool).to.have.property('heading').that.deep.equals({
      aborted: 'subagent run was cancelled',
      error: 'subagent run failed',
      'max-tokens': 'subagent run hit its token limit before finishing',
      refusal: 'subagent declined the task',
      budget: "subagent run stopped because the delegation tree's budget ran out",
    })
  })

  it('are the texts the plugins export', () => {
    expect([STRUCTURED_OUTPUT_DESCRIPTION, STRUCTURED_OUTPUT_INSTRUCTION, RECORDED_TEXT, incompleteHeadings.refusal]).to.deep.equal([
      text('en-US', 'structuredOutput.description'),
      text('en-US', 'structuredOutput.instruction'),
      text('en-US', 'structuredOutput.recorded'),
      text('en-US', 'subagentTool.heading.refusal'),
    ])
  })

  it('hold a diagnostic text for each diagnostic key, with exactly its params as placeholders', () => {
    for (const locale of LOCALES) {
      const texts = dictionaries[locale].diagnostic as Dictionary
      expect(Object.keys(texts).sort(), locale).to.deep.equal(Object.keys(DIAGNOSTIC_PARAM_NAMES).sort())
      for (const [key, names] of Object.entries(DIAGNOSTIC_PARAM_NAMES)) {
        const holes = [...String(texts[key]).matchAll(/\{(\w+)\}/g)].map((match) => match[1])
        expect(holes.sort(), `${locale} diagnostic.${key}`).to.deep.equal([...names].sort())
      }
    }
  })
})

const answerSchema: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'integer' } },
  required: ['answer'],
  additionalProperties: false,
}

interface DriverScene {
  host: Scene
  /** Runs `body` with a parent agent, then disposes it and checks invariants and the leak baseline. */
  withParent(body: (parent: Awaited<ReturnType<TestHost['agent']>>) => Promise<void>): Promise<void>
}

async function driverScene(plugins: [Plugin, unknown][]): Promise<DriverScene> {
  const host = await scene({ plugins: [InProcessRun, ...plugins], scriptUsedUp: true })
  const { invariants } = host
  return {
    host,
    async withParent(body) {
      const baseline = host.snapshot()
      const handle = await host.create()
      await body(handle.agent)
      await handle.dispose()
      invariants.check()
      expect(host.scripted.pending, 'unused script entries').to.equal(0)
      expect(host.snapshot()).to.deep.equal(baseline)
    },
  }
}

/** One structured child answering `{answer: 1}`: the child's request and its tool results. */
async function captureOnce(config: StructuredOutput.Config): Promise<{ tools: readonly ToolSchema[]; system: string; results: string[] }> {
  const { host, withParent } = await driverScene([[StructuredOutput, config]])
  let seen: { tools: readonly ToolSchema[]; system: string; results: string[] } | undefined
  await withParent(async (parent) => {
    host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { answer: 1 } }] })
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'answer', signal: new AbortController().signal, outputSchema: answerSchema })
    const result = await run.result
    expect(result.structured).to.deep.equal({ answer: 1 })
    const results = run.agent.session.events
      .filter((event: SessionEvent) => event.type === 'tool/result')
      .map((event) => ((event.data as SessionEventData['tool/result']).content[0] as { text: string }).text)
    const request = host.scripted.requests[0]!
    seen = { tools: request.tools ?? [], system: request.system, results }
    await run.dispose()
  })
  return seen!
}

describe('locale selection: StructuredOutput', () => {
  it('shows a child the capture tool description in the configured locale', async () => {
    const { tools } = await captureOnce({ locale: 'zh-CN' })
    expect(tools.map((tool) => tool.description)).to.deep.equal([text('zh-CN', 'structuredOutput.description')])
  })

  it('puts the instruction in the configured locale into the child system prompt', async () => {
    const { system } = await captureOnce({ locale: 'zh-CN' })
    expect(system).to.include(text('zh-CN', 'structuredOutput.instruction'))
    expect(system).to.not.include(STRUCTURED_OUTPUT_INSTRUCTION)
  })

  it('answers the capture in the configured locale', async () => {
    const { results } = await captureOnce({ locale: 'zh-CN' })
    expect(results).to.deep.equal(['结构化输出已记录。'])
  })

  it('keeps the SPEC text when no locale is configured', async () => {
    const { tools, system } = await captureOnce({})
    expect([tools[0]?.description, system.includes(STRUCTURED_OUTPUT_INSTRUCTION)]).to.deep.equal([STRUCTURED_OUTPUT_DESCRIPTION, true])
  })

  it('denies a call after the capture with a reason in the locale', () => {
    expect(alreadyRecorded('other', 'zh-CN')).to.equal('结构化输出已记录：运行已完成，因此不执行 `other`')
  })
})

describe('locale selection: SubagentTool', () => {
  it('shows the parent model the tool description and parameters in the configured locale', async () => {
    const { host, withParent } = await driverScene([[SubagentTool, { locale: 'zh-CN' }]])
    await withParent(async (parent) => {
      host.scripted.push({ text: 'no delegation' })
      parent.followup('hello')
      await parent.whenIdle()
    })
    expect(host.scripted.requests[0]!.tools).to.deep.equal([
      { name: 'subagent', description: text('zh-CN', 'subagentTool.description'), parameters: toolParameters('zh-CN') },
    ])
  })

  it('reports an unfinished child to the parent model in the configured locale', async () => {
    const { host, withParent } = await driverScene([[SubagentTool, { locale: 'zh-CN' }]])
    let reported: string | undefined
    await withParent(async (parent) => {
      parent.ctx.on('tools/result', (exec, result) => {
        if (exec.name === 'subagent') reported = (result.content[0] as { text: string }).text
      })
      host.scripted.push(
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'task' } }] },
        { text: 'half', finish: 'max-tokens' },
        { text: 'parent done' },
      )
      parent.followup('delegate please')
      await parent.whenIdle()
    })
    expect(reported).to.equal('Error: 子代理运行在完成前达到了 token 上限\n诊断：子代理达到了 token 上限\n运行结束前的部分输出：\nhalf')
  })

  it('localizes a diagnostic that carries the error message and code', () => {
    const result = toToolResult(
      {
        output: [],
        stopReason: 'error',
        diagnostic: 'the child turn failed: upstream 503 (MODEL_FAILED)',
        diagnosticText: { key: 'failedWithMessageAndCode', params: { message: 'upstream 503', code: 'MODEL_FAILED' } },
      },
      'zh-CN',
    )
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: 子代理运行失败\n诊断：子代理的轮次失败：upstream 503（MODEL_FAILED）' }])
  })

  it('shows a diagnostic that no locale file knows as it is', () => {
    const result = toToolResult({ output: [], stopReason: 'refusal', diagnostic: 'policy says no' }, 'zh-CN')
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: 子代理拒绝了该任务\n诊断：policy says no' }])
  })

  it('never parses an English diagnostic that comes without its key', () => {
    const result = toToolResult({ output: [], stopReason: 'max-tokens', diagnostic: 'the child hit its token limit' }, 'zh-CN')
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: 子代理运行在完成前达到了 token 上限\n诊断：the child hit its token limit' }])
  })

  it('shows the string of a listener that replaced the diagnostic but left the stale key', () => {
    const result = toToolResult(
      { output: [], stopReason: 'refusal', diagnostic: 'policy says no', diagnosticText: { key: 'blocked', params: {} } },
      'zh-CN',
    )
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: 子代理拒绝了该任务\n诊断：policy says no' }])
  })
})

describe('locale selection: demo transcript', () => {
  it('labels lines in the configured locale, aligned by display width', () => {
    const lines: string[] = []
    const printer = new TranscriptPrinter((line) => lines.push(line), { width: 100, maxLines: 3, locale: 'zh-CN' })
    const session = { id: 'p', header: { id: 'p', createdAt: 0 }, events: [], append: () => undefined } as never
    printer.event(session, { seq: 0, type: 'user/message', data: { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } })
    printer.event(session, { seq: 1, type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'ok' }] } })
    // the printer writes text as it is ready, each line ended by \n
    expect(lines).to.deep.equal(['用户       hi\n', '助手       ok\n'])
  })
})

type Described = { dict?: Record<string, { meta: { description?: unknown } }> }

const configs: [name: string, plugin: { Config: Schema }][] = [
  ['host', Host],
  ['scriptedModel', ScriptedModel],
  ['openaiModel', OpenAIModel],
  ['sessionFiles', SessionFiles],
  ['structuredOutput', StructuredOutput],
  ['subagentTool', SubagentTool],
  ['depthPolicy', DepthPolicy],
  ['approvals', Approvals],
  ['demo', DemoDriver],
  ['transcript', Transcript],
]

describe('Config descriptions (Schema.i18n)', () => {
  for (const [name, plugin] of configs) {
    it(`describe every ${name} field in both locales, from the locale files`, () => {
      const fields = (plugin.Config as Described).dict ?? {}
      const descriptions = Object.fromEntries(Object.entries(fields).map(([field, schema]) => [field, schema.meta.description]))
      const expected = Object.fromEntries(
        Object.keys(fields).map((field) => [field, Object.fromEntries(LOCALES.map((locale) => [locale, text(locale, `config.${name}.${field}`)]))]),
      )
      expect(descriptions).to.deep.equal(expected)
    })
  }
})
