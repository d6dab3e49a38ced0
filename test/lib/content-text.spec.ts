import { expect } from 'chai'
import { textOf } from '../../lib/content.ts'
import type { ContentBlock } from '../../lib/types.ts'

const mixed: ContentBlock[] = [
  { type: 'reasoning', text: 'thinking' },
  { type: 'text', text: 'first' },
  { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' },
  { type: 'text', text: 'second' },
]

describe('textOf', () => {
  it('joins the text blocks with a line break and leaves reasoning and tool calls out', () => {
    expect(textOf(mixed)).to.equal('first\nsecond')
  })

  it('joins with the separator it is given', () => {
    expect(textOf(mixed, '')).to.equal('firstsecond')
  })

  it('gives an empty string for content without a text block', () => {
    expect(textOf([{ type: 'reasoning', text: 'only' }])).to.equal('')
  })

  it('keeps an empty text block as an empty line', () => {
    expect(textOf([{ type: 'text', text: '' }, { type: 'text', text: 'b' }])).to.equal('\nb')
  })
})
