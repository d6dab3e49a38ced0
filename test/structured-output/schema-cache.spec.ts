import { expect } from 'chai'
import type { JsonSchema } from '../../lib/types.ts'
import { SCHEMA_CACHE_MAX_TEXT, SchemaCache } from '../../plugins/structured-output/schema-cache.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { scene } from '../support/scene.ts'
import { createFixture } from './fixture.ts'

function schemaWith(property: string): JsonSchema {
  return { type: 'object', properties: { [property]: { type: 'string' } }, required: [property] }
}

/** A cache whose `check` and `make` calls are counted; `make` returns a fresh token per schema text. */
function countingCache(capacity?: number) {
  const counts = { checked: 0, made: 0 }
  const cache = new SchemaCache<number>(
    (schema) => {
      counts.checked++
      if (schema.type !== 'object') throw new TypeError('root must be an object schema')
    },
    () => ++counts.made,
    capacity,
  )
  return { cache, counts }
}

describe('SchemaCache (one compiled schema per distinct text)', () => {
  it('gives two equal schema objects one entry, made once', () => {
    const { cache, counts } = countingCache()
    const first = cache.entry(schemaWith('answer'))
    const second = cache.entry(schemaWith('answer'))
    expect(second).to.equal(first)
    expect(counts).to.deep.equal({ checked: 2, made: 1 })
  })

  it('answers a schema object seen before without checking it again', () => {
    const { cache, counts } = countingCache()
    const schema = schemaWith('answer')
    cache.entry(schema)
    cache.entry(schema)
    expect(counts).to.deep.equal({ checked: 1, made: 1 })
  })

  it('knows a deep-frozen schema object as fixed and answers it again without checking it', () => {
    const { cache, counts } = countingCache()
    const frozen = Object.freeze({ type: 'object', required: Object.freeze(['answer']) }) as JsonSchema
    const mutable = schemaWith('answer')
    const entry = cache.entry(frozen)
    cache.entry(mutable)
    expect(cache.isFixed(frozen)).to.equal(true)
    expect(cache.isFixed(mutable)).to.equal(false)
    expect(cache.entry(frozen)).to.equal(entry)
    expect(counts.checked).to.equal(2)
    cache.clear()
    expect(cache.isFixed(frozen)).to.equal(false)
  })

  it('checks a schema object again once it was changed, and gives it the entry of its new text', () => {
    const { cache, counts } = countingCache()
    const schema = schemaWith('answer')
    const first = cache.entry(schema)
    ;(schema.required as string[]).push('answer')
    const second = cache.entry(schema)
    expect(second).to.not.equal(first)
    expect(second.schema).to.deep.equal(schema)
    expect(counts).to.deep.equal({ checked: 2, made: 2 })
  })

  it('hands out a frozen copy of the schema, which a change to the caller\'s object leaves as it was', () => {
    const { cache } = countingCache()
    const schema = schemaWith('answer')
    const { schema: copy } = cache.entry(schema)
    ;(schema.required as string[]).push('more')
    expect(copy).to.not.equal(schema)
    expect(copy).to.deep.equal(schemaWith('answer'))
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.required)).to.equal(true)
  })

  it('gives a schema with other text its own entry', () => {
    const { cache } = countingCache()
    const first = cache.entry(schemaWith('answer'))
    const second = cache.entry(schemaWith('verdict'))
    expect(second.schema).to.not.equal(first.schema)
    expect(second.value).to.equal(2)
    expect(cache.size).to.equal(2)
  })

  it('keeps key order apart, so the model is shown the parameters as requested', () => {
    const { cache } = countingCache()
    const first = cache.entry({ type: 'object', required: [], properties: {} })
    const second = cache.entry({ properties: {}, type: 'object', required: [] })
    expect(second.schema).to.not.equal(first.schema)
  })

  it('caches nothing for a schema that fails the check, and throws its error', () => {
    const { cache } = countingCache()
    expect(() => cache.entry({ type: 'array' })).to.throw(TypeError, 'root must be an object schema')
    expect(cache.size).to.equal(0)
  })

  it('holds at most its capacity of texts, dropping the least recently used first', () => {
    const { cache } = countingCache(2)
    const a = cache.entry(schemaWith('a'))
    cache.entry(schemaWith('b'))
    cache.entry(schemaWith('a'))
    cache.entry(schemaWith('c'))
    expect(cache.size).to.equal(2)
    expect(cache.entry(schemaWith('a'))).to.equal(a)
    expect(cache.entry(schemaWith('b')).value).to.equal(4)
  })

  it('does not intern a schema text longer than the limit', () => {
    const { cache } = countingCache()
    const long = { type: 'object', description: 'x'.repeat(SCHEMA_CACHE_MAX_TEXT) }
    const first = cache.entry(long)
    expect(cache.size).to.equal(0)
    expect(cache.entry({ ...long }).schema).to.not.equal(first.schema)
  })

  it('forgets every schema when cleared', () => {
    const { cache } = countingCache()
    const schema = schemaWith('answer')
    const first = cache.entry(schema)
    cache.clear()
    expect(cache.size).to.equal(0)
    expect(cache.entry(schema)).to.not.equal(first)
  })
})

describe('StructuredOutput schema sharing', () => {
  it('gives children started with equal schema objects one parameter schema, so one compiled validator', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    fixture.host.scripted.push('hang', 'hang')
    const first = await root.inprocessRun.spawn(fixture.request({ outputSchema: schemaWith('answer') }))
    const second = await root.inprocessRun.spawn(fixture.request({ outputSchema: schemaWith('answer') }))
    const shown = root.tools.get('structured_output', first.agent)?.parameters
    expect(shown).to.deep.equal(schemaWith('answer'))
    expect(root.tools.get('structured_output', second.agent)?.parameters).to.equal(shown)
    await Promise.all([first.dispose(), second.dispose()])
    await fixture.close()
  })

  it('gives a child with a different schema its own, validated against its own schema', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    fixture.host.scripted.push('hang', 'hang')
    const first = await root.inprocessRun.spawn(fixture.request({ outputSchema: schemaWith('answer') }))
    const second = await root.inprocessRun.spawn(fixture.request({ outputSchema: schemaWith('verdict') }))
    expect(root.tools.get('structured_output', second.agent)?.parameters).to.deep.equal(schemaWith('verdict'))
    const result = await root.tools.execute({ name: 'structured_output', arguments: { answer: 'yes' }, agent: second.agent })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: invalid arguments: value must have required property "verdict"' }])
    await Promise.all([first.dispose(), second.dispose()])
    await fixture.close()
  })

  it('validates a start against its schema object as changed after an earlier start, as the child is shown it', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    fixture.host.scripted.push('hang', 'hang')
    const schema = schemaWith('answer')
    const first = await root.inprocessRun.spawn(fixture.request({ outputSchema: schema }))
    ;(schema.properties as Record<string, { type: string }>).answer!.type = 'integer'
    const second = await root.inprocessRun.spawn(fixture.request({ outputSchema: schema }))
    expect(root.tools.get('structured_output', first.agent)?.parameters).to.deep.equal(schemaWith('answer'))
    expect(root.tools.get('structured_output', second.agent)?.parameters).to.deep.equal(schema)
    const result = await root.tools.execute({ name: 'structured_output', arguments: { answer: 7 }, agent: second.agent })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Structured output recorded.' }])
    await Promise.all([first.dispose(), second.dispose()])
    await fixture.close()
  })

  it('sets a start waiting in the TreeBudget queue up with the schema its entry check passed, not one changed for a later start', async () => {
    const host = await scene({ plugins: [InProcessRun, [TreeBudget, { maxConcurrent: 1 }], StructuredOutput] })
    const parent = await host.agent()
    host.scripted.push('hang', 'hang', 'hang')
    const request = (outputSchema: JsonSchema) => ({ parent, prompt: 'work', signal: new AbortController().signal, outputSchema })
    const blocker = await host.root.inprocessRun.spawn(request(schemaWith('x')))
    const schema = schemaWith('answer')
    const queued = host.root.inprocessRun.spawn(request(schema))
    ;(schema.properties as Record<string, { type: string }>).answer!.type = 'integer'
    const later = host.root.inprocessRun.spawn(request(schema))
    await blocker.dispose()
    const first = await queued
    expect(host.root.tools.get('structured_output', first.agent)?.parameters).to.deep.equal(schemaWith('answer'))
    await first.dispose()
    const second = await later
    expect(host.root.tools.get('structured_output', second.agent)?.parameters).to.deep.equal(schema)
    await second.dispose()
  })

  it('releases its schemas on unload: after a reload an equal schema gets its own object', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    fixture.host.scripted.push('hang', 'hang')
    const before = await root.inprocessRun.spawn(fixture.request({ outputSchema: schemaWith('answer') }))
    const shown = root.tools.get('structured_output', before.agent)?.parameters
    await fixture.unload()
    await fixture.reload()
    const after = await root.inprocessRun.spawn(fixture.request({ outputSchema: schemaWith('answer') }))
    expect(root.tools.get('structured_output', after.agent)?.parameters).to.not.equal(shown)
    await Promise.all([before.dispose(), after.dispose()])
    await fixture.close()
  })
})
