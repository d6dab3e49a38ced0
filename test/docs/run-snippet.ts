/**
 * Runs a TypeScript snippet of the docs as a module of its own, as a reader would paste it: its
 * `subagent-inprocess` imports point at this checkout's sources (the subpath the package's
 * `exports` names, `dist/…/x.js` read as `…/x.ts`), any other package resolves from this
 * repository's `node_modules` (the module is written under `.tmp/`, ignored by git, as `.mts` so
 * it is an ES module whatever loads it). The names a fragment takes for granted (`ctx`, `parent`, `prompt`, `signal`, …) are
 * handed in; a given name also shadows a global (`console`, `process`) so the test sees the output.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { readDoc } from './markdown.ts'

const repo = new URL('../../', import.meta.url)
const manifest = JSON.parse(readDoc('package.json')) as { name: string; exports: Record<string, string | { import?: string }> }

/** The source file behind a specifier of this package; throws for a subpath the package does not export. */
function sourceOf(specifier: string): string {
  const subpath = specifier === manifest.name ? '.' : `.${specifier.slice(manifest.name.length)}`
  const target = manifest.exports[subpath]
  const built = typeof target === 'string' ? target : target?.import
  if (!built) throw new Error(`package.json exports no "${subpath}" (snippet imports "${specifier}")`)
  const source = built.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts')
  return new URL(source, repo).href
}

function resolveSpecifier(specifier: string): string {
  return specifier === manifest.name || specifier.startsWith(`${manifest.name}/`) ? sourceOf(specifier) : specifier
}

/** The snippet as a module whose default export runs its statements and returns `wanted`. */
function moduleText(code: string, given: readonly string[], wanted: readonly string[]): string {
  const imports: string[] = []
  const body: string[] = []
  for (const line of code.split('\n')) {
    if (!/^import\b/.test(line)) {
      body.push(line)
      continue
    }
    const match = /^(import .* from )'([^']+)'\s*(\/\/.*)?$/.exec(line)
    if (!match) throw new Error(`cannot read the import line ${JSON.stringify(line)}`)
    imports.push(`${match[1]}${JSON.stringify(resolveSpecifier(match[2]!))}`)
  }
  return [
    ...imports,
    `export default async function snippet({ ${given.join(', ')} }) {`,
    ...body,
    `return { ${wanted.join(', ')} }`,
    '}',
  ].join('\n')
}

/**
 * Runs `code` with the names of `given` bound to its values and returns the snippet's bindings
 * named in `wanted`. Rejects with what the snippet threw; throws for an import line it cannot
 * read or a subpath the package does not export.
 */
export async function runSnippet(
  code: string,
  given: Record<string, unknown> = {},
  wanted: readonly string[] = [],
): Promise<Record<string, unknown>> {
  const scratch = fileURLToPath(new URL('.tmp/', repo))
  await mkdir(scratch, { recursive: true })
  const dir = await mkdtemp(join(scratch, 'docs-snippet-'))
  try {
    const file = join(dir, 'snippet.mts')
    await writeFile(file, moduleText(code, Object.keys(given), wanted))
    const module = (await import(pathToFileURL(file).href)) as {
      default: (given: Record<string, unknown>) => Promise<Record<string, unknown>>
    }
    return await module.default(given)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
