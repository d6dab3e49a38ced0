/**
 * Property tests for content blocks at the boundary (`lib/content.ts`). Invariants:
 * (a) `contentBlockProblem` accepts exactly the three documented shapes, whatever else a value holds;
 * (b) `copyContent` of valid blocks keeps every documented field, drops every other key, shares no
 *     object with its input, and yields JSON;
 * (c) a list with an invalid block throws a `TypeError` naming the first bad index, and nothing else.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { contentBlockProblem, copyContent } from '../../lib/content.ts'

const numRuns = 300

const extras = fc.dictionary(
  fc.constantFrom('extra', '__proto__', 'constructor', 'big', 'nested'),
  fc.anything({ maxDepth: 3, withBigInt: true, withNullPrototype: true }),
  { maxKeys: 3 },
)

const validBlock = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'reasoning'), text: fc.string() }),
  fc.record({ type: fc.constant('tool-call'), id: fc.string(), name: fc.string(), arguments: fc.string() }),
)

/** A valid block carrying arbitrary undocumented keys as own data properties. */
const decoratedBlock = fc.tuple(validBlock, extras).map(([block, more]) => {
  const decorated: Record<string, unknown> = { ...block }
  for (const [key, value] of Object.entries(more)) {
    if (key in block) continue
    Object.defineProperty(decorated, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return decorated
})

/** The reference answer: is `value` one of the three documented shapes? */
function isBlock(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const block = value as Record<string, unknown>
  if (block.type === 'text' || block.type === 'reasoning') return typeof block.text === 'string'
  if (block.type === 'tool-call') return ['id', 'name', 'arguments'].every((key) => typeof block[key] === 'string')
  return false
}

const anyValue = fc.oneof(
  decoratedBlock,
  fc.anything({ maxDepth: 2, withBigInt: true, withNullPrototype: true }),
  fc.record({
    type: fc.constantFrom('text', 'reasoning', 'tool-call', 'image', ''),
    text: fc.anything({ maxDepth: 1 }),
    id: fc.anything({ maxDepth: 1 }),
    name: fc.anything({ maxDepth: 1 }),
    arguments: fc.anything({ maxDepth: 1 }),
  }, { requiredKeys: ['type'] }),
)

describe('content block properties', () => {
  it('accepts exactly the documented shapes', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(contentBlockProblem(value) === undefined).to.equal(isBlock(value))
      }),
      { numRuns },
    )
  })

  it('copies valid blocks field by field, dropping every other key, as fresh JSON', () => {
    fc.assert(
      fc.property(fc.array(decoratedBlock, { maxLength: 4 }), (blocks) => {
        const copy = copyContent(blocks, 'block')
        expect(copy).to.have.length(blocks.length)
        copy.forEach((block, index) => {
          const source = blocks[index] as Record<string, unknown>
          expect(block).to.not.equal(source)
          const fields = block.type === 'tool-call' ? ['type', 'id', 'name', 'arguments'] : ['type', 'text']
          expect(Object.keys(block)).to.deep.equal(fields)
          for (const field of fields) expect((block as unknown as Record<string, unknown>)[field]).to.equal(source[field])
          expect(Object.getPrototypeOf(block)).to.equal(Object.prototype)
        })
        expect(JSON.parse(JSON.stringify(copy))).to.deep.equal(copy)
      }),
      { numRuns },
    )
  })

  it('names the first invalid block of a list', () => {
    fc.assert(
      fc.property(fc.array(anyValue, { minLength: 1, maxLength: 5 }), (values) => {
        const bad = values.findIndex((value) => !isBlock(value))
        if (bad < 0) {
          expect(() => copyContent(values, 'block')).to.not.throw()
          return
        }
        expect(() => copyContent(values, 'block')).to.throw(TypeError, new RegExp(`^block ${bad} `))
      }),
      { numRuns },
    )
  })
})
