/**
 * Agent definition scenes: a real temporary folder of definition files, a host with the driver,
 * `AgentDefinitions` reading that folder, and the plugins a test asks for.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '../../lib/types.ts'
import AgentDefinitions from '../../plugins/agent-definitions/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

/** A temporary folder removed after the test. */
export function tempFolder(prefix = 'agent-defs-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Writes `<folder>/<name>` with `text`; returns its path. */
export function writeDefinition(folder: string, name: string, text: string | Uint8Array): string {
  const path = join(folder, name)
  writeFileSync(path, text)
  return path
}

/** A definition file's text from its front matter lines and body. */
export function definitionText(fields: Record<string, unknown>, body = ''): string {
  const lines = Object.entries(fields).map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
  return `---\n${lines.join('\n')}\n---\n${body}\n`
}

export interface DefinitionScene {
  host: Scene
  folder: string
  parent: Agent
}

export interface DefinitionSceneOptions {
  /** Plugins loaded after the driver, before `AgentDefinitions`. */
  plugins?: readonly ScenePlugin[]
  /** Extra `AgentDefinitions` config (default: the temp folder, no watch). */
  config?: Partial<AgentDefinitions.Config>
  /** Files written before the plugin loads. */
  files?: Record<string, string | Uint8Array>
}

export async function definitionScene(options: DefinitionSceneOptions = {}): Promise<DefinitionScene> {
  const folder = tempFolder()
  for (const [name, text] of Object.entries(options.files ?? {})) writeDefinition(folder, name, text)
  const host = await scene({
    plugins: [InProcessRun, ...(options.plugins ?? []), [AgentDefinitions, { dirs: [folder], watch: false, ...options.config }]],
  })
  host.defer(() => rmSync(folder, { recursive: true, force: true }))
  const { agent: parent } = await host.create()
  return { host, folder, parent }
}
