/**
 * README's "Dependencies and why" names every package package.json depends on, and nothing
 * package.json no longer has.
 */
import { expect } from 'chai'
import { onlyBlock, readDoc, section, tableRows } from './markdown.ts'

const manifest = JSON.parse(readDoc('package.json')) as Record<
  'dependencies' | 'devDependencies' | 'peerDependencies',
  Record<string, string>
>
const table = tableRows(section(readDoc('README.md'), 'Dependencies and why'))

/** The package names in a table's first column: `name`, `name@range`, `@scope/name`, with `dev: ` or not. */
function namedPackages(): string[] {
  const names: string[] = []
  for (const row of table) {
    for (const match of (row.package ?? '').matchAll(/`(@?[^`@]+)(?:@[^`]*)?`/g)) names.push(match[1]!)
  }
  return names
}

describe('README "Dependencies and why"', () => {
  it('names every dependency, dev dependency and peer of package.json', () => {
    const declared = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.devDependencies),
      ...Object.keys(manifest.peerDependencies),
    ])
    const named = new Set(namedPackages())
    expect([...declared].filter((name) => !named.has(name))).to.deep.equal([])
  })

  it('names no package that package.json does not declare', () => {
    const declared = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.devDependencies),
      ...Object.keys(manifest.peerDependencies),
    ])
    expect(namedPackages().filter((name) => !declared.has(name))).to.deep.equal([])
  })

  it('has "Install" install every peer at the range package.json declares', () => {
    const commands = onlyBlock(section(readDoc('README.md'), 'Install'), 'sh')
    const installed = [...commands.matchAll(/(?<=\s)(@?[^\s@]+)@(\S+)/g)].map((match) => `${match[1]}@${match[2]}`)
    const peers = Object.entries(manifest.peerDependencies).map(([name, range]) => `${name}@${range}`)
    expect(peers.filter((peer) => !installed.includes(peer))).to.deep.equal([])
  })

  it('gives each package a reason', () => {
    expect(table.filter((row) => !row.why)).to.deep.equal([])
  })
})
