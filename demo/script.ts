/**
 * The scripted model's side of the demo: one function that answers every request by looking at
 * it (who asks, which tools it has, which results came back), so the script does not depend on
 * the order in which the scripted model is called. Children answer after small delays, so the
 * four children of the fan-out overlap and finish out of order.
 */
import { textOf } from '../lib/content.ts'
import { LOCALES } from '../lib/text/i18n.ts'
import type { ModelMessage, ModelRequest } from '../lib/types.ts'
import { text } from '../locales/index.ts'
import type { ScriptedResponse } from '../plugins/scripted-model/index.ts'
import { childDefinitionsReply, parentDefinitionsReply } from './definitions-scene.ts'
import { CHECKLIST_SCHEMA } from './story.ts'

const CHECKLIST = {
  version: '2.0.0',
  breaking: true,
  steps: [
    'Set engines.node to >=18 and drop Node 16 from CI',
    'Rename peek() to top() and keep a deprecated peek() alias that warns',
    'Publish the migration note and the changelog entry',
    'Tag v2.0.0 and run npm publish',
  ],
}

/** Messages of the current turn: everything after the last user message. */
function currentTurn(messages: readonly ModelMessage[]): readonly ModelMessage[] {
  let start = messages.length
  while (start > 0 && messages[start - 1].role !== 'user') start--
  return messages.slice(start)
}

function subagentResults(messages: readonly ModelMessage[]): string[] {
  return currentTurn(messages).flatMap((message) =>
    message.role === 'tool' && message.name === 'subagent' ? [(message.isError ? 'failed: ' : '') + textOf(message.content, '')] : [],
  )
}

/** Child answer delays (ms): they overlap, and finish in another order than the parent asked. */
export const CHILD_DELAYS_MS: Readonly<Record<string, number>> = Object.freeze({
  'migration-note': 60,
  changelog: 20,
  checklist: 40,
  'compat-scan': 120,
})

/** How a background result's message starts, in every locale (`--locale` sets the tool's too). */
const DELIVERY_PREFIXES = LOCALES.map((locale) => text(locale, 'subagentTool.background.finished', { label: '', runId: '', text: '' }).split('"')[0]!)

/** The search tool of the demo's MCP server (`demo/mcp/notes-server.ts`, server `notes` in cordis.yml). */
export const NOTES_SEARCH = 'mcp__notes__search'

const COMPAT_SCAN_PROMPT = 'Find every mention of `peek()` left in README.md and docs/, and say what each should become.'

/** The approval scene (demo/release-scene.ts): the parent's last message, in every locale, and the child's task. */
const RELEASE_MESSAGES = LOCALES.map((locale) => text(locale, 'demo.release'))
const RELEASE_PROMPT = 'Publish tinyqueue 2.0.0 to npm with the `publish` tool, dist-tag latest, and report what happened.'

/** The text of the last user message, and whether a plugin (a background delivery) sent it. */
function lastUserText(messages: readonly ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return textOf(messages[i].content, '')
  return ''
}

function parentReply(request: ModelRequest): ScriptedResponse {
  const users = request.messages.filter((message) => message.role === 'user').length
  if (users < 2) {
    return { text: 'Noted: tinyqueue 2.0 drops Node 16 and renames `peek()` to `top()`. Tell me what to prepare.' }
  }
  const delivered = lastUserText(request.messages)
  if (DELIVERY_PREFIXES.some((prefix) => delivered.startsWith(prefix))) {
    const report = delivered.split('\n').slice(1).join(' ')
    return { text: `Compat scan is back: ${report} I will fix both before tagging.` }
  }
  const results = subagentResults(request.messages)
  const byName = parentDefinitionsReply(delivered, results)
  if (byName) return byName
  if (RELEASE_MESSAGES.includes(delivered)) {
    if (results.length === 0) return { toolCalls: [{ name: 'subagent', arguments: { label: 'release', prompt: RELEASE_PROMPT } }] }
    return { text: `Release: ${results[0]}` }
  }
  if (results.length === 0) {
    // one step, four calls: the host runs them side by side; the last one in the background
    return {
      toolCalls: [
        {
          name: 'subagent',
          arguments: {
            mode: 'spawn',
            label: 'migration-note',
            prompt: 'Write a two-sentence migration note for tinyqueue 2.0 users: `peek()` is renamed to `top()` with unchanged behaviour, and Node 16 is no longer supported.',
          },
        },
        { name: 'subagent', arguments: { mode: 'fork', label: 'changelog', prompt: 'Write the 2.0.0 changelog entry from what we discussed.' } },
        {
          name: 'subagent',
          arguments: { label: 'checklist', prompt: 'List the release checklist for tinyqueue 2.0.', output_schema: CHECKLIST_SCHEMA },
        },
        { name: 'subagent', arguments: { label: 'compat-scan', background: true, prompt: COMPAT_SCAN_PROMPT } },
      ],
    }
  }
  let steps = '?'
  try {
    steps = String((JSON.parse(results[2] ?? '') as { steps: unknown[] }).steps.length)
  } catch {
    // a failed run: its text is not JSON
  }
  return {
    text: [
      `Migration note: ${(results[0] ?? '').split('. ')[0]}.`,
      'Changelog: drafted by a forked subagent from our conversation.',
      `Checklist: ${steps} steps for 2.0.0, marked breaking.`,
      'Compat scan: still running in the background; it reports when done.',
    ].join('\n'),
  }
}

function childReply(request: ModelRequest): ScriptedResponse {
  const task = lastUserText(request.messages)
  const byName = childDefinitionsReply(request, task)
  if (byName) return byName
  if (request.tools?.some((tool) => tool.name === 'structured_output')) {
    return { toolCalls: [{ name: 'structured_output', arguments: CHECKLIST }], delayMs: CHILD_DELAYS_MS.checklist }
  }
  if (task === RELEASE_PROMPT) {
    const published = currentTurn(request.messages).find((message) => message.role === 'tool' && message.name === 'publish')
    if (!published) return { toolCalls: [{ name: 'publish', arguments: { package: 'tinyqueue', version: '2.0.0', tag: 'latest' } }] }
    const outcome = textOf(published.content, '')
    return { text: published.role === 'tool' && published.isError ? `Not published: ${outcome}` : `Done: ${outcome}.` }
  }
  if (task === COMPAT_SCAN_PROMPT) {
    // with the demo's MCP server loaded (cordis.yml), the scan searches its notes first
    const searched = currentTurn(request.messages).some((message) => message.role === 'tool' && message.name === NOTES_SEARCH)
    if (!searched && request.tools?.some((tool) => tool.name === NOTES_SEARCH)) {
      return { toolCalls: [{ name: NOTES_SEARCH, arguments: { query: 'peek()' } }] }
    }
    return {
      text: 'Two mentions remain: the usage example in README.md and the method list in docs/api.md; both should say `top()`.',
      delayMs: CHILD_DELAYS_MS['compat-scan'],
    }
  }
  const seedLength = request.agent.session.header.seedLength ?? 0
  if (seedLength > 0) {
    const seen = request.messages.length - 1
    return {
      text: [
        '## tinyqueue 2.0.0',
        '- Breaking: Node 16 is no longer supported; use Node 18 or later.',
        '- Breaking: `peek()` is renamed to `top()`; behaviour is unchanged.',
        `(written from the ${seen} messages of the conversation I was forked from)`,
      ].join('\n'),
      delayMs: CHILD_DELAYS_MS.changelog,
    }
  }
  return {
    text: 'Replace every `queue.peek()` call with `queue.top()`; the method behaves exactly as before. tinyqueue 2.0 also requires Node 18 or later, so upgrade Node first if you are still on 16.',
    delayMs: CHILD_DELAYS_MS['migration-note'],
  }
}

/** Roughly 4 characters per token, tool schemas included, as real models bill them. */
function estimate(text: string): number {
  return Math.ceil(text.length / 4)
}

/** The demo's answer to any request. Usage figures are estimates. */
export function demoReply(request: ModelRequest): ScriptedResponse {
  const depth = request.agent.session.header.delegationDepth ?? 0
  const reply = depth === 0 ? parentReply(request) : childReply(request)
  const input = request.system + JSON.stringify(request.messages.map((message) => message.content)) + JSON.stringify(request.tools ?? [])
  const output = (reply.text ?? '') + JSON.stringify(reply.toolCalls?.map((call) => call.arguments) ?? [])
  return { ...reply, usage: { inputTokens: estimate(input), outputTokens: estimate(output) } }
}
