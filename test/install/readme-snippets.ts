/**
 * The labelled code blocks a reader copies to install and use the package (`// ask.mjs`,
 * `# host.yml — …`), by file name: the README's "Install" and "Quick start" sections and the
 * "Install" section of docs/configuration.md. The install test runs exactly what a reader would copy.
 */
import { readFileSync } from 'node:fs'

/** The text of the `## <heading>` section of `markdown` (its subsections included); throws when missing. */
function level2Section(markdown: string, heading: string, name: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`${name} has no "## ${heading}" section`)
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

/**
 * Every labelled code block of those sections, by file name; throws when a section is missing.
 * `readmeUrl` is the README; docs/configuration.md is found beside it.
 */
export function installSnippets(readmeUrl: URL): Map<string, string> {
  const readme = readFileSync(readmeUrl, 'utf8')
  const configuration = readFileSync(new URL('docs/configuration.md', readmeUrl), 'utf8')
  const sections = [
    level2Section(readme, 'Install', 'README'),
    level2Section(readme, 'Quick start', 'README'),
    level2Section(configuration, 'Install', 'docs/configuration.md'),
  ]
  const snippets = new Map<string, string>()
  for (const section of sections) {
    for (const match of section.matchAll(/```\w*\n([\s\S]*?)```/g)) {
      const body = match[1] ?? ''
      const name = /^(?:\/\/|#) ([\w.-]+\.\w+)/.exec(body)?.[1]
      if (!name) continue
      // JSON has no comments: the file-name line is the label, not part of the file
      snippets.set(name, name.endsWith('.json') ? body.slice(body.indexOf('\n') + 1) : body)
    }
  }
  return snippets
}
