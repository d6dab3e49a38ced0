import { expect } from 'chai'
import Schema from 'schemastery'
import { DepthPolicy } from '../../plugins/depth-policy/index.ts'
import { checkPluginConfig, HostConfigError, parseHostConfig } from '../../plugins/loader/index.ts'

const file = '/srv/app/cordis.yml'

function problemsOf(text: string): string[] {
  return parseHostConfig(text, file).problems.map((problem) => problem.message)
}

describe('parseHostConfig', () => {
  it('keeps entries in file order and resolves paths against the config folder', () => {
    const config = parseHostConfig('plugins:\n  zeta: { path: ./z.ts }\n  alpha: { path: ../lib/a.ts }\n', file)
    expect(config.entries.map((entry) => [entry.key, entry.source])).to.deep.equal([
      ['zeta', { kind: 'file', file: '/srv/app/z.ts' }],
      ['alpha', { kind: 'file', file: '/srv/lib/a.ts' }],
    ])
  })

  it('reads a package entry with its export, config and disabled flag', () => {
    const [entry] = parseHostConfig(
      'plugins:\n  tool:\n    package: some-plugin\n    export: Tool\n    config: { depth: 2 }\n    disabled: true\n',
      file,
    ).entries
    expect(entry).to.deep.equal({
      key: 'tool',
      source: { kind: 'package', name: 'some-plugin' },
      export: 'Tool',
      config: { depth: 2 },
      disabled: true,
    })
  })

  it('defaults to the default export, no config and enabled', () => {
    const [entry] = parseHostConfig('plugins:\n  host: { path: ./host.ts }\n', file).entries
    expect([entry.export, entry.config, entry.disabled]).to.deep.equal(['default', undefined, false])
  })

  it('reports an entry with both path and package by name and keeps the others', () => {
    const config = parseHostConfig('plugins:\n  bad: { path: ./a.ts, package: a }\n  good: { path: ./b.ts }\n', file)
    expect(config.problems.map((problem) => [problem.entry, problem.message])).to.deep.equal([
      ['bad', 'plugin "bad": needs exactly one of "path" or "package"'],
    ])
    expect(config.entries.map((entry) => entry.key)).to.deep.equal(['good'])
  })

  it('reports an unknown field of an entry', () => {
    expect(problemsOf('plugins:\n  host: { path: ./h.ts, confg: {} }\n')).to.deep.equal(['plugin "host": unknown field "confg"'])
  })

  it('reports a name that does not start with a letter', () => {
    expect(problemsOf('plugins:\n  1st: { path: ./h.ts }\n')).to.deep.equal([
      'plugin "1st": the name must start with a letter and hold only letters, digits, "-" and "_"',
    ])
  })

  it('reports a disabled flag that is not a boolean', () => {
    expect(problemsOf('plugins:\n  host: { path: ./h.ts, disabled: "yes" }\n')).to.deep.equal([
      'plugin "host": "disabled" must be true or false',
    ])
  })

  it('throws a HostConfigError naming the file for invalid YAML', () => {
    expect(() => parseHostConfig('plugins:\n  host: { path: ./h.ts\n', file))
      .to.throw(HostConfigError)
      .with.property('message')
      .that.matches(/^host config "\/srv\/app\/cordis\.yml": /)
  })

  it('keeps the line, column and code frame of a YAML error', () => {
    expect(() => parseHostConfig('plugins:\n  a: { path: ./x.ts\n  b: 1\n', file)).to.throw(
      'host config "/srv/app/cordis.yml": Flow map in block collection must be sufficiently indented and end with a } at line 3, column 3:\n\n  a: { path: ./x.ts\n  b: 1\n  ^',
    )
  })

  it('throws for a top-level field other than plugins', () => {
    expect(() => parseHostConfig('plugin:\n  host: { path: ./h.ts }\n', file)).to.throw(
      'host config "/srv/app/cordis.yml" has unknown field "plugin"',
    )
  })

  it('reads an empty file as no entries', () => {
    expect(parseHostConfig('# nothing yet\n', file)).to.deep.equal({ file, entries: [], problems: [] })
  })
})

describe('checkPluginConfig', () => {
  it('names the entry and the field the schema rejects', () => {
    expect(() => checkPluginConfig('depth-policy', DepthPolicy, { maxDepth: -1 })).to.throw(
      'plugin "depth-policy": maxDepth: expected number >= 0 but got -1',
    )
  })

  it('names a nested field by its dotted path', () => {
    const plugin = Object.assign(() => {}, { Config: Schema.object({ limits: Schema.object({ steps: Schema.number() }) }) })
    expect(() => checkPluginConfig('host', plugin, { limits: { steps: 'many' } })).to.throw(
      'plugin "host": limits.steps: expected number but got "many"',
    )
  })

  it('quotes a string the schema rejects, so "10" never reads as the number 10', () => {
    expect(() => checkPluginConfig('depth-policy', DepthPolicy, { maxDepth: '10' })).to.throw(
      'plugin "depth-policy": maxDepth: expected number but got "10"',
    )
  })

  it('accepts a config the schema accepts, defaults included', () => {
    expect(() => checkPluginConfig('depth-policy', DepthPolicy, undefined)).not.to.throw()
  })

  it('accepts anything for a plugin without a Config', () => {
    expect(() => checkPluginConfig('bare', () => {}, { anything: true })).not.to.throw()
  })
})

describe('checkPluginConfig with unknown keys', () => {
  it('rejects a mistyped key, naming the entry, the key and the closest valid one', () => {
    expect(() => checkPluginConfig('depth-policy', DepthPolicy, { maxdepth: 0 })).to.throw(
      'plugin "depth-policy": unknown key "maxdepth" (did you mean "maxDepth"?)',
    )
  })

  it('lists the valid keys when no key is close to the unknown one', () => {
    const plugin = Object.assign(() => {}, { Config: Schema.object({ steps: Schema.number(), label: Schema.string() }) })
    expect(() => checkPluginConfig('host', plugin, { colour: 'red' })).to.throw('plugin "host": unknown key "colour" (valid keys: steps, label)')
  })

  it('rejects an unknown key inside a nested object by its dotted path', () => {
    const plugin = Object.assign(() => {}, { Config: Schema.object({ limits: Schema.object({ steps: Schema.number() }) }) })
    expect(() => checkPluginConfig('host', plugin, { limits: { stpes: 3 } })).to.throw(
      'plugin "host": unknown key "limits.stpes" (did you mean "limits.steps"?)',
    )
  })

  it('accepts the keys of every member of an intersected schema', () => {
    const plugin = Object.assign(() => {}, {
      Config: Schema.intersect([Schema.object({ a: Schema.number() }), Schema.object({ b: Schema.number() })]),
    })
    expect(() => checkPluginConfig('both', plugin, { a: 1, b: 2 })).not.to.throw()
  })

  it('leaves the keys of a dict schema unchecked', () => {
    const plugin = Object.assign(() => {}, { Config: Schema.dict(Schema.number()) })
    expect(() => checkPluginConfig('dict', plugin, { anything: 1 })).not.to.throw()
  })
})
