import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { tsFilesUnder } from '../support/import-graph.ts'

const libDir = join(import.meta.dirname, '../../lib')
const libFiles = tsFilesUnder(libDir, '.')

/** Every module specifier a file imports or re-exports, with whether the statement is type-only. */
function importsOf(source: string): { specifier: string; typeOnly: boolean }[] {
  const found: { specifier: string; typeOnly: boolean }[] = []
  for (const match of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)) {
    found.push({ specifier: match[3], typeOnly: match[2] !== undefined })
  }
  for (const match of source.matchAll(/\bimport\s*\(\s*'([^']+)'\s*\)/g)) found.push({ specifier: match[1], typeOnly: false })
  return found
}

describe('lib/ stays pure: no cordis at run time, no plugin', () => {
  it('reads a non-empty lib/ folder', () => {
    expect(libFiles).to.include('types.ts')
  })

  it('finds the imports of a statement it is shown', () => {
    const sample = "import type { A } from 'cordis'\nimport { b } from '../plugins/x.ts'\nexport { c } from './c.ts'"
    expect(importsOf(sample)).to.deep.equal([
      { specifier: 'cordis', typeOnly: true },
      { specifier: '../plugins/x.ts', typeOnly: false },
      { specifier: './c.ts', typeOnly: false },
    ])
  })

  for (const file of libFiles) {
    it(`lib/${file} imports nothing outside lib/ but packages, and cordis at most as a type`, () => {
      const imports = importsOf(readFileSync(join(libDir, file), 'utf8'))
      const leaving = imports.filter(({ specifier }) => specifier.startsWith('.') && relative(libDir, resolve(libDir, dirname(file), specifier)).startsWith('..'))
      expect(leaving, 'imports that leave lib/').to.deep.equal([])
      // `Agent.ctx` is a cordis `Context` in the public types: an erased, type-only reference
      const cordis = imports.filter(({ specifier }) => specifier === 'cordis' || specifier.startsWith('cordis/') || specifier.startsWith('@cordisjs/'))
      expect(cordis.filter(({ typeOnly }) => !typeOnly), 'run-time cordis imports').to.deep.equal([])
      if (file !== 'types.ts' && !file.startsWith('types/')) expect(cordis, 'cordis imports').to.deep.equal([])
    })
  }
})
