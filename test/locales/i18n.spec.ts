import { expect } from 'chai'
import { SubagentError } from '../../lib/errors.ts'
import { type Dictionaries, format, MissingTextError, textKeys, translate } from '../../lib/text/i18n.ts'

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
