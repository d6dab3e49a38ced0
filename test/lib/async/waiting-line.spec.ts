import { expect } from 'chai'
import { WaitingLine } from '../../../lib/async/waiting-line.ts'

describe('WaitingLine (lib/async/waiting-line.ts)', () => {
  it('hands values out first in first out', () => {
    const line = new WaitingLine<number>()
    for (const value of [1, 2, 3]) line.push(value)
    expect([line.shift(), line.shift(), line.shift(), line.shift()]).to.deep.equal([1, 2, 3, undefined])
  })

  it('removes a place from the middle, once, keeping the order of the rest', () => {
    const line = new WaitingLine<string>()
    line.push('a')
    const b = line.push('b')
    line.push('c')
    b.remove()
    b.remove()
    expect([line.size, ...line.drain()]).to.deep.equal([2, 'a', 'c'])
  })

  it('ignores the removal of a place already handed out', () => {
    const line = new WaitingLine<string>()
    const a = line.push('a')
    line.push('b')
    line.shift()
    a.remove()
    expect([line.size, line.shift()]).to.deep.equal([1, 'b'])
  })
})
