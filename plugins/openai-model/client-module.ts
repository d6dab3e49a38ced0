/**
 * Loads the adapter, and with it the optional peer `openai`, only when an `OpenAIModel` starts:
 * importing the package (or any other plugin) never loads the 20 MB client.
 */
import { importOptionalPeer } from '../../lib/peer-dependency.ts'

type AdapterModule = typeof import('./adapter.ts')

/** The `openai` range this plugin is tested with; `peerDependencies` declares the same. */
export const OPENAI_RANGE = '^6.30.1'

/**
 * Imports `adapter.ts`. Rejects with a `PeerDependencyError` naming `openai` and the install line
 * when the package is not installed; `load` is the seam tests use to simulate that.
 */
export function loadAdapterModule(load: () => Promise<AdapterModule> = () => import('./adapter.ts')): Promise<AdapterModule> {
  return importOptionalPeer(load, { plugin: 'OpenAIModel', packageName: 'openai', range: OPENAI_RANGE })
}
