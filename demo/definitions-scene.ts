/**
 * The demo's agent definitions scene (SPEC §12): after the release work, the parent delegates by
 * name to two definitions of `agents/` — a researcher that only answers, and a reviewer that must
 * return a structured verdict. This file holds the scene's scripted side; the driver sends its
 * message when both definitions are loaded.
 */
import { LOCALES } from '../lib/text/i18n.ts'
import type { ModelRequest, SubagentCatalogEntry } from '../lib/types.ts'
import { type Locale, text } from '../locales/index.ts'
import type { ScriptedResponse } from '../plugins/scripted-model/index.ts'

/** The definitions the scene names (`agents/researcher.md`, `agents/reviewer.md`). */
export const SCENE_DEFINITIONS = ['researcher', 'reviewer'] as const

export const RESEARCH_PROMPT =
  'tinyqueue 2.0 renames `peek()` to `top()` and drops Node 16. Does anything else in 2.0 change what users call or install? Say what you could not confirm.'

export const REVIEW_PROMPT = [
  'Review this migration note for tinyqueue 2.0 users.',
  'Facts: `peek()` is renamed to `top()` with unchanged behaviour; Node 16 is no longer supported (Node 18 or later).',
  'Note: "Replace every `queue.peek()` call with `queue.top()`; the method behaves exactly as before. tinyqueue 2.0 also requires Node 18 or later, so upgrade Node first if you are still on 16."',
].join('\n')

const VERDICT = { verdict: 'approve', issues: [] as string[] }

/** The scene's user message in `locale`. */
export function definitionsMessage(locale: Locale): string {
  return text(locale, 'demo.definitions')
}

/** True when `catalog` offers every definition the scene names. */
export function canPlayDefinitionsScene(catalog: readonly SubagentCatalogEntry[]): boolean {
  return SCENE_DEFINITIONS.every((name) => catalog.some((entry) => entry.name === name))
}

const MESSAGES = LOCALES.map((locale) => definitionsMessage(locale))

/**
 * The scripted parent's answer to the scene's message, or `undefined` for any other turn: first the
 * two delegations by name (one step, so they run side by side), then a short summary of their results.
 */
export function parentDefinitionsReply(lastUserText: string, results: readonly string[]): ScriptedResponse | undefined {
  if (!MESSAGES.includes(lastUserText)) return undefined
  if (results.length === 0) {
    return {
      toolCalls: [
        { name: 'subagent', arguments: { agent: 'researcher', label: 'api-check', prompt: RESEARCH_PROMPT } },
        { name: 'subagent', arguments: { agent: 'reviewer', label: 'review', prompt: REVIEW_PROMPT } },
      ],
    }
  }
  let verdict = '?'
  try {
    const parsed = JSON.parse(results[1] ?? '') as { verdict: string; issues: string[] }
    verdict = `${parsed.verdict} (${parsed.issues.length} issues)`
  } catch {
    // a failed review: its text is not JSON
  }
  return { text: `Researcher: ${(results[0] ?? '').split('. ')[0]}.\nReviewer: ${verdict}. Ready to tag 2.0.0.` }
}

/** A scene child's answer, or `undefined` for a child of another scene. */
export function childDefinitionsReply(request: ModelRequest, task: string): ScriptedResponse | undefined {
  if (task === RESEARCH_PROMPT) {
    return {
      text: 'Nothing else changes what users call: the 2.0 diff only renames `peek()` and raises engines.node to >=18. I could not confirm whether the docs site lists `peek()` anywhere.',
      delayMs: 30,
    }
  }
  if (task === REVIEW_PROMPT && request.tools?.some((tool) => tool.name === 'structured_output')) {
    return { toolCalls: [{ name: 'structured_output', arguments: VERDICT }], delayMs: 50 }
  }
  return undefined
}
