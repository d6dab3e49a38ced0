/**
 * Interpreter instances for the sandbox. The QuickJS wasm is compiled once, lazily; each instance
 * gets its own linear memory whose `maximum` is the run's heap cap. QuickJS's own limit is no byte
 * cap in this build (without `malloc_usable_size` it counts allocations, not their sizes), and an
 * instance shared for good would keep its grown memory, or any corruption, for later runs.
 */
import { newQuickJSWASMModule, newVariant, type QuickJSWASMModule, RELEASE_SYNC } from 'quickjs-emscripten'
import { compileInterpreter } from './interpreter-code.ts'


const PAGE_BYTES = 64 * 1024
// the interpreter's static data, stack and initial heap: its memory import asks for 256 pages
const BASE_PAGES = 256

// @types/node 20 declares no WebAssembly globals; these are the two this file uses
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

export interface Interpreter {
  readonly module: QuickJSWASMModule
  readonly memory: WasmMemory
  readonly memoryBytes: number
  /** The heap asked to grow past its cap since the instance was last acquired. */
  hasRefusedGrowth: boolean
}

/** At most one instance left clean by a finished run, ready for the next run. */
let idle: Interpreter | undefined

/**
 * An instance whose linear memory cannot grow past `memoryBytes` over its base: the instance a
 * finished run left idle when its size matches, else a new one.
 */
export async function acquireInterpreter(memoryBytes: number): Promise<Interpreter> {
  if (idle?.memoryBytes === memoryBytes) {
    const reused = idle
    idle = undefined
    reused.hasRefusedGrowth = false
    return reused
  }
  const wasmModule = await compileInterpreter()
  const memory = new wasm.Memory({ initial: BASE_PAGES, maximum: BASE_PAGES + Math.ceil(memoryBytes / PAGE_BYTES) })
  const module = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule, wasmMemory: memory }))
  const interpreter: Interpreter = { module, memory, memoryBytes, hasRefusedGrowth: false }
  // the allocator grows the heap through this method; a refusal is how the cap shows
  const grow = memory.grow.bind(memory)
  memory.grow = (pages) => {
    try {
      return grow(pages)
    } catch (error) {
      interpreter.hasRefusedGrowth = true
      throw error
    }
  }
  return interpreter
}

/** Keeps a cleanly disposed instance for the next run, unless its memory grew during this one. */
export function releaseInterpreter(interpreter: Interpreter): void {
  if (interpreter.memory.buffer.byteLength === BASE_PAGES * PAGE_BYTES) idle = interpreter
}
