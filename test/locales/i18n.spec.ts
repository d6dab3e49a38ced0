import { expect } from 'chai'
import { SubagentError } from '../../lib/errors.ts'
import { type Dictionaries, format, MissingTextError, matchTemplate, relocalize, textKeys, translate } from '../../lib/i18n.ts'

const dictionaries: Dictionaries = {
  'en-US': {
    greeting: 'hello {name}',
    only: 'english only',
    nested: { deep: { leaf: 'leaf' } },
    diagnostic: { plain: 'it failed', detailed: 'it failed: {message} ({code})', withMessage: 'it failed: {message}' },
  },
  'zh-CN': {
    greeting: '你好 {name}',
    nested: { deep: { leaf: '叶子' } },
    diagnostic: { plain: '失败了', detailed: '失败了：{message}（{code}）', withMessage: '失败了：{message}' },
  },
}

describe('format', () => {
  it('replaces each {name} placeholder with its parameter', () => {
    expect(format('{a} and {b} and {a}', { a: 1, b: 'two' })).to.equal('1 and two and 1')
  })

  it('leaves braces that do not hold an identifier alone', () => {
    expect(format('{version: string} { x } {}', {})).to.equal('{version: string} { x } {}')
  })

  it('does not expand placeholders inside parameter values', () => {
    expect(format('say {what}', { what: '{what}' })).to.equal('say {what}')
  })

  it('throws a TypeError naming a placeholder that has no parameter', () => {
    expect(() => format('hello {name}')).to.throw(TypeError, 'text parameter "name" is missing')
  })
})

describe('translate', () => {
  it('looks a dotted key up in the requested locale', () => {
    expect(translate(dictionaries, 'zh-CN', 'nested.deep.leaf')).to.equal('叶子')
  })

  it('formats the text with its parameters', () => {
    expect(translate(dictionaries, 'zh-CN', 'greeting', { name: 'Ada' })).to.equal('你好 Ada')
  })

  it('falls back to en-US for a key the locale lacks', () => {
    expect(translate(dictionaries, 'zh-CN', 'only')).to.equal('english only')
  })

  it('throws MissingTextError for a key no locale has', () => {
    const error = (() => {
      try {
        translate(dictionaries, 'zh-CN', 'nested.absent')
      } catch (caught) {
        return caught
      }
    })()
    expect(error).to.be.instanceOf(MissingTextError)
    expect(SubagentError.is(error) && error.code).to.equal('MISSING_TEXT')
    expect((error as Error).message).to.equal('missing locale text "nested.absent" (looked in "zh-CN" and "en-US")')
  })

  it('throws MissingTextError for a key that names a section instead of a text', () => {
    expect(() => translate(dictionaries, 'en-US', 'nested.deep')).to.throw(MissingTextError)
  })
})

describe('textKeys', () => {
  it('lists the dotted key of every text, sorted', () => {
    expect(textKeys(dictionaries['zh-CN'])).to.deep.equal([
      'diagnostic.detailed',
      'diagnostic.plain',
      'diagnostic.withMessage',
      'greeting',
      'nested.deep.leaf',
    ])
  })
})

describe('matchTemplate', () => {
  it('recovers the parameters that produced a text', () => {
    expect(matchTemplate('it failed: {message} ({code})', 'it failed: boom (E1)')).to.deep.equal({ message: 'boom', code: 'E1' })
  })

  it('treats regular-expression characters in the template literally', () => {
    expect(matchTemplate('a.b (c)', 'aXb (c)')).to.equal(undefined)
  })

  it('returns undefined for a text the template cannot produce', () => {
    expect(matchTemplate('it failed: {message}', 'it worked')).to.equal(undefined)
  })
})

describe('relocalize', () => {
  it('renders an English text in the target locale with its parameters', () => {
    expect(relocalize(dictionaries, 'diagnostic', 'it failed: boom (E1)', 'zh-CN')).to.equal('失败了：boom（E1）')
  })

  it('prefers the template with the most placeholders', () => {
    expect(relocalize(dictionaries, 'diagnostic', 'it failed: a: b (c)', 'zh-CN')).to.equal('失败了：a: b（c）')
  })

  it('returns a text that matches no template unchanged', () => {
    expect(relocalize(dictionaries, 'diagnostic', 'something else', 'zh-CN')).to.equal('something else')
  })

  it('returns the text unchanged for en-US', () => {
    expect(relocalize(dictionaries, 'diagnostic', 'it failed', 'en-US')).to.equal('it failed')
  })
})
