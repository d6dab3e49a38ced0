/**
 * Loads the optional peer `pg` only when a `SessionPostgres` starts: importing the package (or any
 * other plugin) never loads it.
 */
import { importOptionalPeer } from '../../lib/peer-dependency.ts'
import type { PgModule } from './pg-types.ts'

/** The `pg` range this plugin is tested with; `peerDependencies` declares the same. */
export const PG_RANGE = '^8.23.1'

/**
 * Imports `pg`. Rejects with a `PeerDependencyError` naming `pg` and the install line when the
 * package is not installed; `load` is the seam tests use to simulate that.
 */
export async function loadPg(load: () => Promise<unknown> = () => import('pg')): Promise<PgModule> {
  const loaded = (await importOptionalPeer(load, { plugin: 'SessionPostgres', packageName: 'pg', range: PG_RANGE })) as {
    default?: PgModule
  } & Partial<PgModule>
  return (loaded.default ?? loaded) as PgModule
}
