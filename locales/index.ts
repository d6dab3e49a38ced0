/**
 * The shipped locale files, read once at import. Every user- and model-facing text of the package
 * comes from here; `en-US.yml` is canonical (SPEC's exact strings), `zh-CN.yml` mirrors its keys.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Schema from 'schemastery'
import { parse } from 'yaml'
import {
  DEFAULT_LOCALE,
  type Dictionaries,
  type Dictionary,
  LOCALES,
  lookup,
  type Locale,
  relocalize,
  sections,
  type TextParams,
  translate,
} from '../lib/i18n.ts'

/**
 * Where `<locale>.yml` is: next to this module when it runs from source (`locales/index.ts`), or
 * in the package's `locales/` when it runs compiled (`dist/locales/index.js`).
 */
function localeFile(locale: Locale): string {
  const candidates = [new URL(`./${locale}.yml`, import.meta.url), new URL(`../../locales/${locale}.yml`, import.meta.url)]
  const found = candidates.map((url) => fileURLToPath(url)).find((path) => existsSync(path))
  if (!found) throw new Error(`locale file "${locale}.yml" not found next to ${fileURLToPath(import.meta.url)}`)
  return found
}

function assertDictionary(value: unknown, file: string, path: string): asserts value is Dictionary {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`locale file "${file}": ${path || 'the document'} must be a mapping`)
  }
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') assertDictionary(entry, file, path ? `${path}.${key}` : key)
  }
}

function readLocale(locale: Locale): Dictionary {
  const file = localeFile(locale)
  const document: unknown = parse(readFileSync(file, 'utf8'))
  assertDictionary(document, file, '')
  return document
}

/** Both locales' dictionaries, as parsed from the YAML files. */
export const dictionaries: Dictionaries = Object.freeze(
  Object.fromEntries(LOCALES.map((locale) => [locale, readLocale(locale)])) as Record<Locale, Dictionary>,
)

/** The text at `key` in `locale` (falling back to `en-US`), formatted; throws `MissingTextError`. */
export function text(locale: Locale, key: string, params?: TextParams): string {
  return translate(dictionaries, locale, key, params)
}

/** True when `en-US` (and so every locale, by fallback) has a text at `key`. */
export function hasText(key: string): boolean {
  return typeof lookup(dictionaries[DEFAULT_LOCALE], key) === 'string'
}

/** An `en-US` diagnostic (`diagnostic.*`) rendered in `locale`; other texts come back unchanged. */
export function localizeDiagnostic(diagnostic: string, locale: Locale): string {
  return relocalize(dictionaries, 'diagnostic', diagnostic, locale)
}

/**
 * Localizes a plugin's `Config` the Koishi way: the field descriptions of `config.<name>` in each
 * locale, applied with schemastery's `i18n`, so a config UI can show either language.
 */
export function localizeConfig<S, T>(schema: Schema<S, T>, name: string): Schema<S, T> {
  return schema.i18n(sections(dictionaries, `config.${name}`))
}

/**
 * The `locale` field of a plugin `Config` whose texts reach a model or a user. It has no schema
 * default, so a config without it stays as written; plugins read a missing one as `en-US`.
 */
export function localeOption(): Schema<Locale | undefined> {
  return Schema.union(LOCALES)
}

export type { Locale }
