import { expect } from 'chai'
import { printable } from '../../../lib/text/terminal-text.ts'

describe('printable (lib/text/terminal-text.ts)', () => {
  it('returns text without control characters unchanged, tabs and line feeds included', () => {
    const text = 'plain text\twith a tab\nand a line feed, ünïcödé and 漢字'
    expect(printable(text)).to.equal(text)
  })

  it('shows an ESC sequence as text instead of passing the escape on', () => {
    expect(printable('\x1b[2J\x1b]0;owned\x07done')).to.equal('␛[2J␛]0;owned␇done')
  })

  it('shows a carriage return, a NUL and DEL by their control pictures', () => {
    expect(printable('safe\rEVIL\x00\x7f')).to.equal('safe␍EVIL␀␡')
  })

  it('replaces a C1 control such as the 8-bit CSI with U+FFFD', () => {
    expect(printable('a\u009b2Jb\u0085c')).to.equal('a\ufffd2Jb\ufffdc')
  })

  it('gives the same answer on repeated calls (the pattern keeps no state between them)', () => {
    expect([printable('\x1bx'), printable('\x1bx'), printable('ok')]).to.deep.equal(['␛x', '␛x', 'ok'])
  })
})
