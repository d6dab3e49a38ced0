import { expect } from 'chai'
import type { Context } from 'cordis'
import type { PreExecuteDecision, ToolExecution, ToolResult } from '../../lib/types.ts'
import { scene } from '../support/scene.ts'

const objectSchema = { type: 'object' }

function tool(name: string, execute: (args: never, exec: ToolExecution) => unknown = () => `${name} ran`) {
  return { name, description: `The ${name} tool.`, parameters: objectSchema, execute }
}

const echo = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute: (args: { text: string }) => `echo: ${args.text}`,
}

function textOf(result: ToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

describe('tools.register (SPEC §1.5)', () => {
  it('makes a global tool visible to every caller, schemas sorted by name', async () => {
    const s = await scene()
    s.root.tools.register(tool('zulu'))
    s.root.tools.register(tool('alpha'))
    const { agent } = await s.create()
    expect(s.root.tools.schemas().map((schema) => schema.name)).to.deep.equal(['alpha', 'zulu'])
    expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['alpha', 'zulu'])
    expect(s.root.tools.get('alpha')).to.deep.equal({ name: 'alpha', description: 'The alpha tool.', parameters: objectSchema })
  })

  it('rejects a second global tool with a taken name', async () => {
    const s = await scene()
    s.root.tools.register(tool('taken'))
    let error: (Error & { code?: string }) | undefined
    try {
      s.root.tools.register(tool('taken'))
    } catch (caught) {
      error = caught as Error
    }
    expect(error?.message).to.equal('tool "taken" is already registered')
    expect(error?.code).to.equal('DUPLICATE_TOOL')
    expect(textOf(await s.root.tools.execute({ name: 'taken', arguments: {} }))).to.equal('taken ran')
  })

  it('rejects a second scoped tool with a taken name in the same agent', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.tools.register(tool('mine'))
    expect(() => agent.ctx.tools.register(tool('mine'))).to.throw('tool "mine" is already registered')
  })

  it('rejects a malformed definition with a TypeError', async () => {
    const s = await scene()
    expect(() => s.root.tools.register({ ...tool('bad'), parameters: { type: 'string' } })).to.throw(
      TypeError,
      'tool "bad" parameters must be an object JSON schema',
    )
    expect(s.root.tools.get('bad')).to.equal(undefined)
  })

  it('removes the tool when its disposer is called', async () => {
    const s = await scene()
    const remove = s.root.tools.register(tool('brief'))
    remove()
    expect(s.root.tools.get('brief')).to.equal(undefined)
    expect((await s.root.tools.execute({ name: 'brief', arguments: {} })).code).to.equal('UNKNOWN_TOOL')
  })

  it('keeps a re-registration of the same definition when the first disposer is called again', async () => {
    const s = await scene()
    const definition = tool('again')
    const first = s.root.tools.register(definition)
    first()
    s.root.tools.register(definition)
    first()
    expect(s.root.tools.get('again')?.name).to.equal('again')
  })

  it('serves a definition registered again after a field changed with the changed field', async () => {
    const s = await scene()
    const definition = tool('changing')
    s.root.tools.register(definition)()
    definition.description = 'Changed.'
    s.root.tools.register(definition)
    expect(s.root.tools.get('changing')?.description).to.equal('Changed.')
  })

  it('removes a plugin’s global tool when the plugin is unloaded', async () => {
    const s = await scene()
    const fiber = s.root.plugin({
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.tools.register(tool('plugged'))
      },
    })
    await fiber
    expect(s.root.tools.get('plugged')?.name).to.equal('plugged')
    await fiber.dispose()
    expect(s.root.tools.get('plugged')).to.equal(undefined)
  })
})

describe('scoped tools (SPEC §1.5)', () => {
  it('shows a tool registered through agent.ctx to that agent only', async () => {
    const s = await scene()
    const owner = await s.create()
    const other = await s.create()
    owner.agent.ctx.tools.register(tool('private'))
    expect(s.root.tools.get('private', owner.agent)?.name).to.equal('private')
    expect(s.root.tools.get('private', other.agent)).to.equal(undefined)
    expect(s.root.tools.get('private')).to.equal(undefined)
    const denied = await s.root.tools.execute({ name: 'private', arguments: {}, agent: other.agent })
    expect(textOf(denied)).to.equal('Error: unknown tool "private"')
  })

  it('shadows a global tool of the same name for its agent only', async () => {
    const s = await scene()
    s.root.tools.register(tool('shared', () => 'global'))
    const owner = await s.create()
    const other = await s.create()
    owner.agent.ctx.tools.register({ ...tool('shared', () => 'scoped'), description: 'Scoped version.' })
    expect(textOf(await s.root.tools.execute({ name: 'shared', arguments: {}, agent: owner.agent }))).to.equal('scoped')
    expect(textOf(await s.root.tools.execute({ name: 'shared', arguments: {}, agent: other.agent }))).to.equal('global')
    expect(s.root.tools.schemas(owner.agent).map((schema) => schema.description)).to.deep.equal(['Scoped version.'])
  })

  it('uncovers the global tool again when the scoped one is removed', async () => {
    const s = await scene()
    s.root.tools.register(tool('shared', () => 'global'))
    const { agent } = await s.create()
    const remove = agent.ctx.tools.register(tool('shared', () => 'scoped'))
    remove()
    expect(textOf(await s.root.tools.execute({ name: 'shared', arguments: {}, agent }))).to.equal('global')
  })

  it('lists an agent’s only own tool among the global tools in name order, and a global added later', async () => {
    const s = await scene()
    s.root.tools.register(tool('alpha'))
    s.root.tools.register(tool('zulu'))
    const { agent } = await s.create()
    agent.ctx.tools.register(tool('mid'))
    expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['alpha', 'mid', 'zulu'])
    s.root.tools.register(tool('nova'))
    expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['alpha', 'mid', 'nova', 'zulu'])
  })

  it('gives agents whose only own tool has the same schema one shared listing', async () => {
    const s = await scene()
    s.root.tools.register(tool('alpha'))
    const first = await s.create()
    const second = await s.create()
    first.agent.ctx.tools.register(tool('capture'))
    second.agent.ctx.tools.register(tool('capture'))
    expect(s.root.tools.schemas(second.agent)).to.equal(s.root.tools.schemas(first.agent))
    expect(s.root.tools.schemas(first.agent).map((schema) => schema.name)).to.deep.equal(['alpha', 'capture'])
  })

  it('vanishes when its agent is disposed', async () => {
    const s = await scene()
    const handle = await s.create()
    handle.agent.ctx.tools.register(tool('private'))
    await handle.dispose()
    expect(s.root.tools.get('private', handle.agent)).to.equal(undefined)
  })
})

describe('tools.execute: arguments (SPEC §1.5)', () => {
  it('accepts arguments as JSON text', async () => {
    const s = await scene()
    let seen: unknown
    s.root.tools.register({ ...echo, execute: (args: { text: string }) => (seen = args) })
    await s.root.tools.execute({ name: 'echo', arguments: '{"text":"hi"}' })
    expect(seen).to.deep.equal({ text: 'hi' })
  })

  it('accepts an already-parsed value and hands the body a copy', async () => {
    const s = await scene()
    let seen: unknown
    s.root.tools.register({ ...echo, execute: (args: { text: string }) => (seen = args) })
    const input = { text: 'hi' }
    await s.root.tools.execute({ name: 'echo', arguments: input })
    expect(seen).to.deep.equal({ text: 'hi' })
    expect(seen).to.not.equal(input)
  })

  it('freezes the arguments deeply', async () => {
    const s = await scene()
    let seen!: { list: number[] }
    s.root.tools.register(tool('frozen', (args: { list: number[] }) => void (seen = args)))
    await s.root.tools.execute({ name: 'frozen', arguments: '{"list":[1,2]}' })
    expect(Object.isFrozen(seen)).to.equal(true)
    expect(Object.isFrozen(seen.list)).to.equal(true)
  })

  it('keeps a "__proto__" key as plain data without touching any prototype', async () => {
    const s = await scene()
    let seen!: Record<string, unknown>
    s.root.tools.register(tool('proto', (args: Record<string, unknown>) => void (seen = args)))
    const result = await s.root.tools.execute({ name: 'proto', arguments: '{"__proto__":{"polluted":true},"ok":1}' })
    expect(result.isError).to.equal(false)
    expect(Object.getPrototypeOf(seen)).to.equal(Object.prototype)
    expect(Object.hasOwn(seen, '__proto__')).to.equal(true)
    expect(seen.polluted).to.equal(undefined)
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
  })

  it('validates a "__proto__" property against its schema', async () => {
    const s = await scene()
    s.root.tools.register({
      ...tool('proto'),
      parameters: { type: 'object', properties: { ['__proto__']: { type: 'string' } }, required: ['__proto__'] },
    })
    const result = await s.root.tools.execute({ name: 'proto', arguments: '{"__proto__":5}' })
    expect(result.code).to.equal('INVALID_ARGS')
  })

  it('treats empty JSON text as no arguments', async () => {
    const s = await scene()
    let seen: unknown
    s.root.tools.register(tool('empty', (args: never) => void (seen = args)))
    await s.root.tools.execute({ name: 'empty', arguments: '' })
    expect(seen).to.deep.equal({})
  })

  it('rejects text that is not JSON with INVALID_ARGS, without running the body', async () => {
    const s = await scene()
    s.root.tools.register(tool('strict', () => expect.fail('body ran')))
    const result = await s.root.tools.execute({ name: 'strict', arguments: '{"text":' })
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: invalid arguments: arguments are not valid JSON' }],
      code: 'INVALID_ARGS',
    })
  })

  it('validates against the parameters schema with ajv before the body runs', async () => {
    const s = await scene()
    s.root.tools.register({ ...echo, execute: () => expect.fail('body ran') })
    const result = await s.root.tools.execute({ name: 'echo', arguments: '{"text":5,"extra":true}' })
    expect(result.code).to.equal('INVALID_ARGS')
    expect(textOf(result)).to.equal('Error: invalid arguments: value must NOT have additional property "extra"; value.text must be string')
  })

  it('reports a missing required property by name', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const result = await s.root.tools.execute({ name: 'echo', arguments: {} })
    expect(textOf(result)).to.equal('Error: invalid arguments: value must have required property "text"')
  })
})

describe('tools.execute: results (SPEC §1.5)', () => {
  it('answers an unknown tool with exactly `Error: unknown tool "<name>"`, code UNKNOWN_TOOL', async () => {
    const s = await scene()
    const result = await s.root.tools.execute({ name: 'x', arguments: '{}' })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: unknown tool "x"' }], code: 'UNKNOWN_TOOL' })
  })

  it('renders a returned string as text and keeps it as the value', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const result = await s.root.tools.execute({ name: 'echo', arguments: { text: 'hi' } })
    expect(result).to.deep.equal({ isError: false, value: 'echo: hi', content: [{ type: 'text', text: 'echo: hi' }] })
  })

  it('renders a returned JSON value as JSON text', async () => {
    const s = await scene()
    s.root.tools.register(tool('data', () => ({ answer: 42 })))
    const result = await s.root.tools.execute({ name: 'data', arguments: {} })
    expect(result).to.deep.equal({ isError: false, value: { answer: 42 }, content: [{ type: 'text', text: '{"answer":42}' }] })
  })

  it('passes a returned ToolResult through as it is', async () => {
    const s = await scene()
    const own: ToolResult = { isError: true, content: [{ type: 'text', text: 'custom failure' }], code: 'MINE' }
    s.root.tools.register(tool('custom', () => own))
    expect(await s.root.tools.execute({ name: 'custom', arguments: {} })).to.deep.equal(own)
  })

  it('turns a thrown error into exactly `Error: <message>`, code TOOL_FAILED', async () => {
    const s = await scene()
    s.root.tools.register(
      tool('boom', () => {
        throw new Error('it blew up')
      }),
    )
    const result = await s.root.tools.execute({ name: 'boom', arguments: {} })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: it blew up' }], code: 'TOOL_FAILED' })
  })

  it('keeps the code of a thrown error that has one', async () => {
    const s = await scene()
    s.root.tools.register(
      tool('coded', () => {
        throw Object.assign(new Error('no access'), { code: 'FORBIDDEN' })
      }),
    )
    const result = await s.root.tools.execute({ name: 'coded', arguments: {} })
    expect(result.code).to.equal('FORBIDDEN')
    expect(textOf(result)).to.equal('Error: no access')
  })

  it('turns a rejection of an async body into an error result', async () => {
    const s = await scene()
    s.root.tools.register(tool('later', async () => Promise.reject(new Error('async failure'))))
    const result = await s.root.tools.execute({ name: 'later', arguments: {} })
    expect(textOf(result)).to.equal('Error: async failure')
    expect(result.isError).to.equal(true)
  })

  it('never rejects for the tool’s own failure', async () => {
    const s = await scene()
    s.root.tools.register(
      tool('thrower', () => {
        throw 'not even an Error'
      }),
    )
    const result = await s.root.tools.execute({ name: 'thrower', arguments: {} })
    expect(textOf(result)).to.equal('Error: not even an Error')
  })
})

describe('tool hooks (SPEC §1.5)', () => {
  it('hands the same execution object to the body, pre-execute, post-execute and tools/result', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const seen: ToolExecution[] = []
    s.root.tools.register(tool('probe', (_args, exec) => void seen.push(exec)))
    s.on('tools/pre-execute', (exec: ToolExecution, next: () => Promise<PreExecuteDecision>) => {
      seen.push(exec)
      return next()
    })
    s.on('tools/post-execute', (exec: ToolExecution, _result: ToolResult, next: () => Promise<ToolResult>) => {
      seen.push(exec)
      return next()
    })
    s.on('tools/result', (exec: ToolExecution) => {
      seen.push(exec)
    })
    const signal = new AbortController().signal
    await s.root.tools.execute({ name: 'probe', arguments: '{"a":1}', callId: 'call-7', agent, signal })
    expect(seen).to.have.length(4)
    expect(new Set(seen).size).to.equal(1)
    expect(seen[0]).to.include({ callId: 'call-7', name: 'probe', agent, signal })
    expect(seen[0].args).to.deep.equal({ a: 1 })
    expect(Object.isFrozen(seen[0])).to.equal(true)
  })

  it('gives every execution its own token and carries the parent token it was given', async () => {
    const s = await scene()
    const seen: ToolExecution[] = []
    s.root.tools.register(tool('probe', (_args, exec) => void seen.push(exec)))
    const outer = Symbol('run_code')
    await s.root.tools.execute({ name: 'probe', arguments: {} })
    await s.root.tools.execute({ name: 'probe', arguments: {}, parent: outer })
    expect(typeof seen[0].token).to.equal('symbol')
    expect(seen[0].token).to.not.equal(seen[1].token)
    expect(seen[0].parent).to.equal(undefined)
    expect(seen[1].parent).to.equal(outer)
  })

  it('denies a call when a pre-execute listener says so, without running the body', async () => {
    const s = await scene()
    s.root.tools.register(tool('gated', () => expect.fail('body ran')))
    s.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'not today' }))
    const result = await s.root.tools.execute({ name: 'gated', arguments: {} })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: not today' }], code: 'TOOL_DENIED' })
  })

  it('turns a throwing pre-execute listener into an error result', async () => {
    const s = await scene()
    s.root.tools.register(tool('gated', () => expect.fail('body ran')))
    s.on('tools/pre-execute', () => {
      throw new Error('policy crashed')
    })
    const result = await s.root.tools.execute({ name: 'gated', arguments: {} })
    expect(result.isError).to.equal(true)
    expect(textOf(result)).to.equal('Error: tools/pre-execute listener failed: policy crashed')
  })

  it('lets a post-execute listener turn a success into an error, which tools/result reports', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine'))
    const reported: ToolResult[] = []
    s.on('tools/post-execute', () => ({ isError: true, content: [{ type: 'text', text: 'Error: vetoed' }], code: 'VETOED' }))
    s.on('tools/result', (_exec: ToolExecution, result: ToolResult) => {
      reported.push(result)
    })
    const result = await s.root.tools.execute({ name: 'fine', arguments: {} })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: vetoed' }], code: 'VETOED' })
    expect(reported).to.deep.equal([result])
  })

  it('contains a throwing tools/result listener', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine'))
    s.on('tools/result', () => {
      throw new Error('observer crashed')
    })
    const result = await s.root.tools.execute({ name: 'fine', arguments: {} })
    expect(textOf(result)).to.equal('fine ran')
    expect(s.logged().join('\n')).to.contain('observer crashed')
  })

  const paths: [string, (s: Awaited<ReturnType<typeof scene>>) => Promise<ToolResult>][] = [
    ['a success', async (s) => s.root.tools.execute({ name: 'ok', arguments: {} })],
    ['an unknown tool', async (s) => s.root.tools.execute({ name: 'missing', arguments: {} })],
    ['invalid JSON', async (s) => s.root.tools.execute({ name: 'ok', arguments: '{' })],
    ['a schema violation', async (s) => s.root.tools.execute({ name: 'echo', arguments: {} })],
    ['a throwing body', async (s) => s.root.tools.execute({ name: 'boom', arguments: {} })],
    [
      'a denial',
      async (s) => {
        s.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'no' }))
        return s.root.tools.execute({ name: 'ok', arguments: {} })
      },
    ],
    [
      'a guard',
      async (s) => {
        s.root.tools.guard(() => 'guarded')
        return s.root.tools.execute({ name: 'ok', arguments: {} })
      },
    ],
    [
      'a throwing pre-execute listener',
      async (s) => {
        s.on('tools/pre-execute', () => {
          throw new Error('pre crashed')
        })
        return s.root.tools.execute({ name: 'ok', arguments: {} })
      },
    ],
    [
      'a post-execute replacement',
      async (s) => {
        s.on('tools/post-execute', () => ({ isError: true, content: [{ type: 'text', text: 'Error: replaced' }] }))
        return s.root.tools.execute({ name: 'ok', arguments: {} })
      },
    ],
    [
      'a throwing post-execute listener',
      async (s) => {
        s.on('tools/post-execute', () => {
          throw new Error('post crashed')
        })
        return s.root.tools.execute({ name: 'ok', arguments: {} })
      },
    ],
  ]
  for (const [label, run] of paths) {
    it(`emits tools/result exactly once for ${label}, with the returned result`, async () => {
      const s = await scene()
      s.root.tools.register(tool('ok'))
      s.root.tools.register(echo)
      s.root.tools.register(
        tool('boom', () => {
          throw new Error('boom')
        }),
      )
      const reported: ToolResult[] = []
      s.on('tools/result', (_exec: ToolExecution, result: ToolResult) => {
        reported.push(result)
      })
      const result = await run(s)
      expect(reported).to.have.length(1)
      expect(reported[0]).to.equal(result)
    })
  }
})

describe('tools.guard (SPEC §1.5)', () => {
  it('denies a call with the reason it returns, without running the body', async () => {
    const s = await scene()
    s.root.tools.register(tool('guarded', () => expect.fail('body ran')))
    s.root.tools.guard((exec) => (exec.name === 'guarded' ? 'too dangerous' : undefined))
    const result = await s.root.tools.execute({ name: 'guarded', arguments: {} })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: too dangerous' }], code: 'TOOL_DENIED' })
  })

  it("lists an agent's own guards in guardsOf as a snapshot, without the global ones", async () => {
    const s = await scene()
    const { agent } = await s.create()
    const global = () => undefined
    const first = () => undefined
    const second = () => 'no'
    s.root.tools.guard(global)
    agent.ctx.tools.guard(first)
    const removeSecond = agent.ctx.tools.guard(second)
    const snapshot = s.root.tools.guardsOf(agent)
    removeSecond()
    expect(snapshot).to.deep.equal([first, second])
    expect(s.root.tools.guardsOf(agent)).to.deep.equal([first])
  })

  it('lets a call through when it returns undefined', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine'))
    s.root.tools.guard(() => undefined)
    expect(textOf(await s.root.tools.execute({ name: 'fine', arguments: {} }))).to.equal('fine ran')
  })

  it('runs after the whole pre-execute waterfall: a prepended allow that skips next() cannot override it', async () => {
    const s = await scene()
    s.root.tools.register(tool('guarded', () => expect.fail('body ran')))
    const order: string[] = []
    s.root.tools.guard(() => {
      order.push('guard')
      return 'guard says no'
    })
    s.on('tools/pre-execute', (_exec: ToolExecution, next: () => Promise<PreExecuteDecision>) => {
      order.push('inner listener')
      return next()
    })
    s.on(
      'tools/pre-execute',
      () => {
        order.push('prepended allow')
        return { kind: 'allow' }
      },
      { prepend: true },
    )
    const result = await s.root.tools.execute({ name: 'guarded', arguments: {} })
    expect(order).to.deep.equal(['prepended allow', 'guard'])
    expect(textOf(result)).to.equal('Error: guard says no')
  })

  it('sees the execution object the body would get', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine'))
    const seen: ToolExecution[] = []
    s.root.tools.guard((exec) => void seen.push(exec))
    s.on('tools/result', (exec: ToolExecution) => {
      seen.push(exec)
    })
    await s.root.tools.execute({ name: 'fine', arguments: {} })
    expect(seen[0]).to.equal(seen[1])
  })

  it('applies a guard registered through agent.ctx to that agent only', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine'))
    const guarded = await s.create()
    const free = await s.create()
    guarded.agent.ctx.tools.guard(() => 'not for you')
    expect(textOf(await s.root.tools.execute({ name: 'fine', arguments: {}, agent: guarded.agent }))).to.equal('Error: not for you')
    expect(textOf(await s.root.tools.execute({ name: 'fine', arguments: {}, agent: free.agent }))).to.equal('fine ran')
  })

  it('turns a throwing guard into an error result', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine', () => expect.fail('body ran')))
    s.root.tools.guard(() => {
      throw new Error('guard crashed')
    })
    const result = await s.root.tools.execute({ name: 'fine', arguments: {} })
    expect(textOf(result)).to.equal('Error: tool guard failed: guard crashed')
  })

  it('stops guarding once its disposer is called', async () => {
    const s = await scene()
    s.root.tools.register(tool('fine'))
    const remove = s.root.tools.guard(() => 'no')
    remove()
    expect(textOf(await s.root.tools.execute({ name: 'fine', arguments: {} }))).to.equal('fine ran')
  })
})

describe('tools.restrict (SPEC §1.5)', () => {
  async function withGlobals() {
    const s = await scene()
    for (const name of ['read', 'write', 'shell']) s.root.tools.register(tool(name))
    return s
  }

  it('hides denied global tools from the agent’s schemas, get and execute', async () => {
    const s = await withGlobals()
    const { agent } = await s.create()
    agent.ctx.tools.restrict({ deny: ['shell'] })
    expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['read', 'write'])
    expect(s.root.tools.get('shell', agent)).to.equal(undefined)
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: unknown tool "shell"' }], code: 'UNKNOWN_TOOL' })
  })

  it('hides every global tool outside an allow list', async () => {
    const s = await withGlobals()
    const { agent } = await s.create()
    agent.ctx.tools.restrict({ allow: ['read'] })
    expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['read'])
    expect((await s.root.tools.execute({ name: 'write', arguments: {}, agent })).code).to.equal('UNKNOWN_TOOL')
  })

  it('keeps the agent’s own scoped tools visible', async () => {
    const s = await withGlobals()
    const { agent } = await s.create()
    agent.ctx.tools.register(tool('mine'))
    agent.ctx.tools.restrict({ allow: ['read'] })
    expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['mine', 'read'])
  })

  it('leaves other agents and tool-less callers unrestricted', async () => {
    const s = await withGlobals()
    const restricted = await s.create()
    const other = await s.create()
    restricted.agent.ctx.tools.restrict({ deny: ['shell'] })
    expect(s.root.tools.get('shell', other.agent)?.name).to.equal('shell')
    expect(s.root.tools.schemas().map((schema) => schema.name)).to.deep.equal(['read', 'shell', 'write'])
  })

  it('shows the model only what the restriction leaves', async () => {
    const s = await withGlobals()
    const { agent } = await s.create()
    agent.ctx.tools.restrict({ deny: ['shell', 'write'] })
    s.scripted.push({ text: 'ok' })
    agent.followup('hello')
    await agent.whenIdle()
    expect(s.scripted.requests[0].tools?.map((schema) => schema.name)).to.deep.equal(['read'])
  })

  it('throws `unknown global tool "<name>"` for a name no global tool has', async () => {
    const s = await withGlobals()
    const { agent } = await s.create()
    expect(() => agent.ctx.tools.restrict({ allow: ['read', 'nope'] })).to.throw('unknown global tool "nope"')
    expect(() => agent.ctx.tools.restrict({ deny: ['ghost'] })).to.throw('unknown global tool "ghost"')
    expect(s.root.tools.schemas(agent)).to.have.length(3)
  })

  it('is only available on an agent context', async () => {
    const s = await withGlobals()
    expect(() => s.root.tools.restrict({ deny: ['shell'] })).to.throw(TypeError, 'tools.restrict() is only available on an agent context')
  })

  it('lifts the restriction when its disposer is called', async () => {
    const s = await withGlobals()
    const { agent } = await s.create()
    const lift = agent.ctx.tools.restrict({ deny: ['shell'] })
    lift()
    expect(s.root.tools.get('shell', agent)?.name).to.equal('shell')
  })
})

describe('tools in a turn (SPEC §1.5)', () => {
  it('passes the turn signal and the agent to the body', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const seen: ToolExecution[] = []
    s.root.tools.register(tool('probe', (_args, exec) => void seen.push(exec)))
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'probe', arguments: '{}' }] }, { text: 'done' })
    agent.followup('hello')
    await agent.whenIdle()
    expect(seen[0].agent).to.equal(agent)
    expect(seen[0].callId).to.equal('c1')
    expect(seen[0].signal).to.equal(s.scripted.requests[0].signal)
  })
})

describe('tools.register: parameters ajv cannot compile', () => {
  it('rejects the registration with the compiler message', async () => {
    const host = await scene()
    expect(() =>
      host.root.tools.register({
        name: 'broken',
        description: 'b',
        parameters: { type: 'object', properties: { a: { $ref: '#/nope' } } },
        execute: () => 1,
      }),
    ).to.throw(TypeError, /^tool "broken" parameters: invalid JSON schema: /)
    expect(host.root.tools.get('broken')).to.equal(undefined)
  })
})
