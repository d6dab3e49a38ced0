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
  sections,
  type TextParams,
  translate,
} from '../lib/text/i18n.ts'
import { boundDiagnostic, type Diagnostic } from '../lib/text/diagnostic.ts'
import { SubagentError } from '../lib/errors.ts'
import type { SubagentResult } from '../lib/types.ts'

/**
 * Where `<locale>.yml` is: next to this module when it runs from source (`locales/index.ts`), or
 * in the package's `locales/` when it runs compiled (`dist/locales/index.js`).
 */
function localeFile(locale: Locale): string {
  const candidates = [new URL(`./${locale}.yml`, import.meta.url), new URL(`../../locales/${locale}.yml`, import.meta.url)]
  const found = candidates.map((url) => fileURLToPath(url)).find((path) => existsSync(path))
  if (!found) throw new SubagentError('LOCALE_FILE', `locale file "${locale}.yml" not found next to ${fileURLToPath(import.meta.url)}`)
  return found
}

function assertDictionary(value: unknown, file: string, path: string): asserts value is Dictionary {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SubagentError('LOCALE_FILE', `locale file "${file}": ${path || 'the document'} must be a mapping`)
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

/** `diagnostic` as text in `locale` (`diagnostic.<key>`), cut to `DIAGNOSTIC_MAX_BYTES` UTF-8 bytes. */
export function renderDiagnostic(diagnostic: Diagnostic, locale: Locale): string {
  return boundDiagnostic(translate(dictionaries, locale, `diagnostic.${diagnostic.key}`, diagnostic.params))
}

/** `diagnostic` in `en-US`: the text of `SubagentResult.diagnostic` (SPEC §2.4 pins these texts). */
export function englishDiagnostic(diagnostic: Diagnostic): string {
  return renderDiagnostic(diagnostic, DEFAULT_LOCALE)
}

/**
 * A result's diagnostic as a reader in `locale` sees it; `undefined` when it has none. Rendered
 * from `diagnosticText` when that still says what `diagnostic` says; a listener that replaced
 * only the string (a text this package does not know) gets its string shown as it is.
 */
export function diagnosticIn(result: Pick<SubagentResult, 'diagnostic' | 'diagnosticText'>, locale: Locale): string | undefined {
  const { diagnostic, diagnosticText } = result
  if (diagnostic === undefined || diagnosticText === undefined || locale === DEFAULT_LOCALE) return diagnostic
  return englishDiagnostic(diagnosticText) === diagnostic ? renderDiagnostic(diagnosticText, locale) : diagnostic
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
