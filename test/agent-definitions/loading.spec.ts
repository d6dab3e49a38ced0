import { expect } from 'chai'
import { MAX_DEFINITION_BYTES } from '../../lib/agent-definition/front-matter.ts'
import { formatProblem } from '../../plugins/agent-definitions/index.ts'
import { definitionScene, definitionText } from './fixture.ts'

const researcher = definitionText({ name: 'researcher', description: 'Finds facts; never edits.' }, 'You research.')

describe('AgentDefinitions: loading definition files', () => {
  it('lists the valid definitions of the folder, sorted by name, with the body as persona', async () => {
    const { host, folder } = await definitionScene({
      files: { 'b.md': researcher, 'a.md': definitionText({ name: 'auditor', description: 'Audits.', maxSteps: 4 }) },
    })
    const service = host.root.agentDefinitions
    expect(service.list().map((definition) => definition.name)).to.deep.equal(['auditor', 'researcher'])
    expect(service.get('researcher')).to.include({ persona: 'You research.', source: `${folder}/b.md` })
    expect(service.get('nobody')).to.equal(undefined)
    expect(service.errors()).to.deep.equal([])
  })

  it('loads the valid files beside a broken one and reports the broken one with its path, line and a did-you-mean', async () => {
    const { host, folder } = await definitionScene({
      files: { 'good.md': researcher, 'typo.md': '---\nname: writer\ndescription: Writes.\ntoolz: [read]\n---\n' },
    })
    expect(host.root.agentDefinitions.list().map((definition) => definition.name)).to.deep.equal(['researcher'])
    expect(host.root.agentDefinitions.errors().map(formatProblem)).to.deep.equal([`${folder}/typo.md:4: unknown field "toolz" (did you mean "tools"?)`])
  })

  it('reports bad YAML with the file line it is on', async () => {
    const { host, folder } = await definitionScene({ files: { 'bad.md': '---\nname: x\ndescription: "unclosed\n---\n' } })
    const [problem] = host.root.agentDefinitions.errors()
    expect(problem!.source).to.equal(`${folder}/bad.md`)
    expect(problem!.line).to.be.a('number')
    expect(problem!.message).to.match(/^invalid YAML: /)
  })

  it('refuses a 10 MB file without reading it, and keeps the rest', async () => {
    const big = `---\nname: big\ndescription: Big.\n---\n${'x'.repeat(10 * 1024 * 1024)}`
    const { host, folder } = await definitionScene({ files: { 'big.md': big, 'good.md': researcher } })
    expect(host.root.agentDefinitions.list().map((definition) => definition.name)).to.deep.equal(['researcher'])
    expect(host.root.agentDefinitions.errors().map(formatProblem)).to.deep.equal([
      `${folder}/big.md: file is ${Buffer.byteLength(big)} bytes, more than the ${MAX_DEFINITION_BYTES} a definition may have`,
    ])
  })

  it('refuses binary junk', async () => {
    const junk = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)
    const { host, folder } = await definitionScene({ files: { 'junk.md': junk, 'good.md': researcher } })
    expect(host.root.agentDefinitions.list()).to.have.length(1)
    expect(host.root.agentDefinitions.errors().map(formatProblem)).to.deep.equal([`${folder}/junk.md: file is not text (it holds a NUL byte)`])
  })

  it('refuses a front matter bomb of nested aliases', async () => {
    const rows = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]']
    for (let i = 1; i < 10; i++) rows.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`)
    const bomb = `---\nname: bomb\ndescription: Boom.\n${rows.join('\n')}\n---\n`
    const { host, folder } = await definitionScene({ files: { 'bomb.md': bomb, 'good.md': researcher } })
    expect(host.root.agentDefinitions.list()).to.have.length(1)
    expect(host.root.agentDefinitions.errors().map(formatProblem)).to.deep.equal([
      `${folder}/bomb.md: front matter could not be parsed: its aliases expand too far (more than 32 expansions)`,
    ])
  })

  it('reports a name clash on the second file and keeps the first definition', async () => {
    const { host, folder } = await definitionScene({
      files: { 'a.md': researcher, 'b.md': definitionText({ name: 'researcher', description: 'An impostor.' }) },
    })
    expect(host.root.agentDefinitions.get('researcher')?.description).to.equal('Finds facts; never edits.')
    expect(host.root.agentDefinitions.errors().map(formatProblem)).to.deep.equal([`${folder}/b.md: name "researcher" is already defined in ${folder}/a.md`])
  })

  it('reports a definition whose tools name no tool that exists', async () => {
    const { host, folder } = await definitionScene({
      files: { 'a.md': definitionText({ name: 'reader', description: 'Reads.', tools: ['read_fiel', 'nothing__*'] }) },
    })
    expect(host.root.agentDefinitions.list()).to.have.length(1)
    expect(host.root.agentDefinitions.errors().map(formatProblem)).to.deep.equal([`${folder}/a.md: tools "read_fiel", "nothing__*" match no tool`])
  })

  it('reads inline definitions from the config before the files', async () => {
    const { host } = await definitionScene({
      files: { 'a.md': definitionText({ name: 'inline', description: 'From a file.' }) },
      config: { definitions: [{ name: 'inline', description: 'From the config.', persona: 'Be brief.' }] },
    })
    expect(host.root.agentDefinitions.get('inline')).to.include({ description: 'From the config.', persona: 'Be brief.', source: 'definitions[0]' })
    expect(host.root.agentDefinitions.errors()).to.have.length(1)
  })

  it('has no definitions and no problems for a folder that does not exist', async () => {
    const { host } = await definitionScene({ config: { dirs: ['/nonexistent/agents-folder'] } })
    expect(host.root.agentDefinitions.list()).to.deep.equal([])
    expect(host.root.agentDefinitions.errors()).to.deep.equal([])
  })
})
