/**
 * The QuickJS interpreter's wasm code: located and compiled on the host thread without loading
 * `quickjs-emscripten` itself (only the sandbox workers load it), so that importing the package
 * or starting `CodeMode` stays cheap, and a missing optional peer is reported by name.
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { isMissingPackage, missingPeerError } from '../../lib/peer-dependency.ts'

/** The QuickJS packages `CodeMode` needs, with the ranges `peerDependencies` declares. */
export const QUICKJS_PEERS = [
  { packageName: 'quickjs-emscripten', range: '^0.32.0' },
  { packageName: '@jitl/quickjs-wasmfile-release-sync', range: '0.32.0' },
] as const

// @types/node 20 declares no WebAssembly globals; this is the one call this file makes
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<object> } }).WebAssembly

let compiled: Promise<object> | undefined

/**
 * The path of the wasm file of the variant `quickjs-emscripten` itself ships (RELEASE_SYNC),
 * resolved as that package resolves it. Throws a `PeerDependencyError` naming the package and its
 * install line when either QuickJS package is not installed.
 */
export function locateInterpreterWasm(): string {
  try {
    const quickjs = createRequire(createRequire(import.meta.url).resolve('quickjs-emscripten'))
    return quickjs.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')
  } catch (error) {
    for (const peer of QUICKJS_PEERS) {
      if (isMissingPackage(error, peer.packageName)) throw missingPeerError('CodeMode', peer.packageName, peer.range, error)
    }
    throw error
  }
}

/**
 * Uses code compiled elsewhere (the host thread compiles once and hands the module to every
 * sandbox worker) instead of compiling it again.
 */
export function adoptCompiledInterpreter(wasmModule: object): void {
  compiled = Promise.resolve(wasmModule)
}

/** The interpreter's code, compiled on first use and shared by every instance. */
export function compileInterpreter(): Promise<object> {
  compiled ??= (async () => wasm.compile(await readFile(locateInterpreterWasm())))().catch((error: unknown) => {
    compiled = undefined
    throw error
  })
  return compiled
}
