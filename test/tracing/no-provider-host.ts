/**
 * Run as its own process (no tracer provider may be registered in it): loads `Tracing` on a host
 * and prints, as one JSON line, the listener count before and after and the log lines.
 */
import Tracing from '../../plugins/tracing/index.ts'
import { createHost } from '../support/harness.ts'

const host = await createHost()
const before = host.snapshot().listeners
const fiber = host.root.plugin(Tracing, {})
await fiber
const after = host.snapshot().listeners
const logged = host.root.logger.buffer.filter((m) => m.type === 'info').map((m) => m.args.map(String).join(' '))
await fiber.dispose()
process.stdout.write(`${JSON.stringify({ before, after, logged })}\n`)
