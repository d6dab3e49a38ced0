/**
 * `OpenAIModel` (SPEC §1.7): registers a model provider backed by any OpenAI-compatible
 * chat-completions endpoint (OpenAI, DeepSeek, local servers).
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import { MAX_TIMER_DELAY_MS } from '../../lib/async/timer-delay.ts'
import type { ModelAdapter } from '../../lib/types.ts'
import type {} from '../host/index.ts'
import { loadAdapterModule } from './client-module.ts'
import { missingKeyError } from './errors.ts'
import { defaultTimeoutMs } from './request.ts'

export type { OpenAIAdapterOptions } from './adapter.ts'
export { ContentFilterError, ModelRequestError } from './errors.ts'

/** The OpenAI API, used when neither `baseURL` nor `OPENAI_BASE_URL` names another endpoint. */
export const defaultBaseURL = 'https://api.openai.com/v1'

/** True when `baseURL` points at the OpenAI API itself, which never works without a key. */
function isOpenAIApi(baseURL: string): boolean {
  return URL.canParse(baseURL) && new URL(baseURL).hostname === new URL(defaultBaseURL).hostname
}

/**
 * Registers `config.provider` with `ctx.models` for the plugin's lifetime. The endpoint is
 * `baseURL`, else `OPENAI_BASE_URL` (the official client's own variable), else the OpenAI API.
 * The key is `apiKey`, else the `apiKeyEnv` variable. Without a key, requests to any other
 * endpoint go out with no `Authorization` header (Ollama, vLLM, llama.cpp need none); for the
 * OpenAI API the provider is still registered, and every request fails with
 * `model request failed: no API key (set <apiKeyEnv>)`.
 * The `openai` client is imported here, not when the package is: without it the plugin fails to
 * start with a `PeerDependencyError` naming the package.
 */
export async function OpenAIModel(ctx: Context, config: OpenAIModel.Config): Promise<void> {
  const { createOpenAIAdapter } = await loadAdapterModule()
  const apiKey = config.apiKey || process.env[config.apiKeyEnv] || ''
  const baseURL = config.baseURL || process.env.OPENAI_BASE_URL || defaultBaseURL
  const logger = ctx.logger('openai-model')
  const adapter =
    apiKey || !isOpenAIApi(baseURL)
      ? createOpenAIAdapter({ baseURL, apiKey, model: config.model, timeoutMs: config.timeoutMs, logger })
      : keylessAdapter(config.apiKeyEnv)
  ctx.models.register(config.provider, adapter)
}

export namespace OpenAIModel {
  export const inject = ['models']

  export interface Config {
    provider: string
    baseURL?: string
    apiKey?: string
    apiKeyEnv: string
    model?: string
    timeoutMs: number
  }

  // field descriptions: `config.openaiModel` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      provider: Schema.string().default('openai'),
      // no default here: an unset baseURL falls back to OPENAI_BASE_URL, then to defaultBaseURL
      baseURL: Schema.string(),
      apiKey: Schema.string().role('secret'),
      apiKeyEnv: Schema.string().default('OPENAI_API_KEY'),
      model: Schema.string(),
      timeoutMs: Schema.natural().min(1).max(MAX_TIMER_DELAY_MS).default(defaultTimeoutMs),
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
