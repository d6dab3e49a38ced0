/**
 * Loads the connection code, and with it the optional peer `@modelcontextprotocol/sdk`, only when
 * an `McpTools` starts: importing the package (or any other plugin) never loads the SDK.
 */
import { importOptionalPeer } from '../../lib/peer-dependency.ts'

type LinkModule = typeof import('./server-link.ts')

/** The SDK range this plugin is tested with; `peerDependencies` declares the same. */
export const MCP_SDK_RANGE = '^1.32.2'

/**
 * Imports `server-link.ts`. Rejects with a `PeerDependencyError` naming the SDK and its install
 * line when it is not installed; `load` is the seam tests use to simulate that.
 */
export function loadLinkModule(load: () => Promise<LinkModule> = () => import('./server-link.ts')): Promise<LinkModule> {
  return importOptionalPeer(load, { plugin: 'McpTools', packageName: '@modelcontextprotocol/sdk', range: MCP_SDK_RANGE })
}
