/**
 * Secret redaction for text that leaves a component: error messages, diagnostics, log lines.
 * Plain code, no I/O.
 */

/** What every redacted secret becomes. */
export const REDACTED = '***'

/**
 * Known secrets shorter than this are not replaced literally: a one-letter password would
 * otherwise blank that letter everywhere. URL credentials are still removed by their position.
 */
export const MIN_SECRET_LENGTH = 4

// the userinfo of a URL (`scheme://user:password@host`): it may not hold `/`, `?`, `#` or a raw `@`.
// The match starts at `://` and looks back for the scheme: starting at the scheme, every letter of
// a long `a.a.a…` run was a start that scanned the whole userinfo-like tail again, quadratic in
// the text (a 5 MB error message thrown by a `run_code` program held the host for hours)
const urlCredentials = /:\/\/(?<=\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi
const bearerToken = /\b(bearer\s+)[\w.~+/=-]+/gi

/**
 * `text` with the userinfo of every URL, every `Bearer` token and every known secret (at least
 * `MIN_SECRET_LENGTH` characters) replaced by `***`. Longer secrets are replaced first, so a
 * secret that contains another is removed whole.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let redacted = text.replace(urlCredentials, `://${REDACTED}@`).replace(bearerToken, `$1${REDACTED}`)
  const known = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length)
  for (const secret of known) redacted = redacted.split(secret).join(REDACTED)
  return redacted
}

/**
 * The credentials a URL carries, raw and percent-decoded, to pass to `redactSecrets` (the raw
 * URL may reach a message in either form). Empty for a URL without credentials or an invalid one.
 */
export function urlSecrets(url: string): string[] {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return []
  }
  const secrets = new Set<string>()
  for (const part of [parsed.username, parsed.password]) {
    if (!part) continue
    secrets.add(part)
    try {
      secrets.add(decodeURIComponent(part))
    } catch {}
  }
  return [...secrets]
}
