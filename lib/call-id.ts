/**
 * Ids for tool calls nobody named (a model that sent none, a host `execute` without `callId`). One
 * generator for every source: counters kept per module issued the same `call_<n>` twice.
 */
import { flatUuid } from './uuid.ts'

/** A fresh `call_<uuid>` id: unique in this process, across every copy of this package. */
export function newCallId(): string {
  return flatUuid('call_')
}
