import { expect } from 'chai'
import { PeerDependencyError } from '../../lib/peer-dependency.ts'
import { loadAdapterModule } from '../../plugins/openai-model/client-module.ts'

describe('OpenAIModel: loading the openai client', () => {
  it('loads the adapter with the openai client when the package is installed', async () => {
    const module = await loadAdapterModule()
    expect(module.createOpenAIAdapter).to.be.a('function')
  })

  it('rejects with an error naming openai and its install line when the package is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package 'openai' imported from /app/adapter.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    })
    const error = await loadAdapterModule(() => Promise.reject(missing)).then(
      () => expect.fail('no error'),
      (reason: unknown) => reason,
    )
    expect(error).to.be.instanceOf(PeerDependencyError)
    expect(error).to.have.property(
      'message',
      'OpenAIModel needs the optional package "openai", which is not installed: npm i openai@^6.30.1',
    )
  })
})
