/**
 * `ReleaseScene` (demo): the approval scene. It registers the `publish` tool, which the demo's
 * deployment policy (`cordis.yml`, entry `approvals`) asks a person about before it runs; the
 * demo's last turn has a child call it, so the request reaches the CLI with the child's path.
 * When no one can type (the CLI's stdin is not a terminal, or no CLI at all) the scene answers for
 * the person after `delayMs`, printing that it did; on a terminal the person answers.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { parseAnswer } from '../lib/text/approval-prompt.ts'
import type {} from '../plugins/approvals/index.ts'
import type {} from '../plugins/host/index.ts'
import { type Locale, localeOption, localizeConfig, text } from '../locales/index.ts'
import type {} from '../bin/approval-prompt.ts'

/** The tool the demo's policy asks about. Nothing leaves the machine: it only says what it would do. */
export const PUBLISH_TOOL = 'publish'

export function ReleaseScene(ctx: Context, config: ReleaseScene.Config): void {
  const locale = config.locale ?? 'en-US'
  ctx.tools.register({
    name: PUBLISH_TOOL,
    description: 'Publish a package version to npm under a dist-tag.',
    parameters: {
      type: 'object',
      properties: { package: { type: 'string' }, version: { type: 'string' }, tag: { type: 'string' } },
      required: ['package', 'version', 'tag'],
      additionalProperties: false,
    },
    execute: (args) => {
      const { package: name, version, tag } = args as { package: string; version: string; tag: string }
      return { isError: false, content: [{ type: 'text', text: `${name}@${version} published under "${tag}" (demo: nothing left this machine)` }] }
    },
  })
  ctx.inject(['approvals'], (inner) => {
    const timers = new Set<NodeJS.Timeout>()
    inner.effect(
      () => () => {
        for (const timer of timers) clearTimeout(timer)
      },
      'release scene answers',
    )
    inner.on('approval/asked', (request) => {
      // a person at the CLI's terminal answers; so does anyone deciding first (the --inspect page)
      if (inner.get('approvalPrompt')?.interactive) return
      const timer = setTimeout(() => {
        timers.delete(timer)
        if (!inner.approvals.pending().some((waiting) => waiting.id === request.id)) return
        if (inner.get('verbosity')?.level !== 'quiet') process.stdout.write(`${text(locale, 'demo.scriptedAnswer', { answer: config.answer })}\n`)
        void Promise.resolve(inner.approvals.decide(request.id, parseAnswer(config.answer)!)).catch(() => {})
      }, config.delayMs)
      timers.add(timer)
    })
  })
}

export namespace ReleaseScene {
  export const inject = ['tools']
  export interface Config {
    answer: 'y' | 'n' | 'a'
    delayMs: number
    locale?: Locale
  }
  // field descriptions: `config.releaseScene` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      answer: Schema.union(['y', 'n', 'a'] as const).default('y'),
      delayMs: Schema.natural().default(200),
      locale: localeOption(),
    }),
    'releaseScene',
  )
}

export default ReleaseScene
