import { expect } from 'chai'
import { decodeDefinition, MAX_ALIAS_COUNT, MAX_DEFINITION_BYTES, parseFrontMatter } from '../../../lib/agent-definition/front-matter.ts'

describe('agent definition front matter', () => {
  it('splits the YAML front matter from the Markdown body', () => {
    const parsed = parseFrontMatter('---\nname: researcher\ndescription: Reads.\n---\n\nYou read.\n')
    if (Array.isArray(parsed)) throw new Error(JSON.stringify(parsed))
    expect(parsed.fields).to.deep.equal({ name: 'researcher', description: 'Reads.' })
    expect(parsed.body).to.equal('You read.')
    expect(parsed.lineOf('description')).to.equal(3)
  })

  it('reports a file without front matter at line 1', () => {
    expect(parseFrontMatter('# just markdown\n')).to.deep.equal([
      { line: 1, message: 'missing YAML front matter: the file must start with a "---" line' },
    ])
  })

  it('reports an unclosed front matter', () => {
    expect(parseFrontMatter('---\nname: a\n')).to.deep.equal([{ line: 1, message: 'front matter is not closed: no "---" line after the first' }])
  })

  it('reports invalid YAML with the line of the file it is on', () => {
    const parsed = parseFrontMatter('---\nname: a\ndescription: [unclosed\nother: 1\n---\n')
    expect(parsed).to.be.an('array')
    const [first] = parsed as { line?: number; message: string }[]
    expect(first!.message).to.match(/^invalid YAML: /)
    expect(first!.line).to.be.within(3, 5)
  })

  it('reports a duplicated key with its line', () => {
    const parsed = parseFrontMatter('---\nname: a\nname: b\n---\n') as { line?: number; message: string }[]
    expect(parsed[0]!.line).to.equal(3)
    expect(parsed[0]!.message).to.match(/^invalid YAML: .*unique/i)
  })

  it('refuses a front matter whose aliases expand past the limit (an alias bomb)', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`)
    const parsed = parseFrontMatter(`---\n${levels.join('\n')}\n---\n`)
    expect(parsed).to.deep.equal([{ message: `front matter could not be parsed: its aliases expand too far (more than ${MAX_ALIAS_COUNT} expansions)` }])
  })

  it('refuses a front matter that is not a mapping', () => {
    expect(parseFrontMatter('---\n- a\n- b\n---\n')).to.deep.equal([{ line: 2, message: 'front matter must be a mapping of fields (name: …, description: …)' }])
  })

  it('refuses a file larger than the limit without decoding it', () => {
    const big = new Uint8Array(10 * 1024 * 1024).fill(0x61)
    expect(decodeDefinition(big)).to.deep.equal({ message: `file is ${big.byteLength} bytes, more than the ${MAX_DEFINITION_BYTES} a definition may have` })
  })

  it('refuses binary junk', () => {
    expect(decodeDefinition(Uint8Array.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0xff]))).to.deep.equal({ message: 'file is not text (it holds a NUL byte)' })
    expect(decodeDefinition(Uint8Array.from([0x2d, 0xc3, 0x28, 0xff, 0xfe]))).to.deep.equal({ message: 'file is not UTF-8 text' })
  })
})

describe('agent definition front matter nesting', () => {
  it('refuses a bracket bomb nested deeper than the parser goes, without throwing', () => {
    const depth = 100_000
    const parsed = parseFrontMatter(`---\na: ${'['.repeat(depth)}${']'.repeat(depth)}\n---\n`) as { message: string }[]
    expect(parsed.map((problem) => problem.message)).to.include('front matter is nested too deeply')
  })
})
