// The sandbox worker's entry when the sources run under tsx (tests, `npm start`): Node 20 does not
// carry the main thread's module hooks into a worker, so tsx's are registered here first.
import { register } from 'tsx/esm/api'

register()
await import('./sandbox-worker.ts')
