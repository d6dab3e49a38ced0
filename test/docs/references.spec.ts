/**
 * What the docs point a reader to exists: `npm run` scripts, relative links (and their anchors),
 * and the repository files they name in code spans.
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { expect } from 'chai'
import { codeBlocks, readDoc } from './markdown.ts'

const scripts = (JSON.parse(readDoc('package.json')) as { scripts: Record<string, string> }).scripts
const plugins = readdirSync(new URL('../../plugins/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `plugins/${entry.name}/README.md`)
const topics = readdirSync(new URL('../../docs/', import.meta.url))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)
const docs = ['README.md', ...topics, 'demo/TRANSCRIPT.md', 'test/reliability/README.md', ...plugins]
const repoRoots = ['cordis-glue', 'lib', 'plugins', 'test', 'bench', 'bin', 'demo', 'scripts', 'locales', 'docs']

const exists = (path: string) => existsSync(new URL(`../../${path}`, import.meta.url))

/** The doc's text outside fenced code blocks (a transcript's or a config's contents are not references). */
function prose(doc: string): string {
  return readDoc(doc).replace(/^ *```[^\n]*\n[\s\S]*?^ *```$/gm, '')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-')
}

function anchorsOf(doc: string): Set<string> {
  return new Set([...prose(doc).matchAll(/^#+ (.*)$/gm)].map((match) => anchorOf(match[1]!)))
}

describe('references in the docs', () => {
  it('names only npm scripts that package.json defines', () => {
    const named = docs.flatMap((doc) => [...readDoc(doc).matchAll(/npm run ([\w:-]+)/g)].map((match) => `${doc}: ${match[1]}`))
    expect(named.filter((entry) => !(entry.split(': ')[1]! in scripts))).to.deep.equal([])
  })

  it('shows an npm script written out in a code block as package.json defines it', () => {
    const shown = docs.flatMap((doc) =>
      codeBlocks(readDoc(doc), 'json').flatMap((block) =>
        [...block.body.matchAll(/^\s*"([\w:-]+)": ("(?:[^"\\]|\\.)*"),?$/gm)]
          .filter((match) => match[1]! in scripts)
          .map((match) => ({ doc, name: match[1]!, command: JSON.parse(match[2]!) as string })),
      ),
    )
    expect(shown.map(({ name }) => name)).to.include('test:stress')
    expect(shown.filter(({ name, command }) => scripts[name] !== command)).to.deep.equal([])
  })

  it('links only to files and headings that exist', () => {
    const broken: string[] = []
    for (const doc of docs) {
      // a code span such as `tools['a-b'](args)` is not a link
      for (const [, target] of prose(doc)
        .replace(/`[^`\n]*`/g, '')
        .matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue
        const [path = '', anchor] = target!.split('#')
        const file = path ? normalize(join(dirname(doc), path)) : doc
        if (!exists(file)) broken.push(`${doc}: ${target}`)
        else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) broken.push(`${doc}: ${target} (no such heading)`)
      }
    }
    expect(broken).to.deep.equal([])
  })

  it('names only repository files that exist', () => {
    const pattern = new RegExp(`\`((?:${repoRoots.join('|')})/[\\w./-]*\\.\\w+)`, 'g')
    const named = docs.flatMap((doc) => [...prose(doc).matchAll(pattern)].map((match) => `${doc}: ${match[1]}`))
    expect(named).to.have.length.greaterThan(100)
    expect(named.filter((entry) => !exists(entry.split(': ')[1]!))).to.deep.equal([])
  })
})
