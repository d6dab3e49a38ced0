/**
 * What the demo asks: the same two user messages go to the scripted model and to a real one.
 * The texts are `demo.persona`, `demo.context` and `demo.task` in `locales/*.yml`.
 */
import type { JsonSchema } from '../lib/types.ts'
import { type Locale, text } from '../locales/index.ts'

export interface Story {
  /** Global system prompt of the demo (parent and children alike). */
  persona: string
  /** Turn 1: context that a forked child will see and a spawned one will not. */
  context: string
  /** Turn 2: the delegation task. */
  task: string
}

/** The demo's texts in `locale`. */
export function story(locale: Locale): Story {
  return { persona: text(locale, 'demo.persona'), context: text(locale, 'demo.context'), task: text(locale, 'demo.task') }
}

/** The schema the third child answers with (the scripted parent sends this one). */
export const CHECKLIST_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    version: { type: 'string' },
    breaking: { type: 'boolean' },
    steps: { type: 'array', items: { type: 'string' } },
  },
  required: ['version', 'breaking', 'steps'],
  additionalProperties: false,
}
