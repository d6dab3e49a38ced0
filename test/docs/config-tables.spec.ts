/**
 * Each plugin README's config documentation against the plugin's schemastery `Config`: the
 * "## Config" table lists exactly the schema's keys, with the schema's default where it has one; a
 * README without such a table still names every key.
 */
import { readdirSync } from 'node:fs'
import { expect } from 'chai'
import type Schema from 'schemastery'
import { readDoc, section, tableRows } from './markdown.ts'

interface PluginModule {
  default: { Config?: Schema }
}

const folders = readdirSync(new URL('../../plugins/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)

/** The plugin's config keys with their schema default (`undefined` when it has none). */
async function configOf(folder: string): Promise<Map<string, unknown> | undefined> {
  const { default: plugin } = (await import(`../../plugins/${folder}/index.ts`)) as PluginModule
  const dict = plugin?.Config?.dict as Record<string, Schema> | undefined
  if (!dict) return undefined
  return new Map(Object.entries(dict).map(([key, schema]) => [key, schema.meta.default]))
}

/**
 * The "## Config" table's default cells by field name (empty for a section without a table, e.g.
 * "None."), or `undefined` when the README has no such section.
 */
function documented(readme: string): Map<string, string> | undefined {
  if (!/^## Config$/m.test(readme)) return undefined
  const rows = tableRows(section(readme, 'Config'))
  return new Map(rows.map((row) => [/^`(\w+)`$/.exec(row.field ?? '')?.[1] ?? row.field ?? '', row.default ?? '']))
}

/**
 * The value a default cell states: its first code span, or else its first word (`33554432` (32 MiB)
 * → 33554432, `'openai'` → openai, 16 → 16), without quotes around it.
 */
function documentedDefault(cell: string): string {
  const value = /`([^`]*)`/.exec(cell)?.[1] ?? cell.trim().split(/\s+/)[0] ?? ''
  return /^(['"]).*\1$/.test(value) ? value.slice(1, -1) : value
}

/** A schema default as a README cell shows it: a list or object as JSON (`[]`), anything else as text. */
function shownDefault(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)
}

describe('plugin READMEs: config', () => {
  for (const folder of folders) {
    it(`documents every config key of plugins/${folder} with its default`, async () => {
      const config = await configOf(folder)
      const readme = readDoc(`plugins/${folder}/README.md`)
      const table = documented(readme)
      if (!config) {
        expect(table?.size ?? 0, 'config fields documented for a plugin without Config').to.equal(0)
        return
      }
      if (!table) {
        expect([...config.keys()].filter((key) => !readme.includes(`\`${key}\``))).to.deep.equal([])
        return
      }
      expect([...table.keys()].sort()).to.deep.equal([...config.keys()].sort())
      // exactly, not as a substring (which let a documented 160 pass for a default of 16)
      const wrongDefaults = [...config]
        .filter(([key, value]) => value !== undefined && documentedDefault(table.get(key) ?? '') !== shownDefault(value))
        .map(([key, value]) => `${key}: ${shownDefault(value)} is not the default "${table.get(key)}" documents`)
      expect(wrongDefaults).to.deep.equal([])
    })
  }
})
