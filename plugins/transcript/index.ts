/**
 * `Transcript`: the console view of a host as a plugin, and `printTranscript`, the same view
 * attached to any context. The printer itself is `printer.ts`.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { localeOption, localizeConfig } from '../../locales/index.ts'
import { TranscriptPrinter, type TranscriptOptions, type Verbosity } from './printer.ts'

export { formatTokens, TranscriptPrinter, type TranscriptOptions, type Verbosity } from './printer.ts'

declare module 'cordis' {
  interface Context {
    /** Set by the CLI's `--quiet` / `--verbose`; console printers follow it when present. */
    verbosity: { level: Verbosity }
  }
}

/** Where `printTranscript` writes: `process.stdout`, or anything with a `write(text)`. */
export interface TranscriptOutput {
  write(text: string): unknown
}

export interface PrintTranscriptOptions extends Partial<TranscriptOptions> {
  out: TranscriptOutput
}

/**
 * Prints the conversations of every agent under `ctx` to `options.out` as they happen (width 100,
 * 14 lines a message unless given). `quiet` prints nothing. Observe-only; returns a function that
 * stops the printing (it also stops when `ctx`'s plugin is unloaded).
 */
export function printTranscript(ctx: Context, options: PrintTranscriptOptions): () => void {
  const { out, ...rest } = options
  const printer = new TranscriptPrinter((text) => out.write(text), { width: 100, maxLines: 14, ...rest })
  if (rest.verbosity === 'quiet') return () => {}
  const stops = [
    ctx.on('session/event', (session, event) => printer.event(session, event)),
    ctx.on('subagent/start', (info) => printer.start(info, ctx.get('sessions')?.get(info.childId))),
    // outermost, so the result it sees is final (structured value included)
    ctx.on(
      'subagent/settle',
      async (_result, run, next) => {
        const result = await next()
        printer.settled(run.id, result)
        return result
      },
      { prepend: true },
    ),
    ctx.on('subagent/end', (info) => printer.end(info)),
  ]
  return () => {
    for (const stop of stops) stop()
  }
}

/**
 * Prints the host's conversations to stdout. Follows the CLI's `--quiet` / `--verbose` when its
 * config does not set `verbosity`. Observe-only; unloading it stops the printing.
 */
export function Transcript(ctx: Context, config: Transcript.Config): void {
  const verbosity = config.verbosity ?? ctx.get('verbosity')?.level ?? 'normal'
  printTranscript(ctx, { ...config, verbosity, out: process.stdout })
}

export namespace Transcript {
  export const inject = ['sessions']
  export type Config = TranscriptOptions
  // field descriptions: `config.transcript` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      width: Schema.natural().min(60).default(100),
      maxLines: Schema.natural().min(2).default(14),
      locale: localeOption(),
      verbosity: Schema.union(['quiet', 'normal', 'verbose']),
    }),
    'transcript',
  )
}

export default Transcript
