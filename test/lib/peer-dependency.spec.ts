import { expect } from 'chai'
import { SubagentError } from '../../lib/errors.ts'
import {
  assertSupportedCordis,
  importOptionalPeer,
  isMissingPackage,
  PeerDependencyError,
  SUPPORTED_CORDIS,
} from '../../lib/peer-dependency.ts'

function notFound(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

const peer = { plugin: 'OpenAIModel', packageName: 'openai', range: '^6.30.1' }

describe('assertSupportedCordis', () => {
  it('accepts the pinned release', () => {
    expect(() => assertSupportedCordis('4.0.0-rc.10')).not.to.throw()
    expect(SUPPORTED_CORDIS).to.equal('4.0.0-rc.10')
  })

  it('rejects the registry latest 3.x naming both versions and the install line', () => {
    expect(() => assertSupportedCordis('3.18.1'))
      .to.throw(PeerDependencyError)
      .with.property(
        'message',
        'subagent-inprocess supports cordis 4.0.0-rc.10 only, but the host loads cordis 3.18.1: npm i cordis@4.0.0-rc.10',
      )
  })

  it('rejects another 4.0 release candidate', () => {
    expect(() => assertSupportedCordis('4.0.0-rc.11')).to.throw(PeerDependencyError, 'but the host loads cordis 4.0.0-rc.11')
  })

  it('rejects a manifest without a version', () => {
    expect(() => assertSupportedCordis(undefined)).to.throw(
      'subagent-inprocess supports cordis 4.0.0-rc.10 only, but the host loads a cordis without a version: npm i cordis@4.0.0-rc.10',
    )
  })

  it('throws an error with code PEER_DEPENDENCY naming the package', () => {
    try {
      assertSupportedCordis('3.0.0')
      expect.fail('no error')
    } catch (error) {
      expect(SubagentError.is(error)).to.equal(true)
      expect(error).to.include({ name: 'PeerDependencyError', code: 'PEER_DEPENDENCY', packageName: 'cordis' })
    }
  })
})

describe('isMissingPackage', () => {
  it('recognises the ESM resolver failing on the package', () => {
    const error = notFound('ERR_MODULE_NOT_FOUND', "Cannot find package 'openai' imported from /app/index.js")
    expect(isMissingPackage(error, 'openai')).to.equal(true)
  })

  it('recognises the CommonJS resolver failing on a subpath of the package', () => {
    const error = notFound('MODULE_NOT_FOUND', "Cannot find module '@jitl/quickjs-wasmfile-release-sync/wasm'")
    expect(isMissingPackage(error, '@jitl/quickjs-wasmfile-release-sync')).to.equal(true)
  })

  it('does not blame the package when one of its own imports is missing', () => {
    const error = notFound('ERR_MODULE_NOT_FOUND', "Cannot find package 'formdata-node' imported from /app/node_modules/openai/index.mjs")
    expect(isMissingPackage(error, 'openai')).to.equal(false)
  })

  it('does not take a package whose name merely starts the same for the missing one', () => {
    const error = notFound('ERR_MODULE_NOT_FOUND', "Cannot find package 'openai-extra' imported from /app/index.js")
    expect(isMissingPackage(error, 'openai')).to.equal(false)
  })

  it('ignores errors of other kinds', () => {
    expect(isMissingPackage(new Error("Cannot find package 'openai'"), 'openai')).to.equal(false)
    expect(isMissingPackage("Cannot find package 'openai'", 'openai')).to.equal(false)
  })
})

describe('importOptionalPeer', () => {
  it('resolves to what the loader gives', async () => {
    const module = { value: 1 }
    expect(await importOptionalPeer(async () => module, peer)).to.equal(module)
  })

  it('rejects a missing peer with the plugin, the package and the install line', async () => {
    const cause = notFound('ERR_MODULE_NOT_FOUND', "Cannot find package 'openai' imported from /app/adapter.js")
    const error = await importOptionalPeer(() => Promise.reject(cause), peer).then(
      () => expect.fail('no error'),
      (reason: unknown) => reason,
    )
    expect(error).to.be.instanceOf(PeerDependencyError)
    expect(error).to.include({
      message: 'OpenAIModel needs the optional package "openai", which is not installed: npm i openai@^6.30.1',
      packageName: 'openai',
      cause,
    })
  })

  it('passes any other failure on unchanged', async () => {
    const failure = new SyntaxError('Unexpected token')
    const error = await importOptionalPeer(() => Promise.reject(failure), peer).then(
      () => expect.fail('no error'),
      (reason: unknown) => reason,
    )
    expect(error).to.equal(failure)
  })
})
