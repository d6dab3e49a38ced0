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

const placeholder = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g

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
  return template.replace(placeholder, (_match, name: string) => {
    if (!Object.hasOwn(params, name)) throw new TypeError(`text parameter "${name}" is missing`)
    return String(params[name])
  })
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
 * The text at `key` in `locale`, else in `en-US`, formatted with `params`. A key that is absent
 * from both, or names a sub-dictionary, throws `MissingTextError`.
 */
export function translate(dictionaries: Dictionaries, locale: Locale, key: string, params?: TextParams): string {
  let text = lookup(dictionaries[locale], key)
  if (typeof text !== 'string') text = lookup(dictionaries[DEFAULT_LOCALE], key)
  if (typeof text !== 'string') throw new MissingTextError(key, locale)
  return format(text, params)
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
