/**
 * JSON values and JSON Schemas as the public types name them: the lowest piece, shared by the tool,
 * run and structured-output types.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

export type JsonSchema = { [key: string]: unknown }
