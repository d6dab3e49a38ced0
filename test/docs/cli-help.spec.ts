/**
 * The command's documentation against its `--help` text (`cli.usage`, what `--help` prints): the
 * loader README's "Command" block shows the same usage lines, and names every option.
 */
import { expect } from 'chai'
import { text } from '../../locales/index.ts'
import { onlyBlock, readDoc, section } from './markdown.ts'

const usage = text('en-US', 'cli.usage')
const command = section(readDoc('plugins/loader/README.md'), 'Command')

describe('the CLI help and the loader README', () => {
  it('shows every usage line of --help at the head of a line of the "Command" block', () => {
    const forms = usage
      .split('\n')
      .filter((line) => /^(usage:)?\s+subagent-inprocess /.test(line) || line.startsWith('usage: '))
      .map((line) => line.replace(/^usage:/, '').trim())
    const block = onlyBlock(command, '').split('\n')
    expect(forms).to.have.length.greaterThan(0)
    expect(forms.filter((form) => !block.some((line) => line.startsWith(form)))).to.deep.equal([])
  })

  it('names every option --help lists, long and short', () => {
    const flags = [...usage.matchAll(/^\s+(?:(-\w), )?(--[\w-]+)\s/gm)].flatMap((match) => match.slice(1).filter(Boolean))
    expect(flags).to.include.members(['-w', '--watch', '--inspect', '-h', '--help'])
    expect(flags.filter((flag) => !new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(command))).to.deep.equal([])
  })
})
