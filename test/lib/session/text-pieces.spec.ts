import { expect } from 'chai'
import { TextPieces, textChunkLength } from '../../../lib/session/text-pieces.ts'

/** A list of `count` pieces `p0`, `p1`, …, built as the loop builds it. */
function piecesOf(count: number): TextPieces {
  const pieces = new TextPieces('p0', 'p1')
  for (let i = 2; i < count; i++) pieces.push(`p${i}`)
  return pieces
}

describe('TextPieces (lib/text-pieces)', () => {
  it('hands out each piece by index, across chunk boundaries, and undefined past the end', () => {
    const count = textChunkLength * 2 + 3
    const pieces = piecesOf(count)
    const probes = [0, 1, textChunkLength - 1, textChunkLength, textChunkLength * 2, count - 1, count]
    expect(probes.map((index) => pieces.at(index))).to.deep.equal([
      'p0',
      'p1',
      `p${textChunkLength - 1}`,
      `p${textChunkLength}`,
      `p${textChunkLength * 2}`,
      `p${count - 1}`,
      undefined,
    ])
    expect(pieces.length).to.equal(count)
  })

  it('joins every piece in order, as one array of them would', () => {
    const count = textChunkLength * 3 + 1
    const expected = Array.from({ length: count }, (_, i) => `p${i}`).join('')
    expect(piecesOf(count).join()).to.equal(expected)
  })

  it('joins a list within one chunk', () => {
    expect(piecesOf(3).join()).to.equal('p0p1p2')
  })
})
