import { expect } from 'chai'
import { thrownMessage } from '../../lib/errors.ts'

describe('thrownMessage', () => {
  it('gives the message of an Error', () => {
    expect(thrownMessage(new TypeError('bad field'))).to.equal('bad field')
  })

  it('gives the string form of a thrown non-Error', () => {
    expect(thrownMessage('plain text')).to.equal('plain text')
    expect(thrownMessage(42)).to.equal('42')
  })

  it('names the type of a thrown value that cannot be printed', () => {
    expect(thrownMessage(Object.create(null))).to.equal('unprintable thrown object')
  })

  it('names an Error whose message getter throws as unprintable', () => {
    const error = new Error('hidden')
    Object.defineProperty(error, 'message', {
      get() {
        throw new Error('no')
      },
    })
    expect(thrownMessage(error)).to.equal('unprintable thrown object')
  })
})
