/**
 * The import graph of the package's own files, read from their text: every relative module
 * specifier of an `import`/`export … from`, a bare `import '…'` and a dynamic `import('…')`,
 * type-only ones included (a type-only cycle still ties two files together for a reader).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** The module specifiers `source` imports or re-exports, in order of appearance. */
export function specifiersOf(source: string): string[] {
  const found: string[] = []
  const pattern = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)'|\bimport\s*\(\s*'([^']+)'\s*\)/gm
  for (const match of source.matchAll(pattern)) found.push(match[1] ?? match[2])
  return found
}

/** The `.ts` files under `folder` (recursively), as paths relative to `root`, sorted. */
export function tsFilesUnder(root: string, folder: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(relative(root, path))
    }
  }
  const start = join(root, folder)
  if (statSync(start).isDirectory()) walk(start)
  else out.push(folder)
  return out.sort()
}

/** Each file's relative imports that land on another file of `files` (paths relative to `root`). */
export function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const edges: string[] = []
    for (const specifier of specifiersOf(readFileSync(join(root, file), 'utf8'))) {
      if (!specifier.startsWith('.')) continue
      const target = relative(root, resolve(root, dirname(file), specifier))
      if (known.has(target) && !edges.includes(target)) edges.push(target)
    }
    graph.set(file, edges)
  }
  return graph
}

/**
 * The import cycles of `graph`: its strongly connected components of more than one file, or of
 * one file importing itself, each sorted, in order of their first file (Tarjan's algorithm).
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  let next = 0
  const visit = (file: string): void => {
    index.set(file, next)
    low.set(file, next)
    next++
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file)?.includes(file)) cycles.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return cycles.sort((a, b) => a[0].localeCompare(b[0]))
}
