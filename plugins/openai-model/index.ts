/**
 * `OpenAIModel` (SPEC §1.7): registers a model provider backed by any OpenAI-compatible
 * chat-completions endpoint (OpenAI, DeepSeek, local servers).
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ModelAdapter } from '../../lib/types.ts'
import type {} from '../host/index.ts'
import { createOpenAIAdapter, defaultTimeoutMs } from './adapter.ts'
import { missingKeyError } from './errors.ts'

export { createOpenAIAdapter, type OpenAIAdapterOptions } from './adapter.ts'
export { ModelRequestError } from './errors.ts'

/**
 * Registers `config.provider` with `ctx.models` for the plugin's lifetime. Without an API key
 * (neither `apiKey` nor the `apiKeyEnv` variable) the provider is still registered, and every
 * request fails with `model request failed: no API key (set <apiKeyEnv>)`.
 */
export function OpenAIModel(ctx: Context, config: OpenAIModel.Config): void {
  const apiKey = config.apiKey || process.env[config.apiKeyEnv] || ''
  const adapter = apiKey
    ? createOpenAIAdapter({ baseURL: config.baseURL, apiKey, model: config.model, timeoutMs: config.timeoutMs })
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

  export const Config: Schema<Config> = Schema.object({
    provider: Schema.string().default('openai').description('Provider name agents select with the `provider` option.'),
    baseURL: Schema.string()
      .default('https://api.openai.com/v1')
      .description('Root URL of the OpenAI-compatible API, e.g. https://api.deepseek.com for DeepSeek.'),
    apiKey: Schema.string()
      .role('secret')
      .description('API key. When empty, the key is read from the environment variable named by apiKeyEnv.'),
    apiKeyEnv: Schema.string()
      .default('OPENAI_API_KEY')
      .description('Environment variable that holds the API key when apiKey is not set.'),
    model: Schema.string().description('Model used when an agent names none.'),
    timeoutMs: Schema.natural()
      .min(1)
      .default(defaultTimeoutMs)
      .description('Longest wait, in milliseconds, for the response to start and for each later chunk.'),
  })
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
