import { expect } from 'chai'
import { argumentsLines, parseAnswer, type PromptWords, pathText, requestLines } from '../../../lib/text/approval-prompt.ts'

const words: PromptWords = {
  header: ({ who, depth, path }) => `approval needed: ${who} · depth ${depth} · path ${path}`,
  root: 'root',
  child: (label) => (label === undefined ? 'a child' : `child "${label}"`),
  tool: 'tool',
  arguments: 'arguments',
  cut: (count) => `… [${count} more characters]`,
  moreLines: (count) => `… (${count} more lines)`,
}

describe('approval prompt text (lib/text/approval-prompt.ts)', () => {
  describe('parseAnswer', () => {
    it('reads y and yes as approve, in any case, with spaces around', () => {
      expect([parseAnswer('y'), parseAnswer(' YES ')]).to.deep.equal([{ approved: true }, { approved: true }])
    })

    it('reads a and always as approve and remember for the tree', () => {
      expect([parseAnswer('a'), parseAnswer('Always')]).to.deep.equal([
        { approved: true, remember: 'tree' },
        { approved: true, remember: 'tree' },
      ])
    })

    it('reads n alone as a deny without a reason', () => {
      expect(parseAnswer('n')).to.deep.equal({ approved: false })
    })

    it('reads what follows n after a space or a colon as the reason', () => {
      expect([parseAnswer('n not on a Friday'), parseAnswer('no: wrong tag  ')]).to.deep.equal([
        { approved: false, reason: 'not on a Friday' },
        { approved: false, reason: 'wrong tag' },
      ])
    })

    it('refuses an empty line, another word, and y or a followed by text', () => {
      expect(['', 'maybe', 'y please', 'a b', 'nope', '?'].map(parseAnswer)).to.deep.equal([
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
      ])
    })
  })

  describe('argumentsLines', () => {
    it('prints the arguments as pretty JSON, parsing arguments given as text', () => {
      expect(argumentsLines('{"version":"2.0.0","tag":"latest"}', words)).to.deep.equal(['{', '  "version": "2.0.0",', '  "tag": "latest"', '}'])
    })

    it('cuts a long string value, nested or not, with a marker saying how much was left out', () => {
      const lines = argumentsLines({ notes: 'x'.repeat(250), files: ['y'.repeat(12)] }, words, { maxValueChars: 10 })
      expect(lines).to.deep.equal([
        '{',
        `  "notes": "${'x'.repeat(10)}… [240 more characters]",`,
        '  "files": [',
        `    "${'y'.repeat(10)}… [2 more characters]"`,
        '  ]',
        '}',
      ])
    })

    it('counts characters, not UTF-16 units, when it cuts', () => {
      expect(argumentsLines({ s: '😀😀😀' }, words, { maxValueChars: 2 })[1]).to.equal('  "s": "😀😀… [1 more characters]"')
    })

    it('keeps at most maxLines lines, the last one saying how many were left out', () => {
      const lines = argumentsLines(
        Array.from({ length: 10 }, (_, i) => i),
        words,
        { maxLines: 4 },
      )
      expect(lines).to.deep.equal(['[', '  0,', '  1,', '… (9 more lines)'])
    })

    it('shows text that is not JSON as one string', () => {
      expect(argumentsLines('not json {', words)).to.deep.equal(['"not json {"'])
    })

    it('shows an escape sequence in a value as text, a C1 control included', () => {
      const [line] = argumentsLines('"\\u001b[2J\u009b"', words)
      // JSON.stringify writes ESC as \\u001b (plain text); a C1 control it leaves raw is replaced
      expect(line).to.equal('"\\u001b[2J\ufffd"')
    })
  })

  describe('requestLines', () => {
    it('shows who asks, the depth, the path by labels and short ids, the tool and the arguments', () => {
      const labels: Record<string, string> = { 'bbbbbbbb-2': 'release' }
      const lines = requestLines(
        { path: ['aaaaaaaa-1', 'bbbbbbbb-2', 'cccccccc-3'], depth: 2, label: 'npm', tool: 'publish', args: { version: '2.0.0' } },
        words,
        (id) => labels[id],
      )
      expect(lines).to.deep.equal([
        'approval needed: child "npm" · depth 2 · path root aaaaaaaa › release bbbbbbbb › cccccccc',
        'tool       publish',
        'arguments  {',
        '             "version": "2.0.0"',
        '           }',
      ])
    })

    it("shows a label's and a tool name's escape sequences as text", () => {
      const [header, tool] = requestLines({ path: ['r', 'c'], depth: 1, label: 'x\x1b]0;owned\x07', tool: 'rm\r-rf', args: {} }, words)
      expect([header, tool]).to.deep.equal(['approval needed: child "x␛]0;owned␇" · depth 1 · path root r › c', 'tool       rm␍-rf'])
    })

    it('calls the root agent root', () => {
      expect(pathText(['0123456789'], words, () => 'ignored')).to.equal('root 01234567')
    })
  })
})
