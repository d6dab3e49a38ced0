import { expect } from 'chai'
import { type StreamedPiece, StreamedLines } from '../../../lib/text/streamed-lines.ts'

/** The lines the pieces make, as a terminal shows them. */
function render(pieces: StreamedPiece[]): string[] {
  const lines: string[] = []
  for (const piece of pieces) {
    if (piece.kind === 'line') lines.push('')
    else lines[lines.length - 1] += piece.text
  }
  return lines
}

function layout(chunks: string[], width = 12, maxLines = 5): { lines: string[]; hidden: number } {
  const stream = new StreamedLines(width, maxLines)
  const pieces = chunks.flatMap((chunk) => stream.push(chunk))
  const end = stream.end()
  return { lines: render([...pieces, ...end.pieces]), hidden: end.hidden }
}

describe('StreamedLines', () => {
  it('wraps at spaces to the width, the same in one piece or in many', () => {
    const whole = layout(['the quick brown fox jumps'])
    expect(whole).to.deep.equal({ lines: ['the quick', 'brown fox', 'jumps'], hidden: 0 })
    expect(layout(['the qu', 'ick bro', 'wn fox ', 'jumps'])).to.deep.equal(whole)
  })

  it('keeps a paragraph indent on its wrapped lines', () => {
    expect(layout(['intro\n  - one two three four']).lines).to.deep.equal(['intro', '  - one two', '  three four'])
  })

  it('drops leading and trailing line breaks', () => {
    expect(layout(['\n\nhi', '\n', 'there\n\n']).lines).to.deep.equal(['hi', 'there'])
  })

  it('shows maxLines - 1 lines and counts the rest when there are more than maxLines', () => {
    expect(layout(['a\nb\nc\nd\ne\nf'], 12, 3)).to.deep.equal({ lines: ['a', 'b'], hidden: 4 })
  })

  it('shows exactly maxLines lines in full, the last one once the text ends', () => {
    const stream = new StreamedLines(12, 3)
    const pieces = stream.push('a\nb\nc')
    expect(render(pieces)).to.deep.equal(['a', 'b'])
    const end = stream.end()
    expect({ lines: render([...pieces, ...end.pieces]), hidden: end.hidden }).to.deep.equal({ lines: ['a', 'b', 'c'], hidden: 0 })
  })
})
