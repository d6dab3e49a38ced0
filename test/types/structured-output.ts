/**
 * Type tests, checked by `npm run typecheck` (never run): the type of `result.structured` follows
 * the `outputSchema`. Each `@ts-expect-error` line pins code that must not compile.
 */
import Schema from 'schemastery'
import type { InProcessRun, JsonSchema, JsonSchemaType, SubagentResult, SubagentStartRequest } from '../../index.ts'

declare const driver: InProcessRun
declare const base: Omit<SubagentStartRequest, 'outputSchema'>

export async function schemasterySchema(): Promise<void> {
  const outputSchema = Schema.object({ answer: Schema.number(), tags: Schema.array(Schema.string()) })
  const run = await driver.spawn({ ...base, outputSchema })
  const result: SubagentResult<{ answer: number; tags: string[] }> = await run.result
  const answer: number | undefined = result.structured?.answer
  // @ts-expect-error `answer` is a number
  const wrong: string | undefined = result.structured?.answer
  void [answer, wrong]
}

export async function literalJsonSchema(): Promise<void> {
  const run = await driver.start({
    ...base,
    outputSchema: {
      type: 'object',
      properties: {
        answer: { type: 'integer' },
        unit: { enum: ['m', 'km'] },
        note: { type: 'string' },
        points: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
        value: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        kind: { const: 'distance' },
        flag: { type: 'boolean' },
      },
      required: ['answer', 'unit', 'points', 'value', 'kind', 'flag'],
      additionalProperties: false,
    },
  })
  const { structured } = await run.result
  if (structured === undefined) return
  const answer: number = structured.answer
  const unit: 'm' | 'km' = structured.unit
  const note: string | undefined = structured.note
  const x: number | undefined = structured.points[0]?.x
  const value: string | null = structured.value
  const kind: 'distance' = structured.kind
  const flag: boolean = structured.flag
  // @ts-expect-error `note` is optional: not in `required`
  const sure: string = structured.note
  // @ts-expect-error `additionalProperties: false` declares no other key
  void structured.extra
  void [answer, unit, note, x, value, kind, flag, sure]
}

export async function asConstSchema(): Promise<void> {
  const outputSchema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] } as const
  const run = await driver.fork({ ...base, outputSchema })
  const structured = (await run.result).structured
  const answer: number | undefined = structured?.answer
  // an open object (no `additionalProperties: false`) may carry other keys, of unknown type
  const other: unknown = structured?.other
  // @ts-expect-error `answer` is not a string
  const text: string | undefined = structured?.answer
  void [answer, other, text]
}

export async function untypedSchema(): Promise<void> {
  const outputSchema: JsonSchema = { type: 'object' }
  const run = await driver.spawn({ ...base, outputSchema })
  const structured = (await run.result).structured
  // @ts-expect-error a schema of unknown shape gives an `unknown` value
  void structured.answer
  const run2 = await driver.spawn(base)
  const plain: unknown = (await run2.result).structured
  // @ts-expect-error no schema: `unknown`
  void plain.answer
}

export function scalarMapping(): void {
  const number: JsonSchemaType<{ type: 'integer' }> = 1
  const list: JsonSchemaType<{ type: 'array' }> = [1, 'a', null]
  const any: JsonSchemaType<{ description: 'annotation only' }> = { a: [1] }
  // @ts-expect-error a `null` schema takes only null
  const notNull: JsonSchemaType<{ type: 'null' }> = 0
  void [number, list, any, notNull]
}
