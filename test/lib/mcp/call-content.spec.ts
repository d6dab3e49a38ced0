import { expect } from 'chai'
import { base64Bytes, callOutcome, describeContent } from '../../../lib/mcp/call-content.ts'

describe('lib/mcp/call-content', () => {
  it('keeps text blocks as text blocks', () => {
    expect(callOutcome({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).to.deep.equal({
      isError: false,
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    })
  })

  it('counts the bytes a base64 text decodes to', () => {
    expect([base64Bytes(''), base64Bytes('AAAA'), base64Bytes('AAA='), base64Bytes('AA==')]).to.deep.equal([0, 3, 2, 1])
  })

  it('describes images, audio, resource links and embedded resources in one line each', () => {
    expect([
      describeContent({ type: 'image', data: 'AAAA', mimeType: 'image/png' }),
      describeContent({ type: 'audio', data: 'AA==', mimeType: 'audio/wav' }),
      describeContent({ type: 'resource_link', uri: 'file:///a', name: 'a' }),
      describeContent({ type: 'resource', resource: { uri: 'file:///t', mimeType: 'text/plain', text: 'hello' } }),
      describeContent({ type: 'resource', resource: { uri: 'file:///b', blob: 'AAAA' } }),
      describeContent({ type: 'hologram' }),
    ]).to.deep.equal([
      '[image: image/png, 3 bytes]',
      '[audio: audio/wav, 1 byte]',
      '[resource link: file:///a]',
      '[resource: file:///t, text/plain, 5 characters]',
      '[resource: file:///b, 3 bytes]',
      '[hologram content]',
    ])
  })

  it('takes structuredContent as the value of a success', () => {
    expect(callOutcome({ content: [], structuredContent: { n: 1 } })).to.deep.equal({ isError: false, content: [], value: { n: 1 } })
  })

  it('keeps isError and leaves out the value of an error', () => {
    expect(callOutcome({ isError: true, content: [{ type: 'text', text: 'no' }], structuredContent: { n: 1 } })).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'no' }],
    })
  })

  it('reads a result that is not an object, or has no content list, as empty', () => {
    expect([callOutcome(null), callOutcome({ content: 'x' }), callOutcome({ content: [7, null] })]).to.deep.equal([
      { isError: false, content: [] },
      { isError: false, content: [] },
      { isError: false, content: [] },
    ])
  })
})
