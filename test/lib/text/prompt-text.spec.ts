import { expect } from 'chai'
import { PromptTextCache, promptText } from '../../../lib/text/prompt-text.ts'
import type { PromptSection } from '../../../lib/types.ts'

function section(order: number, text: string, name = `s${order}`): PromptSection {
  return { name, order, text }
}

/** The rendering SPEC §1.6 describes, written the slow way for comparison. */
function reference(sections: readonly PromptSection[]): string {
  return sections
    .map((s, index) => ({ s, index }))
    .filter(({ s }) => s.text !== '')
    .sort((a, b) => a.s.order - b.s.order || a.index - b.index)
    .map(({ s }) => s.text)
    .join('\n\n')
}

describe('promptText', () => {
  it('joins sections already in order with a blank line', () => {
    expect(promptText([section(0, 'a'), section(100, 'b'), section(190, 'c')])).to.equal('a\n\nb\n\nc')
  })

  it('sorts sections out of order by order, ties in list order', () => {
    expect(promptText([section(190, 'c'), section(0, 'a'), section(100, 'b1', 'x'), section(100, 'b2', 'y')])).to.equal('a\n\nb1\n\nb2\n\nc')
  })

  it('drops empty sections, and is empty for none', () => {
    expect([promptText([section(5, ''), section(1, 'one'), section(9, '')]), promptText([])]).to.deep.equal(['one', ''])
  })

  it('renders like the sort for orders a listener left unusual (NaN, strings, infinities)', () => {
    const lists: PromptSection[][] = [
      [section(3, 'x'), section(Number.NaN, 'n'), section(1, 'y')],
      [{ name: 'a', order: '10' as unknown as number, text: 'ten' }, { name: 'b', order: '9' as unknown as number, text: 'nine' }],
      [section(Number.NEGATIVE_INFINITY, 'first'), section(Number.POSITIVE_INFINITY, 'last'), section(0, 'mid')],
      [{ name: 'n', order: 1, text: 5 as unknown as string }],
    ]
    for (const list of lists) expect(promptText(list)).to.equal(reference(list))
  })
})

describe('PromptTextCache', () => {
  it('answers equal sections with the text it rendered before', () => {
    const cache = new PromptTextCache()
    const first = cache.text([section(0, 'persona'), section(190, 'report')])
    expect(cache.text([section(0, 'persona'), section(190, 'report')])).to.equal(first)
  })

  it('renders again when a section was edited in place since', () => {
    const cache = new PromptTextCache()
    const sections = [section(0, 'persona'), section(190, 'report')]
    cache.text(sections)
    sections[1]!.text = 'edited'
    expect(cache.text(sections)).to.equal('persona\n\nedited')
  })

  it('renders again when the orders differ though the texts do not', () => {
    const cache = new PromptTextCache()
    cache.text([section(0, 'a'), section(1, 'b')])
    expect(cache.text([section(2, 'a'), section(1, 'b')])).to.equal('b\n\na')
  })
})
