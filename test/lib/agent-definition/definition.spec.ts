import { expect } from 'chai'
import { buildCatalog, formatProblem } from '../../../lib/agent-definition/catalog.ts'
import { readDefinition } from '../../../lib/agent-definition/definition.ts'
import { expandToolPatterns } from '../../../lib/agent-definition/tool-patterns.ts'

const file = (source: string, text: string) => ({ source, bytes: new TextEncoder().encode(text) })

describe('readDefinition', () => {
  it('accepts every SPEC §12 field and freezes the definition', () => {
    const read = readDefinition(
      {
        name: 'reviewer',
        description: 'Reviews a change.',
        tools: ['read_file', 'mcp__github__*'],
        disallowedTools: ['write_file'],
        provider: 'scripted',
        model: 'demo',
        maxTokens: 1000,
        maxSteps: 8,
        maxDepth: 0,
        outputSchema: { type: 'object', properties: { verdict: { type: 'string', enum: ['approve', 'reject'] } }, required: ['verdict'] },
        budget: { tokens: 5000 },
        background: false,
      },
      { source: 'a.md', body: 'You review.' },
    )
    if (Array.isArray(read)) throw new Error(JSON.stringify(read))
    expect(read).to.include({ name: 'reviewer', persona: 'You review.', maxDepth: 0, source: 'a.md', background: false })
    expect(read.tools).to.deep.equal(['read_file', 'mcp__github__*'])
    expect(Object.isFrozen(read)).to.equal(true)
    expect(Object.isFrozen(read.outputSchema)).to.equal(true)
  })

  it('reports a misspelt field with its line and the field it probably meant', () => {
    const read = readDefinition({ name: 'a', description: 'b', toolz: ['x'] }, { source: 'a.md', body: '', lineOf: (key) => (key === 'toolz' ? 4 : undefined) })
    expect(read).to.deep.equal([{ line: 4, message: 'unknown field "toolz" (did you mean "tools"?)' }])
  })

  it('lists the known fields for an unknown field close to none', () => {
    const [problem] = readDefinition({ name: 'a', description: 'b', colour: 'red' }, { source: 'a.md', body: '' }) as { message: string }[]
    expect(problem!.message).to.match(/^unknown field "colour" \(known fields: name, description, tools, /)
  })

  it('reports missing required fields', () => {
    expect(readDefinition({}, { source: 'a.md', body: '' })).to.deep.equal([
      { message: 'missing required field "name"' },
      { message: 'missing required field "description"' },
    ])
  })

  it('reports a name outside the pattern, a description too long and ill-typed numbers', () => {
    const messages = (readDefinition({ name: 'Bad Name', description: 'x'.repeat(1025), maxTokens: 0, maxDepth: -1, maxSteps: 1.5, background: 'yes' }, { source: 'a.md', body: '' }) as { message: string }[]).map((p) => p.message)
    expect(messages).to.deep.equal([
      'name must match ^[a-z][a-z0-9-]{0,63}$ (lowercase letters, digits and "-", starting with a letter), got "Bad Name"',
      'description must be a string of 1 to 1024 characters',
      'maxTokens must be a positive integer, got 0',
      'maxSteps must be a positive integer, got 1.5',
      'maxDepth must be a non-negative integer, got -1',
      'background must be true or false',
    ])
  })

  it('reports an output schema outside the subset with its violations', () => {
    const [problem] = readDefinition({ name: 'a', description: 'b', outputSchema: { type: 'string' } }, { source: 'a.md', body: '' }) as { message: string }[]
    expect(problem!.message).to.match(/^outputSchema: unsupported JSON schema: /)
  })

  it('reports a budget with an unknown limit', () => {
    expect(readDefinition({ name: 'a', description: 'b', budget: { tokenz: 5 } }, { source: 'a.md', body: '' })).to.deep.equal([
      { line: undefined, message: 'budget has unknown field "tokenz"' },
    ])
  })

  it('checks approval with the policy validator, naming the misspelt key', () => {
    expect(readDefinition({ name: 'a', description: 'b', approval: { defualt: 'ask' } }, { source: 'a.md', body: '', lineOf: () => 5 })).to.deep.equal([
      { line: 5, message: 'approval has unknown key "defualt" (did you mean "default"?)' },
    ])
  })

  it('keeps a valid approval policy as a frozen copy', () => {
    const read = readDefinition({ name: 'a', description: 'b', approval: { default: 'ask', rules: [{ tool: 'read_*', decision: 'allow' }] } }, { source: 'a.md', body: '' })
    expect(read).to.have.deep.property('approval', { default: 'ask', rules: [{ tool: 'read_*', decision: 'allow' }] })
  })

  it('reports a tool entry that is not a name or a trailing-star prefix', () => {
    const [problem] = readDefinition({ name: 'a', description: 'b', tools: ['re*ad'] }, { source: 'a.md', body: '' }) as { message: string }[]
    expect(problem!.message).to.equal('tools entry "re*ad" is not a tool name or a prefix ending in "*"')
  })

  it('takes an inline definition’s persona from its persona field', () => {
    const read = readDefinition({ name: 'a', description: 'b', persona: ' Be brief. ' }, { source: 'definitions[0]' })
    expect(read).to.include({ persona: 'Be brief.' })
  })
})

describe('buildCatalog', () => {
  it('keeps the valid files beside a broken one', () => {
    const catalog = buildCatalog([], [
      file('/d/a.md', '---\nname: a\ndescription: A.\n---\n'),
      file('/d/b.md', '---\nname: b\ndescriptoin: B.\n---\n'),
    ])
    expect(catalog.definitions.map((d) => d.name)).to.deep.equal(['a'])
    expect(catalog.problems.map(formatProblem)).to.deep.equal([
      '/d/b.md:3: unknown field "descriptoin" (did you mean "description"?)',
      '/d/b.md: missing required field "description"',
    ])
  })

  it('reports a name clash on the later file and keeps the earlier definition', () => {
    const catalog = buildCatalog([], [file('/d/a.md', '---\nname: a\ndescription: First.\n---\n'), file('/d/b.md', '---\nname: a\ndescription: Second.\n---\n')])
    expect(catalog.definitions.map((d) => d.description)).to.deep.equal(['First.'])
    expect(catalog.problems.map(formatProblem)).to.deep.equal(['/d/b.md: name "a" is already defined in /d/a.md'])
  })

  it('names an inline definition by its index', () => {
    const catalog = buildCatalog([{ name: 'a' }], [])
    expect(catalog.problems.map(formatProblem)).to.deep.equal(['definitions[0]: missing required field "description"'])
  })

  it('reports a file that could not be read', () => {
    expect(buildCatalog([], [{ source: '/d/x.md', readError: 'EACCES' }]).problems.map(formatProblem)).to.deep.equal(['/d/x.md: file could not be read: EACCES'])
  })
})

describe('expandToolPatterns', () => {
  it('expands a prefix against the tools that exist and reports patterns matching nothing', () => {
    expect(expandToolPatterns(['mcp__gh__*', 'read', 'nope', 'zz*'], ['mcp__gh__a', 'mcp__gh__b', 'mcp__other__a', 'read'])).to.deep.equal({
      names: ['mcp__gh__a', 'mcp__gh__b', 'read'],
      unmatched: ['nope', 'zz*'],
    })
  })
})
