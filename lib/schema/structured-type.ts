/**
 * The TypeScript type of a structured value, computed from the `outputSchema` that requested it
 * (SPEC §3's subset, written `as const`, or a schemastery `Schema`). Types only.
 */
import type Schema from 'schemastery'
import type { JsonSchema, JsonValue } from '../types/json.ts'

/** What `outputSchema` accepts: a JSON Schema of the subset, or a schemastery schema converted to one. */
export type OutputSchema = JsonSchema | Schema

type Flatten<T> = { [K in keyof T]: T[K] } & {}

type ScalarOf<T> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : never

type RequiredKeys<S> = S extends { required: readonly (infer K)[] } ? K & PropertyKey : never

type PropertiesOf<S> = S extends { properties: infer P } ? P : Record<never, never>

/** Declared properties (listed ones required, the rest optional), open unless `additionalProperties: false`. */
type ObjectOf<S> = Flatten<
  { -readonly [K in keyof PropertiesOf<S> as K extends RequiredKeys<S> ? K : never]: JsonSchemaType<PropertiesOf<S>[K]> } & {
    -readonly [K in keyof PropertiesOf<S> as K extends RequiredKeys<S> ? never : K]?: JsonSchemaType<PropertiesOf<S>[K]>
  } & (S extends { additionalProperties: false } ? unknown : { [key: string]: unknown })
>

/**
 * The value type a subset JSON Schema describes, for a schema typed literally (`as const`):
 * `const`, then `enum`, then `oneOf` (a union of its branches), then `type`; an annotation-only
 * node is any JSON value.
 */
export type JsonSchemaType<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { oneOf: readonly (infer B)[] }
      ? B extends unknown
        ? JsonSchemaType<B>
        : never
      : S extends { type: 'object' }
        ? ObjectOf<S>
        : S extends { type: 'array' }
          ? S extends { items: infer I }
            ? JsonSchemaType<I>[]
            : JsonValue[]
          : S extends { type: infer T }
            ? ScalarOf<T>
            : JsonValue

/**
 * The type of `result.structured` for an `outputSchema`: schemastery's output type for a
 * schemastery schema, the mapped type for a literal JSON Schema, `unknown` for a schema whose
 * shape the compiler does not know (a plain `JsonSchema`).
 */
export type StructuredOf<S> = [S] extends [Schema<never, infer T>]
  ? T
  : [S] extends [JsonSchema]
    ? string extends keyof S
      ? unknown
      : JsonSchemaType<S>
    : unknown
