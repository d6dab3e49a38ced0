/**
 * The code blocks of the README's "Install" section, by the file name on their first line
 * (`// ask.mjs`, `# host.yml — …`): the install test runs exactly what a reader would copy.
 */
import { readFileSync } from 'node:fs'

/** Every labelled code block of the "Install" section, by file name; throws when the section is missing. */
export function installSnippets(readmeUrl: URL): Map<string, string> {
  const readme = readFileSync(readmeUrl, 'utf8')
  const start = readme.indexOf('\n## Install\n')
  if (start < 0) throw new Error('README has no "## Install" section')
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end < 0 ? undefined : end)
  const snippets = new Map<string, string>()
  for (const match of section.matchAll(/```\w*\n([\s\S]*?)```/g)) {
    const body = match[1] ?? ''
    const name = /^(?:\/\/|#) ([\w.-]+\.\w+)/.exec(body)?.[1]
    if (!name) continue
    // JSON has no comments: the file-name line is the README's label, not part of the file
    snippets.set(name, name.endsWith('.json') ? body.slice(body.indexOf('\n') + 1) : body)
  }
  return snippets
}
