/**
 * docs/host-api.md's "Hooks (public)" against the events the package declares on cordis's `Events`
 * (`declare module 'cordis'` in the plugins): each declared event is documented there, and each
 * hook its table lists is one the package declares.
 */
import { readdirSync } from 'node:fs'
import { expect } from 'chai'
import { readDoc, section, tableRows } from './markdown.ts'

const hooks = section(readDoc('docs/host-api.md'), 'Hooks (public)')

/** Every event name declared in an `interface Events` block of the plugins' sources. */
function declaredEvents(): string[] {
  const files = readdirSync(new URL('../../plugins/', import.meta.url), { recursive: true, encoding: 'utf8' })
  const names = new Set<string>()
  for (const file of files.filter((name) => name.endsWith('.ts'))) {
    const source = readDoc(`plugins/${file}`)
    for (const [, block] of source.matchAll(/interface Events \{\n([\s\S]*?)\n {2}\}/g)) {
      for (const [, name] of block!.matchAll(/^\s+'([\w-]+\/[\w-]+)'\(/gm)) names.add(name!)
    }
  }
  return [...names].sort()
}

describe('docs/host-api.md "Hooks (public)"', () => {
  const declared = declaredEvents()

  it('documents every event the package declares', () => {
    expect(declared).to.include.members(['subagent/prepare', 'tools/result', 'loader/exit'])
    // named as a hook (`name`) or as a call (`name(code)`)
    expect(declared.filter((name) => !hooks.includes(`\`${name}\``) && !hooks.includes(`\`${name}(`))).to.deep.equal([])
  })

  it('lists in its table only hooks the package declares', () => {
    const listed = tableRows(hooks).flatMap((row) => [...(row.hook ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
    expect(listed).to.include('subagent/settle')
    expect(listed.filter((name) => !declared.includes(name))).to.deep.equal([])
  })
})
