/**
 * The command line's approval answerer (SPEC §11.4): every request of `approval/asked` is printed
 * as it arrives — the asking agent (label, depth, path), the tool, its arguments — and, on a TTY,
 * answered from the keyboard with `y`, `n [reason]` or `a`. Requests asked while one is on screen
 * wait in line, in the order they were asked; the transcript keeps streaming meanwhile. Not
 * interactive, the prompt only prints, and requests wait for another answerer (a listener, the
 * `--inspect` page) or for the default timeout the CLI sets (`NON_INTERACTIVE_TIMEOUT_MS`).
 */
import { createInterface, type Interface } from 'node:readline'
import type { Context } from 'cordis'
import { type PromptAnswer, type PromptWords, parseAnswer, requestLines } from '../lib/text/approval-prompt.ts'
import { thrownMessage } from '../lib/errors.ts'
import { printable } from '../lib/text/terminal-text.ts'
import type { ApprovalDecision, ApprovalRequest, Approvals } from '../plugins/approvals/index.ts'
import type {} from '../plugins/host/index.ts'
import { type Locale, text } from '../locales/index.ts'

/** The timeout the CLI gives a request when stdin is not a TTY and the config sets none: 2 minutes. */
export const NON_INTERACTIVE_TIMEOUT_MS = 120_000

declare module 'cordis' {
  interface Context {
    /** Set by the CLI: whether a person answers approval requests at this terminal. */
    approvalPrompt: { interactive: boolean }
  }
}

export interface ApprovalPromptOptions {
  /** Where answers are read from, one per line (the CLI: `process.stdin`); read only when interactive. */
  input: NodeJS.ReadableStream
  output: { write(text: string): unknown }
  /** A person answers at this terminal (the CLI: stdin is a TTY). */
  interactive: boolean
  locale: Locale
  /** Not interactive, print nothing (the CLI's `--quiet`); an interactive prompt always prints. */
  silent?: boolean
  /** Not interactive, the timeout for requests when the config sets none (default `NON_INTERACTIVE_TIMEOUT_MS`). */
  defaultTimeoutMs?: number
}

function promptWords(locale: Locale): PromptWords {
  const t = (key: string, params?: Record<string, string | number>) => text(locale, `approvalPrompt.${key}`, params)
  return {
    header: (params) => t('header', params),
    root: t('root'),
    child: (label) => (label === undefined ? t('child') : t('childLabelled', { label })),
    tool: t('tool'),
    arguments: t('arguments'),
    cut: (count) => t('cut', { count: count.toLocaleString(locale) }),
    moreLines: (count) => t('moreLines', { count }),
  }
}

/**
 * Prints and answers the approval requests of every tree under `ctx` (see the module comment),
 * from the moment an `Approvals` plugin is loaded; unloading it drops the line of waiting
 * requests. Returns a function that stops the prompt, resolving once its listeners are gone (it
 * also stops with `ctx`'s plugin).
 */
export function attachApprovalPrompt(ctx: Context, options: ApprovalPromptOptions): () => Promise<void> {
  const words = promptWords(options.locale)
  const t = (key: string, params?: Record<string, string | number>) => text(options.locale, `approvalPrompt.${key}`, params)
  const print = options.interactive || !options.silent ? (line: string) => void options.output.write(`${line}\n`) : () => {}
  /** A person answers here: the option, until the input ends (Ctrl-D, a closed terminal). */
  let interactive = options.interactive
  let approvals: Approvals | undefined
  let timeoutSet = false
  const setTimeoutDefault = () => {
    if (!approvals || interactive) return
    approvals.setDefaultTimeout(options.defaultTimeoutMs ?? NON_INTERACTIVE_TIMEOUT_MS)
    timeoutSet = true
  }
  /** Asked and not decided, in the order they were asked; the first is on screen when interactive. */
  const line: ApprovalRequest[] = []
  let reader: Interface | undefined
  let decide: ((id: string, answer: PromptAnswer) => unknown) | undefined
  let labelOf: (id: string) => string | undefined = () => undefined
  /** The request this prompt is deciding right now: its own decision is not news from elsewhere. */
  let deciding: string | undefined
  /**
   * The request on screen was decided elsewhere (the page, a timeout) while the person may have
   * been typing an answer for it: the next line only acknowledges that, so an answer meant for it
   * (typed late, or buffered while the reader was paused) can never decide the request shown next.
   */
  let acknowledging = false

  const show = (request: ApprovalRequest) => {
    const [header, ...body] = requestLines(request, words, labelOf)
    print(`${header}`)
    for (const part of body) print(`  ${part}`)
    print(interactive ? `  ${t('choices')}` : `  ${t('notInteractive')}`)
  }

  const ask = () => {
    const current = line[0]
    if (!interactive) return reader?.pause()
    // the acknowledging line is still to come: keep reading, show nothing new before it
    if (acknowledging) return void reader?.resume()
    if (!current) return reader?.pause()
    show(current)
    options.output.write(t('answer'))
    reader ??= openReader()
    reader.resume()
  }

  const openReader = () => {
    const opened = createInterface({ input: options.input, terminal: false })
    opened.on('line', (typed) => void answered(typed))
    // no more answers can come: the requests wait for another answerer or the default timeout
    opened.on('close', () => {
      if (!interactive) return
      interactive = false
      print(`\n${t('inputClosed')}`)
      setTimeoutDefault()
    })
    return opened
  }

  const answered = async (typed: string) => {
    if (acknowledging) {
      acknowledging = false
      return ask()
    }
    const current = line[0]
    if (!current || !decide) return
    const answer = parseAnswer(typed)
    if (!answer) return void options.output.write(`${t('unknownAnswer', { answer: printable(typed.trim()) })}\n${t('answer')}`)
    deciding = current.id
    try {
      await decide(current.id, answer)
    } catch (error) {
      // decided meanwhile elsewhere (the page, a timeout): `approval/decided` moves the line on
      print(t('notDecided', { reason: printable(thrownMessage(error)) }))
    } finally {
      deciding = undefined
    }
  }

  const asked = (request: ApprovalRequest) => {
    line.push(request)
    if (!interactive) return show(request)
    if (line.length === 1 && !acknowledging) return ask()
    print(t('queued', { who: who(request), tool: printable(request.tool), count: line.length - 1 }))
  }

  const who = (request: ApprovalRequest) => (request.depth === 0 ? words.root : words.child(request.label === undefined ? undefined : printable(request.label)))

  const decided = (request: ApprovalRequest, decision: ApprovalDecision) => {
    const index = line.findIndex((waiting) => waiting.id === request.id)
    if (index < 0) return
    line.splice(index, 1)
    const params = { who: who(request), tool: printable(request.tool), by: decision.by }
    const outcome = decision.approved
      ? t(decision.remember === 'tree' ? 'approvedTree' : 'approved', params)
      : decision.reason === undefined
        ? t('deniedPlain', params)
        : t('denied', { ...params, reason: printable(decision.reason) })
    print(outcome)
    if (index !== 0) return
    if (interactive && request.id !== deciding) {
      acknowledging = true
      options.output.write(t('acknowledge'))
      return reader?.resume()
    }
    ask()
  }

  const fiber = ctx.inject(['approvals'], (inner) => {
    const service = inner.approvals
    approvals = service
    decide = (id, answer) => service.decide(id, answer)
    labelOf = (id) => inner.get('sessions')?.get(id)?.header.label
    setTimeoutDefault()
    inner.on('approval/asked', asked)
    inner.on('approval/decided', decided)
    inner.effect(
      () => () => {
        if (timeoutSet) service.setDefaultTimeout(undefined)
        timeoutSet = false
        approvals = undefined
        decide = undefined
        line.length = 0
        acknowledging = false
        reader?.pause()
      },
      'approval prompt',
    )
  })
  return async () => {
    reader?.close()
    await fiber.dispose()
  }
}
