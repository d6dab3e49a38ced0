/**
 * What the loader adds to cordis's `Context` and `Events`: declared here, below both the loader and
 * the package entry, so each imports it without importing the other.
 */
import type {} from 'cordis'

declare module 'cordis' {
  interface Context {
    /**
     * Absolute path of the host config a `Loader` runs on this root (from `start()` until
     * `dispose()`); `undefined` when no loader applied the plugin. Read it with `ctx.get`.
     */
    hostConfigFile?: string
  }
  interface Events {
    /**
     * Asks the process that runs the host to finish with exit `code` (the CLI without `--watch`
     * unloads every plugin, then exits; with `--watch` it keeps running). @mode emit
     */
    'loader/exit'(code: number): void
  }
}
