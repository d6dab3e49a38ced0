/**
 * A small translator over nested dictionaries (the shape of `locales/*.yml`). Pure: the
 * dictionaries are handed in; reading the files is `locales/index.ts`'s job.
 */
import { SubagentError } from '../errors.ts'

/** The locales shipped in `locales/`. */
export const LOCALES = ['en-US', 'zh-CN'] as const

export type Locale = (typeof LOCALES)[number]

/** The canonical locale: its texts are SPEC's, and every lookup falls back to it. */
export const DEFAULT_LOCALE: Locale = 'en-US'

/** One locale file: nested mappings whose leaves are texts. */
export interface Dictionary {
  readonly [key: string]: string | Dictionary
}

export type Dictionaries = Readonly<Record<Locale, Dictionary>>

/** Values for a template's `{name}` placeholders. */
export type TextParams = Readonly<Record<string, string | number>>

/** A text key that neither the requested locale nor `en-US` defines (a programming error). */
export class MissingTextError extends SubagentError {
  override readonly name = 'MissingTextError'
  constructor(
    readonly key: string,
    readonly locale: string,
  ) {
    super('MISSING_TEXT', `missing locale text "${key}" (looked in "${locale}" and "${DEFAULT_LOCALE}")`)
  }
}

/** Splits a template at its placeholders: even indices are literal text, odd ones names. */
const placeholder = /\{([A-Za-z_][A-Za-z0-9_]*)\}/

/** True for a locale this package ships. */
export function isLocale(value: unknown): value is Locale {
  return (LOCALES as readonly unknown[]).includes(value)
}

/**
 * Replaces each `{name}` in `template` with `params[name]`. Only identifier-shaped braces are
 * placeholders, so JSON-like text such as `{a: 1}` is left alone. A placeholder without a value
 * throws `TypeError` `text parameter "<name>" is missing`.
 */
export function format(template: string, params: TextParams = {}): string {
  return fill(template.split(placeholder), params)
}

function fill(parts: readonly string[], params: TextParams): string {
  let text = parts[0]!
  for (let index = 1; index < parts.length; index += 2) {
    const name = parts[index]!
    if (!Object.hasOwn(params, name)) throw new TypeError(`text parameter "${name}" is missing`)
    text += String(params[name]) + parts[index + 1]!
  }
  return text
}

/** The entry at a dotted `key` (`a.b.c`), text or sub-dictionary; `undefined` when absent. */
export function lookup(dictionary: Dictionary, key: string): string | Dictionary | undefined {
  let node: string | Dictionary | undefined = dictionary
  for (const part of key.split('.')) {
    if (typeof node !== 'object' || !Object.hasOwn(node, part)) return undefined
    node = node[part]
  }
  return node
}

/**
 * A dictionary's texts by key, split at their placeholders, found on first use. Keys come from code
 * and the dictionaries are fixed, so the table stays as small as the set of texts; model-facing
 * texts (the delegation section, tool results) are rendered on every request.
 */
const compiledTexts = new WeakMap<Dictionaries, Partial<Record<Locale, Map<string, readonly string[] | null>>>>()

function compiledText(dictionaries: Dictionaries, locale: Locale, key: string): readonly string[] | null {
  let tables = compiledTexts.get(dictionaries)
  if (!tables) compiledTexts.set(dictionaries, (tables = {}))
  // a table per locale: the key from code is a constant string whose hash V8 keeps
  const table = (tables[locale] ??= new Map())
  let parts = table.get(key)
  if (parts === undefined) {
    let text = lookup(dictionaries[locale], key)
    if (typeof text !== 'string') text = lookup(dictionaries[DEFAULT_LOCALE], key)
    parts = typeof text === 'string' ? text.split(placeholder) : null
    table.set(key, parts)
  }
  return parts
}

/**
 * The text at `key` in `locale`, else in `en-US`, formatted with `params`. A key that is absent
 * from both, or names a sub-dictionary, throws `MissingTextError`. `dictionaries` must not change
 * once read: their texts are kept split at their placeholders.
 */
export function translate(dictionaries: Dictionaries, locale: Locale, key: string, params?: TextParams): string {
  const parts = compiledText(dictionaries, locale, key)
  if (!parts) throw new MissingTextError(key, locale)
  return fill(parts, params ?? {})
}

/** The sub-dictionary at `key` of each locale (`{}` where absent), e.g. for schemastery's `Schema.i18n`. */
export function sections(dictionaries: Dictionaries, key: string): Record<Locale, Dictionary> {
  const result = {} as Record<Locale, Dictionary>
  for (const locale of LOCALES) {
    const node = lookup(dictionaries[locale], key)
    result[locale] = typeof node === 'object' ? node : {}
  }
  return result
}

/** The dotted keys of every text in `dictionary`, sorted. */
export function textKeys(dictionary: Dictionary, prefix = ''): string[] {
  const keys: string[] = []
  for (const [name, value] of Object.entries(dictionary)) {
    const key = prefix + name
    if (typeof value === 'string') keys.push(key)
    else keys.push(...textKeys(value, `${key}.`))
  }
  return keys.sort()
}
