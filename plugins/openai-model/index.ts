/**
 * `OpenAIModel` (SPEC §1.7): registers a model provider backed by any OpenAI-compatible
 * chat-completions endpoint (OpenAI, DeepSeek, local servers).
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import type { ModelAdapter } from '../../lib/types.ts'
import type {} from '../host/index.ts'
import { loadAdapterModule } from './client-module.ts'
import { missingKeyError } from './errors.ts'
import { defaultTimeoutMs } from './request.ts'

export type { OpenAIAdapterOptions } from './adapter.ts'
export { ContentFilterError, ModelRequestError } from './errors.ts'

/**
 * Registers `config.provider` with `ctx.models` for the plugin's lifetime. Without an API key
 * (neither `apiKey` nor the `apiKeyEnv` variable) the provider is still registered, and every
 * request fails with `model request failed: no API key (set <apiKeyEnv>)`. The `openai` client is
 * imported here, not when the package is: without it the plugin fails to start with a
 * `PeerDependencyError` naming the package.
 */
export async function OpenAIModel(ctx: Context, config: OpenAIModel.Config): Promise<void> {
  const { createOpenAIAdapter } = await loadAdapterModule()
  const apiKey = config.apiKey || process.env[config.apiKeyEnv] || ''
  const logger = ctx.logger('openai-model')
  const adapter = apiKey
    ? createOpenAIAdapter({ baseURL: config.baseURL, apiKey, model: config.model, timeoutMs: config.timeoutMs, logger })
    : keylessAdapter(config.apiKeyEnv)
  ctx.models.register(config.provider, adapter)
}

export namespace OpenAIModel {
  export const inject = ['models']

  export interface Config {
    provider: string
    baseURL: string
    apiKey?: string
    apiKeyEnv: string
    model?: string
    timeoutMs: number
  }

  // field descriptions: `config.openaiModel` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      provider: Schema.string().default('openai'),
      baseURL: Schema.string().default('https://api.openai.com/v1'),
      apiKey: Schema.string().role('secret'),
      apiKeyEnv: Schema.string().default('OPENAI_API_KEY'),
      model: Schema.string(),
      timeoutMs: Schema.natural().min(1).default(defaultTimeoutMs),
    }),
    'openaiModel',
  )
}

/** Stands in when no key is configured, so the user sees a turn error instead of a silent gap. */
function keylessAdapter(apiKeyEnv: string): ModelAdapter {
  return {
    stream: () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(missingKeyError(apiKeyEnv)) }),
    }),
  }
}

export default OpenAIModel
