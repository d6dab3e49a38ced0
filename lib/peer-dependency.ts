/**
 * Peer dependencies: the one cordis release this package supports, and the optional packages only
 * one plugin needs (`openai` for `OpenAIModel`, QuickJS for `CodeMode`). The checks here are pure;
 * the plugins do the loading.
 */
import { SubagentError } from './errors.ts'

/** The cordis release this package is built and tested against; `peerDependencies` pins it. */
export const SUPPORTED_CORDIS = '4.0.0-rc.10'

/** A peer package is missing or is not a supported version. Code `PEER_DEPENDENCY`. */
export class PeerDependencyError extends SubagentError {
  override readonly name = 'PeerDependencyError'
  constructor(
    readonly packageName: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super('PEER_DEPENDENCY', message, options)
  }
}

/**
 * Throws a `PeerDependencyError` unless `found` (the host's `cordis/package.json` version) is
 * exactly `SUPPORTED_CORDIS`: cordis 4 is a release candidate whose API changes between
 * candidates, and the registry's `latest` tag is still 3.x.
 */
export function assertSupportedCordis(found: unknown): void {
  if (found === SUPPORTED_CORDIS) return
  const what = typeof found === 'string' ? `cordis ${found}` : 'a cordis without a version'
  throw new PeerDependencyError(
    'cordis',
    `subagent-inprocess supports cordis ${SUPPORTED_CORDIS} only, but the host loads ${what}: npm i cordis@${SUPPORTED_CORDIS}`,
  )
}

/**
 * True when `error` says that `packageName` itself cannot be found (ESM `ERR_MODULE_NOT_FOUND` or
 * CommonJS `MODULE_NOT_FOUND`). A package that is present but misses one of its own imports is
 * not "missing": that error names another package and is passed on as it is.
 */
export function isMissingPackage(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  // the module itself, or a subpath of it (`'<name>/wasm'`)
  return [`'${packageName}'`, `'${packageName}/`, `"${packageName}"`, `"${packageName}/`].some((quoted) => error.message.includes(quoted))
}

/**
 * The error a plugin throws when an optional peer it needs is not installed:
 * `<plugin> needs the optional package "<name>", which is not installed: npm i <name>@<range>`.
 */
export function missingPeerError(plugin: string, packageName: string, range: string, cause: unknown): PeerDependencyError {
  return new PeerDependencyError(
    packageName,
    `${plugin} needs the optional package "${packageName}", which is not installed: npm i ${packageName}@${range}`,
    { cause },
  )
}

/**
 * Imports an optional peer through `load`, turning "not installed" into `missingPeerError`; any
 * other failure is rethrown unchanged.
 */
export async function importOptionalPeer<T>(
  load: () => Promise<T>,
  peer: { plugin: string; packageName: string; range: string },
): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (isMissingPackage(error, peer.packageName)) throw missingPeerError(peer.plugin, peer.packageName, peer.range, error)
    throw error
  }
}
