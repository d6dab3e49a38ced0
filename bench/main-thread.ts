/**
 * The main thread's own counters from Linux's /proc (the process-wide figures of
 * `process.resourceUsage()` also count the GC and compiler threads). Off Linux both read `null`.
 */
import { readFileSync } from 'node:fs'

/** The main thread's fields of /proc/self/task/<pid>/stat after the command name, or `null` off Linux. */
function mainThreadStat(): string[] | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
    // the fields after the parenthesised command name, which may itself hold spaces
    return stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  } catch {
    return null
  }
}

/** The main thread's minor page faults so far (field 10 of the stat line), or `null` off Linux. */
export function mainThreadFaults(): number | null {
  const fields = mainThreadStat()
  return fields && Number(fields[7])
}

/** The main thread's user + system CPU so far in ms (fields 14–15, in clock ticks of 10 ms), or `null`. */
export function mainThreadCpuMs(): number | null {
  const fields = mainThreadStat()
  return fields && (Number(fields[11]) + Number(fields[12])) * 10
}
