import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, PromptAssembly, PromptSection } from '../../lib/types.ts'
import { scene } from '../support/scene.ts'

type Next = () => PromptAssembly

describe('systemPrompt.assemble (SPEC §1.6)', () => {
  it('orders sections by order and joins them with a blank line', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'tools', order: 100, text: 'Use tools wisely.' })
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'You are terse.' })
    const { agent } = await s.create()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('You are terse.\n\nUse tools wisely.')
  })

  it('breaks ties by registration order', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'b', order: 5, text: 'first registered' })
    s.root.systemPrompt.section({ name: 'a', order: 5, text: 'second registered' })
    const { agent } = await s.create()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('first registered\n\nsecond registered')
  })

  it('drops empty sections from the text', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'one', order: 1, text: 'one' })
    s.root.systemPrompt.section({ name: 'blank', order: 2, text: '' })
    s.root.systemPrompt.section({ name: 'three', order: 3, text: 'three' })
    const { agent } = await s.create()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('one\n\nthree')
  })

  it('is empty when there are no sections', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(s.root.systemPrompt.assemble(agent)).to.deep.equal({ sections: [], text: '' })
  })

  it('lists the sections it was built from', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'You are terse.' })
    const { agent } = await s.create()
    expect(s.root.systemPrompt.assemble(agent).sections).to.deep.equal([{ name: 'persona', order: 0, text: 'You are terse.' }])
  })

  it('sees a section added after an earlier assembly', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.root.systemPrompt.assemble(agent)
    const remove = s.root.systemPrompt.section({ name: 'late', order: 1, text: 'late' })
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('late')
    remove()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('')
  })

  it('hands out a result that no caller can edit into another agent’s prompt', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Persona.' })
    const first = await s.create()
    const second = await s.create()
    const assembled = s.root.systemPrompt.assemble(first.agent)
    expect(() => (assembled.sections as PromptSection[]).push({ name: 'sneaky', order: 1, text: 'Sneaky.' })).to.throw(TypeError)
    expect(s.root.systemPrompt.assemble(second.agent).sections).to.deep.equal([{ name: 'persona', order: 0, text: 'Persona.' }])
  })

  it('rejects a section without a finite order', async () => {
    const s = await scene()
    expect(() => s.root.systemPrompt.section({ name: 'x', order: Number.NaN, text: 'x' })).to.throw(
      TypeError,
      'prompt section "x" order must be a finite number',
    )
  })
})

describe('scoped sections (SPEC §1.6)', () => {
  it('shadows a global section of the same name for its agent only', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Deployment persona.' })
    s.root.systemPrompt.section({ name: 'rules', order: 10, text: 'Be safe.' })
    const child = await s.create()
    const sibling = await s.create()
    child.agent.ctx.systemPrompt.section({ name: 'persona', order: 0, text: 'Child persona.' })
    expect(s.root.systemPrompt.assemble(child.agent).text).to.equal('Child persona.\n\nBe safe.')
    expect(s.root.systemPrompt.assemble(sibling.agent).text).to.equal('Deployment persona.\n\nBe safe.')
  })

  it('adds a section of a new name for its agent only', async () => {
    const s = await scene()
    const child = await s.create()
    const sibling = await s.create()
    child.agent.ctx.systemPrompt.section({ name: 'extra', order: 190, text: 'Report with the tool.' })
    expect(s.root.systemPrompt.assemble(child.agent).text).to.equal('Report with the tool.')
    expect(s.root.systemPrompt.assemble(sibling.agent).text).to.equal('')
  })

  it('restores the global section when the scoped one is removed', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Deployment persona.' })
    const { agent } = await s.create()
    const remove = agent.ctx.systemPrompt.section({ name: 'persona', order: 0, text: 'Child persona.' })
    remove()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('Deployment persona.')
  })

  it('reaches the model request as the system prompt', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Deployment persona.' })
    const { agent } = await s.create()
    agent.ctx.systemPrompt.section({ name: 'persona', order: 0, text: 'Child persona.' })
    s.scripted.push({ text: 'ok' })
    agent.followup('hello')
    await agent.whenIdle()
    expect(s.scripted.requests[0].system).to.equal('Child persona.')
  })

  it('goes with the plugin that registered a global section', async () => {
    const s = await scene()
    const fiber = s.root.plugin({
      inject: ['systemPrompt'],
      apply: (ctx: Context) => {
        ctx.systemPrompt.section({ name: 'plugged', order: 1, text: 'from a plugin' })
      },
    })
    await fiber
    const { agent } = await s.create()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('from a plugin')
    await fiber.dispose()
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('')
  })
})

describe('system-prompt/assemble (SPEC §1.6)', () => {
  it('lets a listener add a section, placed by its order', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Persona.' })
    s.root.systemPrompt.section({ name: 'tail', order: 200, text: 'Tail.' })
    const { agent } = await s.create()
    agent.ctx.on('system-prompt/assemble', (assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      assembly.sections.push({ name: 'middle', order: 100, text: 'Middle.' })
      return next()
    })
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('Persona.\n\nMiddle.\n\nTail.')
  })

  it('gives agents assembled in turn each their own text when a listener edits a section in place', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Persona.' })
    s.on('system-prompt/assemble', (assembly: PromptAssembly, info: { agent: Agent }, next: Next) => {
      assembly.sections[0]!.text = `Persona of ${info.agent.id}.`
      return next()
    })
    const first = (await s.create({ sessionId: 'first' })).agent
    const second = (await s.create({ sessionId: 'second' })).agent
    const texts = [first, second, first].map((agent) => s.root.systemPrompt.assemble(agent).text)
    expect(texts).to.deep.equal(['Persona of first.', 'Persona of second.', 'Persona of first.'])
  })

  it('lets a listener drop a section', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Persona.' })
    s.root.systemPrompt.section({ name: 'noise', order: 1, text: 'Noise.' })
    const { agent } = await s.create()
    agent.ctx.on('system-prompt/assemble', (assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      assembly.sections = assembly.sections.filter((section) => section.name !== 'noise')
      return next()
    })
    const assembled = s.root.systemPrompt.assemble(agent)
    expect(assembled.text).to.equal('Persona.')
    expect(assembled.sections.map((section) => section.name)).to.deep.equal(['persona'])
  })

  it('lets a listener reorder sections by changing their order', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'a', order: 1, text: 'A.' })
    s.root.systemPrompt.section({ name: 'b', order: 2, text: 'B.' })
    const { agent } = await s.create()
    agent.ctx.on('system-prompt/assemble', (assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      assembly.sections = assembly.sections.map((section) => (section.name === 'a' ? { ...section, order: 3 } : section))
      return next()
    })
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('B.\n\nA.')
  })

  it('takes the listener’s order of sections that tie', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'a', order: 1, text: 'A.' })
    s.root.systemPrompt.section({ name: 'b', order: 1, text: 'B.' })
    const { agent } = await s.create()
    agent.ctx.on('system-prompt/assemble', (assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      assembly.sections.reverse()
      return next()
    })
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('B.\n\nA.')
  })

  it('uses what a listener returns without calling next(): it owns the result', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Persona.' })
    const { agent } = await s.create()
    const inner: string[] = []
    agent.ctx.on('system-prompt/assemble', (_assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      inner.push('inner ran')
      return next()
    })
    s.on('system-prompt/assemble', () => ({ sections: [{ name: 'only', order: 0, text: 'Only this.' }] }))
    const assembled = s.root.systemPrompt.assemble(agent)
    expect(assembled).to.deep.equal({ sections: [{ name: 'only', order: 0, text: 'Only this.' }], text: 'Only this.' })
    expect(inner).to.deep.equal([])
  })

  it('passes the agent being assembled for', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const seen: Agent[] = []
    s.on('system-prompt/assemble', (_assembly: PromptAssembly, info: { agent: Agent }, next: Next) => {
      seen.push(info.agent)
      return next()
    })
    s.root.systemPrompt.assemble(agent)
    expect(seen).to.deep.equal([agent])
  })

  it('runs an agent’s scoped listener for that agent only', async () => {
    const s = await scene()
    const shaped = await s.create()
    const plain = await s.create()
    shaped.agent.ctx.on('system-prompt/assemble', (assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      assembly.sections.push({ name: 'extra', order: 1, text: 'Extra.' })
      return next()
    })
    expect(s.root.systemPrompt.assemble(shaped.agent).text).to.equal('Extra.')
    expect(s.root.systemPrompt.assemble(plain.agent).text).to.equal('')
  })

  it('does not let one assembly’s edits leak into the next', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Persona.' })
    const { agent } = await s.create()
    let calls = 0
    agent.ctx.on('system-prompt/assemble', (assembly: PromptAssembly, _info: { agent: Agent }, next: Next) => {
      calls++
      assembly.sections.push({ name: `added${calls}`, order: 1, text: `Added ${calls}.` })
      return next()
    })
    s.root.systemPrompt.assemble(agent)
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('Persona.\n\nAdded 2.')
  })
})

describe('sections of one name from several plugins', () => {
  it('never revives a removed section, whatever the removal order', async () => {
    const host = await scene()
    const agent = await host.agent()
    const plugin = (text: string) => ({
      inject: ['systemPrompt'],
      apply: (ctx: Context) => void ctx.systemPrompt.section({ name: 'persona', order: 0, text }),
    })
    const a = host.root.plugin(plugin('A'))
    const b = host.root.plugin(plugin('B'))
    await a
    await b
    expect(host.root.systemPrompt.assemble(agent).text).to.equal('B')
    await a.dispose()
    expect(host.root.systemPrompt.assemble(agent).text).to.equal('B')
    await b.dispose()
    expect(host.root.systemPrompt.assemble(agent).text).to.equal('')
  })
})
