import { expect } from 'chai'
import { Context, Service, symbols } from 'cordis'
import sinon from 'sinon'
import {
  CordisAssumptionError,
  checkCordisAssumptions,
  isDisposedForGood,
  listenDirect,
  listenerTable,
  rawService,
  skipShadow,
} from '../../cordis-glue/bridge.ts'
import { scopeOf } from '../../plugins/host/scope.ts'
import { scene } from '../support/scene.ts'

declare module 'cordis' {
  interface Context {
    callerProbe: CallerProbe
  }
}

class CallerProbe extends Service {
  constructor(ctx: Context) {
    super(ctx, 'callerProbe')
    skipShadow(this)
  }

  caller(): Context {
    return this.ctx
  }
}

describe('cordis bridge: the cordis internals the host relies on (4.0.0-rc.10)', () => {
  it("tells a fiber disposed for good from one unloading for a config update's restart", async () => {
    const root = new Context()
    const seen: boolean[] = []
    const plugin = (ctx: Context, _config: { round: number }) => {
      ctx.effect(() => () => {
        seen.push(isDisposedForGood(ctx.fiber))
      })
    }
    const fiber = root.plugin(plugin, { round: 1 })
    await fiber
    await fiber.update({ round: 2 })
    await fiber.dispose()
    expect(seen).to.deep.equal([false, true])
  })

  afterEach(() => sinon.restore())

  it('passes its load-time check on the installed cordis', () => {
    expect(() => checkCordisAssumptions()).not.to.throw()
  })

  it('names the supported release when an assumption fails', () => {
    sinon.replace(symbols as { tracker: symbol }, 'tracker', Symbol('another tracker'))
    expect(() => checkCordisAssumptions())
      .to.throw(CordisAssumptionError)
      .with.property('message', 'subagent-inprocess supports cordis 4.0.0-rc.10 only: symbols.tracker is not Service.tracker')
  })

  it('unwraps a service from its tracing proxy through symbols.original, and leaves a plain value alone', async () => {
    const s = await scene()
    const raw = rawService(s.root.events)
    expect(raw).not.to.equal(s.root.events)
    expect(rawService(raw)).to.equal(raw)
    const plain = { a: 1 }
    expect(rawService(plain)).to.equal(plain)
    await s.end()
  })

  it('reads the live listener table: ctx.on enters {ctx, callback}, removing the last one deletes the name', async () => {
    const s = await scene()
    const table = listenerTable(s.root.events)
    const listener = () => {}
    const remove = s.root.on('subagent/start', listener)
    expect(table['subagent/start']?.map((hook) => (hook as { ctx?: unknown }).ctx)).to.deep.equal([s.root])
    expect(table['subagent/start']?.map((hook) => typeof hook.callback)).to.deep.equal(['function'])
    remove()
    expect(table['subagent/start']).to.equal(undefined)
    await s.end()
  })

  it('enters a direct listener first with prepend, as cordis does, and removes it with its plugin', async () => {
    const s = await scene()
    const table = listenerTable(s.root.events)
    const before = () => {}
    const remove = s.root.on('subagent/start', before)
    const direct = () => {}
    const plugin = s.root.plugin((ctx: Context) => listenDirect(ctx, 'subagent/start', direct, { prepend: true }))
    await plugin
    expect(table['subagent/start']?.map((hook) => hook.callback === direct)).to.deep.equal([true, false])
    await plugin.dispose()
    expect(table['subagent/start']).to.have.length(1)
    remove()
    await s.end()
  })

  it('marks a service noShadow through its tracker, and its methods still see the caller as this.ctx', async () => {
    const s = await scene()
    const provider = await s.root.plugin(CallerProbe)
    const tracker = (rawService(s.root.callerProbe) as unknown as { [key: symbol]: { noShadow?: boolean } })[symbols.tracker]
    expect(tracker.noShadow).to.equal(true)
    let caller: Context | undefined
    let user: Context | undefined
    const consumer = await s.root.plugin({
      name: 'caller-user',
      inject: ['callerProbe'],
      apply: (ctx: Context) => {
        user = ctx
        caller = ctx.callerProbe.caller()
      },
    })
    expect(caller).to.equal(user)
    await consumer.dispose()
    await provider.dispose()
    await s.end()
  })

  it('looks for no ctx.accessor named after a method of a noShadow service', async () => {
    const s = await scene()
    const provider = await s.root.plugin(CallerProbe)
    // cordis would answer `ctx.callerProbe.caller` from this accessor if the service still asked for it
    const mixin = await s.root.plugin((ctx: Context) => {
      ctx.accessor('callerProbe.caller', { get: () => () => 'from the accessor' })
    })
    expect(s.root.callerProbe.caller()).to.equal(s.root)
    await mixin.dispose()
    await provider.dispose()
    await s.end()
  })

  it('hands out the sessions service itself on every read, without a tracing proxy', async () => {
    const s = await scene()
    const sessions = s.root.sessions
    expect(s.root.sessions).to.equal(sessions)
    expect(rawService(sessions)).to.equal(sessions)
    await s.end()
  })

  it('puts a listener for an event about agents, registered in a sub-plugin of an agent context, into that agent\'s table', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const listener = () => {}
    await agent.ctx.plugin((ctx: Context) => void ctx.on('agent/turn-stop', listener))
    expect(scopeOf(agent)?.hooksFor('agent/turn-stop')).to.have.length(1)
    expect(listenerTable(s.root.events)['agent/turn-stop']).to.equal(undefined)
    await s.end()
  })

  it('registers a listener for an event about agents on the agent context itself without making its fiber', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.on('agent/turn-stop', () => {})
    expect(scopeOf(agent)?.hooksFor('agent/turn-stop')).to.have.length(1)
    expect(scopeOf(agent)?.fiber).to.equal(undefined)
    await s.end()
  })

  it('lets a sub-plugin of an agent context read the host services without inject', async () => {
    const s = await scene()
    const { agent } = await s.create()
    let tools: unknown
    await agent.ctx.plugin((ctx: Context) => {
      tools = ctx.tools
    })
    expect(rawService(tools)).to.equal(rawService(s.root.tools))
    await s.end()
  })

  it('rejects reading any other service through an agent context without inject', async () => {
    const s = await scene()
    const { agent } = await s.create()
    let failure: unknown
    await agent.ctx.plugin((ctx: Context) => {
      try {
        void ctx.scripted
      } catch (error) {
        failure = error
      }
    })
    expect(failure).to.be.instanceOf(Error).with.property('message', 'cannot get property "scripted" without inject')
    await s.end()
  })

  it('reports the host\'s dispatches to cordis\'s internal/dispatch observers', async () => {
    const s = await scene()
    const heard: unknown[][] = []
    s.on('internal/dispatch', (mode, name, args, thisArg) => {
      if (name === 'agent/created') heard.push([mode, name, args.length, thisArg])
    })
    s.on('agent/created', () => {})
    await s.create()
    expect(heard).to.deep.equal([['emit', 'agent/created', 1, null]])
    await s.end()
  })
})
