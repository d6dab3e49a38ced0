import { expect } from 'chai'
import { CUT_MARKER, MAX_DESCRIPTION_CHARS, MAX_TOOLS_PER_SERVER, mcpToolName, sortListing } from '../../../lib/mcp/tool-listing.ts'

const schema = { type: 'object', properties: {} }

describe('lib/mcp/tool-listing', () => {
  it('names a server tool mcp__<server>__<tool>', () => {
    expect(mcpToolName('github', 'create_issue')).to.equal('mcp__github__create_issue')
  })

  it('keeps a well-formed tool with its description, schema and readOnlyHint', () => {
    const listing = sortListing('s', [{ name: 'read', description: 'Reads.', inputSchema: schema, annotations: { readOnlyHint: true } }])
    expect(listing).to.deep.equal({
      tools: [{ serverName: 'read', name: 'mcp__s__read', description: 'Reads.', parameters: schema, readOnly: true }],
      skipped: [],
      cut: 0,
    })
  })

  it('reads a missing readOnlyHint, or one that is not true, as not read-only', () => {
    const listing = sortListing('s', [
      { name: 'a', inputSchema: schema },
      { name: 'b', inputSchema: schema, annotations: { readOnlyHint: 'yes' } },
    ])
    expect(listing.tools.map((tool) => [tool.readOnly, tool.description])).to.deep.equal([
      [false, ''],
      [false, ''],
    ])
  })

  it('skips, with a reason each, a tool the host cannot register', () => {
    const listing = sortListing('s', [null, { description: 'x' }, { name: 'a b', inputSchema: schema }, { name: 'n', inputSchema: [] }, { name: 'd', inputSchema: schema, description: 5 }])
    expect(listing.tools).to.deep.equal([])
    expect(listing.skipped).to.deep.equal([
      'tool #0: not an object',
      'tool #1: no name',
      '"a b": the name must be letters, digits, "_" or "-", and "mcp__s__<name>" at most 64 characters',
      '"n": inputSchema is not an object JSON schema',
      '"d": description is not a string',
    ])
  })

  it('refuses a name that makes the host name longer than 64 characters', () => {
    const fits = 'x'.repeat(64 - 'mcp__s__'.length)
    expect(sortListing('s', [{ name: fits, inputSchema: schema }]).tools).to.have.length(1)
    expect(sortListing('s', [{ name: `${fits}x`, inputSchema: schema }]).tools).to.have.length(0)
  })

  it('cuts a long description to MAX_DESCRIPTION_CHARS with a marker', () => {
    const [tool] = sortListing('s', [{ name: 'a', inputSchema: schema, description: 'd'.repeat(MAX_DESCRIPTION_CHARS + 1) }]).tools
    expect(tool!.description).to.have.length(MAX_DESCRIPTION_CHARS)
    expect(tool!.description.endsWith(CUT_MARKER)).to.equal(true)
  })

  it('examines at most MAX_TOOLS_PER_SERVER tools and counts the rest as cut', () => {
    const listed = Array.from({ length: MAX_TOOLS_PER_SERVER + 3 }, (_, index) => ({ name: `t${index}`, inputSchema: schema }))
    const listing = sortListing('s', listed)
    expect([listing.tools.length, listing.cut]).to.deep.equal([MAX_TOOLS_PER_SERVER, 3])
  })
})
