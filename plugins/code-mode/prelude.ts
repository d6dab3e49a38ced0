/**
 * The code that runs inside each sandbox before the program: it installs `tools` and `console`,
 * compiles the program as the body of an async function and reports how it ended as one string.
 * Everything crossing the boundary is a string (JSON text), so resolving a sandbox promise from
 * the host never runs program code.
 */

/**
 * Evaluates to `(call, namesJson, codeJson) => Promise<string>`; `codeJson` is the program as JSON text. `call(name, argsJson)` is the host's
 * binding entry: it returns a promise of the result's JSON text (`undefined` for no value).
 * The settlement string starts with a tag: `u` (returned nothing), `v<json>` (returned a value),
 * `e<[name, message]>` (threw; `name` is `null` for a thrown non-error value) or
 * `j<[name, message]>` (returned a value `JSON.stringify` rejects).
 */
export const PRELUDE = `(function (call, namesJson, codeJson) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      const json = stringify(value);
      if (json !== undefined) return json;
    } catch (_) {}
    return String(value);
  };
  const describe = (error) => {
    try {
      if (typeof error === 'object' && error !== null && typeof error.message === 'string') {
        const name = typeof error.name === 'string' && error.name !== '' ? error.name : 'Error';
        return stringify([name, error.message]);
      }
      return stringify([null, show(error)]);
    } catch (_) {
      return stringify([null, 'a value that cannot be described']);
    }
  };
  const tools = {};
  for (const name of parse(namesJson)) {
    const binding = async (args) => {
      const text = await call(name, stringify(args));
      return text === undefined ? undefined : parse(text);
    };
    Object.defineProperty(binding, 'name', { value: name });
    Object.defineProperty(tools, name, { value: binding, enumerable: true });
  }
  Object.defineProperty(globalThis, 'tools', { value: Object.freeze(tools) });
  const discard = () => undefined;
  globalThis.console = { log: discard, info: discard, warn: discard, error: discard, debug: discard };
  const AsyncFunction = (async () => undefined).constructor;
  let body;
  try {
    body = new AsyncFunction(parse(codeJson));
  } catch (error) {
    return Promise.resolve('e' + describe(error));
  }
  return (async () => {
    let value;
    try {
      value = await body();
    } catch (error) {
      return 'e' + describe(error);
    }
    if (value === undefined) return 'u';
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      return 'j' + describe(error);
    }
    if (json === undefined) return 'j' + stringify(['TypeError', 'cannot serialize a ' + typeof value]);
    return 'v' + json;
  })();
})`

/** How a program ended, decoded from the prelude's settlement string. */
export type Settlement =
  | { kind: 'returned'; json: string | undefined }
  | { kind: 'threw'; name: string | null; message: string }
  | { kind: 'not-json'; name: string | null; message: string }

/** Decodes a settlement string; `undefined` for anything the prelude never produces. */
export function decodeSettlement(text: string | undefined): Settlement | undefined {
  if (text === undefined || text === '') return undefined
  const tag = text[0]
  const rest = text.slice(1)
  if (tag === 'u') return { kind: 'returned', json: undefined }
  if (tag === 'v') return { kind: 'returned', json: rest }
  if (tag !== 'e' && tag !== 'j') return undefined
  const parsed: unknown = JSON.parse(rest)
  if (!Array.isArray(parsed) || typeof parsed[1] !== 'string') return undefined
  const name = typeof parsed[0] === 'string' ? parsed[0] : null
  return { kind: tag === 'e' ? 'threw' : 'not-json', name, message: parsed[1] }
}
