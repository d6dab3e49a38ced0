/**
 * The README is the front door: short, and a link to every topic of `docs/`. Detail goes to a
 * `docs/*.md` file or a plugin's README, never back into the README.
 */
import { readdirSync } from 'node:fs'
import { expect } from 'chai'
import { readDoc } from './markdown.ts'

const MAX_README_LINES = 300
const readme = readDoc('README.md')
const topics = readdirSync(new URL('../../docs/', import.meta.url)).filter((name) => name.endsWith('.md'))
const plugins = readdirSync(new URL('../../plugins/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)

describe('README, the front door', () => {
  it(`stays at ${MAX_README_LINES} lines or fewer`, () => {
    expect(readme.split('\n').length - 1).to.be.at.most(MAX_README_LINES)
  })

  it('links every topic of docs/', () => {
    expect(topics).to.include.members(['architecture.md', 'host-api.md'])
    expect(topics.filter((name) => !readme.includes(`](docs/${name})`))).to.deep.equal([])
  })

  it("links every plugin's README", () => {
    expect(plugins).to.include('host')
    expect(plugins.filter((name) => !readme.includes(`](plugins/${name}/README.md)`))).to.deep.equal([])
  })
})
