/**
 * The house rules of the code base, held by the code itself: no product file past 420 lines, no
 * import cycle between product files, a `lib/` grouped into folders (at most 12 files directly in
 * it, each folder saying in a README what belongs there). Product files are what the package
 * ships and runs: the entry, `cordis-glue/`, `lib/`, `plugins/`, `bin/` and `locales/`.
 */
import { expect } from 'chai'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { importCycles, importGraph, specifiersOf, tsFilesUnder } from '../support/import-graph.ts'

const root = join(import.meta.dirname, '../..')
const productRoots = ['index.ts', 'cordis-glue', 'lib', 'plugins', 'bin', 'locales']
const productFiles = productRoots.flatMap((folder) => tsFilesUnder(root, folder))

const MAX_LINES = 420
const MAX_LIB_FILES = 12

/**
 * Cycles that a change under way removes: each entry must still be a cycle (the test says so once
 * it is gone, so the entry is dropped with the fix).
 */
const cyclesBeingRemoved: string[][] = []

/** Files a change under way splits: each must still be too long (dropped with the split). */
const filesBeingSplit: string[] = []

describe('house rules', () => {
  describe('the import graph walk', () => {
    it('finds the specifiers of imports, re-exports, bare and dynamic imports, type-only ones included', () => {
      const source = [
        "import type { A } from './a.ts'",
        'import {',
        '  b,',
        "} from '../b.ts'",
        "import './c.ts'",
        "export { d } from './d.ts'",
        "export type * from './e.ts'",
        "const f = await import('./f.ts')",
        " * import g from './g.ts' (in a comment)",
      ].join('\n')
      expect(specifiersOf(source)).to.deep.equal(['./a.ts', '../b.ts', './c.ts', './d.ts', './e.ts', './f.ts'])
    })

    it('reports a cycle of three files and a file importing itself, and no acyclic file', () => {
      const graph = new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a', 'd']],
        ['d', []],
        ['e', ['e']],
      ])
      expect(importCycles(graph)).to.deep.equal([['a', 'b', 'c'], ['e']])
    })

    it('reads the product files, the entry and the host among them', () => {
      expect(productFiles).to.include.members(['index.ts', 'plugins/host/index.ts', 'lib/errors.ts'])
    })
  })

  it(`keeps every product file at ${MAX_LINES} lines or fewer`, () => {
    const long = productFiles
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
    expect(long.filter(({ file }) => !filesBeingSplit.includes(file)), 'split these along their responsibilities').to.deep.equal([])
    for (const file of filesBeingSplit) {
      expect(long.map((entry) => entry.file), 'a file listed as being split is short now: drop it from filesBeingSplit').to.include(file)
    }
  })

  it('has no import cycle between product files', () => {
    const cycles = importCycles(importGraph(root, productFiles))
    const key = (cycle: readonly string[]) => cycle.join(' ↔ ')
    const expected = new Set(cyclesBeingRemoved.map(key))
    expect(cycles.map(key).filter((cycle) => !expected.has(cycle)), 'move the shared piece down').to.deep.equal([])
    for (const cycle of cyclesBeingRemoved) {
      expect(cycles.map(key), 'a cycle listed as being removed is gone: drop it from cyclesBeingRemoved').to.include(key(cycle))
    }
  })

  it(`keeps at most ${MAX_LIB_FILES} files directly under lib/`, () => {
    const files = readdirSync(join(root, 'lib')).filter((name) => statSync(join(root, 'lib', name)).isFile())
    expect(files.length, `lib/ holds ${files.join(', ')}: put new code in the folder it belongs to`).to.be.at.most(MAX_LIB_FILES)
  })

  it('gives every folder of lib/ a README saying what belongs there', () => {
    const folders = readdirSync(join(root, 'lib')).filter((name) => statSync(join(root, 'lib', name)).isDirectory())
    expect(folders).to.not.be.empty
    const without = folders.filter((folder) => !existsSync(join(root, 'lib', folder, 'README.md')))
    expect(without, 'folders without a README.md').to.deep.equal([])
  })
})
