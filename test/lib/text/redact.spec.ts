import { expect } from 'chai'
import fc from 'fast-check'
import { redactSecrets, urlSecrets } from '../../../lib/text/redact.ts'

/** A plain (quadratic on some inputs) URL-credentials pattern, as the reference for what is removed. */
const formerUrlCredentials = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi

describe('redactSecrets', () => {
  it('removes the credentials of a URL, keeping scheme and host', () => {
    expect(redactSecrets('cannot reach http://user:password@host:8080/v1/chat')).to.equal('cannot reach http://***@host:8080/v1/chat')
  })

  it('removes a URL user name without a password', () => {
    expect(redactSecrets('see https://token123@example.com/x')).to.equal('see https://***@example.com/x')
  })

  it('leaves a URL without credentials as it is', () => {
    expect(redactSecrets('GET https://example.com/a@b')).to.equal('GET https://example.com/a@b')
  })

  it('removes a Bearer token', () => {
    expect(redactSecrets('authorization: Bearer sk-abc.def_123')).to.equal('authorization: Bearer ***')
  })

  it('removes every occurrence of a known secret', () => {
    expect(redactSecrets('key sk-1234 echoed: "sk-1234"', ['sk-1234'])).to.equal('key *** echoed: "***"')
  })

  it('removes a longer secret whole when a shorter one is inside it', () => {
    expect(redactSecrets('pw hunter22-long', ['hunter22', 'hunter22-long'])).to.equal('pw ***')
  })

  it('removes URL credentials exactly where the former pattern did, in any text made of URL pieces', () => {
    const piece = fc.constantFrom('a', 'B', '1', '+', '.', '-', '_', ':', '/', '//', '://', '@', ' ', '?', '#', 'x', 'é', 'http://', 'u:p@', 'h/')
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const text = pieces.join('')
        expect(redactSecrets(text)).to.equal(text.replace(formerUrlCredentials, '$1***@'))
      }),
      { numRuns: 3000 },
    )
  })

  it('redacts a 400,000-character text shaped against the URL pattern, and still finds its credentials', () => {
    // every letter of the scheme-like run was a match start that scanned the whole tail again
    const text = `${'a.'.repeat(100_000)}a://${'x'.repeat(200_000)} see https://user:pw@host/`
    expect(redactSecrets(text)).to.equal(text.replace('https://user:pw@', 'https://***@'))
  })

  it('does not replace a known secret shorter than four characters literally', () => {
    expect(redactSecrets('a pass word', ['pa'])).to.equal('a pass word')
  })
})

describe('urlSecrets', () => {
  it('lists the user name and password, raw and percent-decoded', () => {
    expect(urlSecrets('http://us%40er:p%23ss@host/v1')).to.deep.equal(['us%40er', 'us@er', 'p%23ss', 'p#ss'])
  })

  it('is empty for a URL without credentials or an invalid URL', () => {
    expect(urlSecrets('https://api.openai.com/v1')).to.deep.equal([])
    expect(urlSecrets('not a url')).to.deep.equal([])
  })
})
