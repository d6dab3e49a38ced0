import { expect } from 'chai'
import { SmallMap } from '../../lib/small-map.ts'

describe('SmallMap', () => {
  it('answers has, get and size like a Map for the keys it holds', () => {
    const map = new SmallMap<string, number>().set('a', 1).set('b', 2)
    expect([map.size, map.has('a'), map.get('b'), map.has('c'), map.get('c')]).to.deep.equal([2, true, 2, false, undefined])
  })

  it('replaces the value of a key set twice in place, keeping insertion order', () => {
    const map = new SmallMap<string, number>().set('a', 1).set('b', 2).set('a', 3)
    expect([...map.keys()]).to.deep.equal(['a', 'b'])
    expect([map.size, map.get('a')]).to.deep.equal([2, 3])
  })

  it('deletes only the entry asked for and reports whether it was there', () => {
    const map = new SmallMap<string, number>().set('a', 1).set('b', 2).set('c', 3)
    expect([map.delete('b'), map.delete('b')]).to.deep.equal([true, false])
    expect([...map.keys()]).to.deep.equal(['a', 'c'])
    expect([map.get('a'), map.get('c'), map.size]).to.deep.equal([1, 3, 2])
  })

  it('keeps a key and a value apart when a value equals another key', () => {
    const map = new SmallMap<string, string>().set('a', 'b').set('b', 'a')
    expect([map.get('a'), map.get('b')]).to.deep.equal(['b', 'a'])
    map.delete('a')
    expect([...map.keys()]).to.deep.equal(['b'])
  })

  it('finds keys by SameValueZero, as Map does', () => {
    const map = new SmallMap<number, string>().set(Number.NaN, 'nan').set(-0, 'zero')
    expect([map.get(Number.NaN), map.get(0), map.size]).to.deep.equal(['nan', 'zero', 2])
  })

  it('iterates the keys as they were when the iteration started', () => {
    const map = new SmallMap<string, number>().set('a', 1).set('b', 2)
    const seen: string[] = []
    for (const key of map.keys()) {
      seen.push(key)
      map.delete('b')
    }
    expect(seen).to.deep.equal(['a', 'b'])
    expect(map.size).to.equal(1)
  })

  it('gives the only entry’s value, and undefined for an empty map or one of two entries', () => {
    const map = new SmallMap<string, number>()
    expect(map.only()).to.equal(undefined)
    map.set('a', 1)
    expect(map.only()).to.equal(1)
    map.set('b', 2)
    expect(map.only()).to.equal(undefined)
  })

  it('tells whether some value passes a test, asking in insertion order up to the first that does', () => {
    const map = new SmallMap<string, number>().set('a', 1).set('b', 2).set('c', 3)
    const asked: number[] = []
    const isTwo = (value: number): boolean => {
      asked.push(value)
      return value === 2
    }
    expect(map.someValue(isTwo)).to.equal(true)
    expect(asked).to.deep.equal([1, 2])
    expect(map.someValue((value) => value > 3)).to.equal(false)
  })

  describe('past 16 entries', () => {
    const large = () => {
      const map = new SmallMap<string, number>()
      for (let i = 0; i < 20; i++) map.set(`k${i}`, i)
      return map
    }

    it('answers has, get, size and keys in insertion order as it did while small', () => {
      const map = large()
      expect([map.size, map.has('k0'), map.get('k19'), map.get('k20')]).to.deep.equal([20, true, 19, undefined])
      expect([...map.keys()]).to.deep.equal(Array.from({ length: 20 }, (_, i) => `k${i}`))
    })

    it('replaces in place, deletes, and gives the only entry once one is left', () => {
      const map = large().set('k3', 33)
      for (let i = 0; i < 20; i++) if (i !== 3) map.delete(`k${i}`)
      expect([map.delete('k0'), map.size, map.get('k3'), map.only()]).to.deep.equal([false, 1, 33, 33])
    })

    it('iterates the keys as they were when the iteration started', () => {
      const map = large()
      const seen: string[] = []
      for (const key of map.keys()) {
        seen.push(key)
        map.delete('k19')
        map.set('late', 0)
      }
      expect(seen).to.have.length(20)
      expect(seen.at(-1)).to.equal('k19')
    })

    it('tells whether some value passes a test', () => {
      expect([large().someValue((value) => value === 19), large().someValue((value) => value < 0)]).to.deep.equal([true, false])
    })

    it('finds NaN by SameValueZero, as Map does', () => {
      const map = new SmallMap<number, string>()
      for (let i = 0; i < 20; i++) map.set(i, `${i}`)
      map.set(Number.NaN, 'nan')
      expect([map.get(Number.NaN), map.get(-0)]).to.deep.equal(['nan', '0'])
    })
  })
})
