import { expect } from 'chai'
import { MCP_SDK_RANGE, loadLinkModule } from '../../plugins/mcp-tools/sdk-module.ts'

describe('McpTools without @modelcontextprotocol/sdk', () => {
  it('fails to start with a PeerDependencyError naming the package and its install line', async () => {
    const missing = Object.assign(new Error("Cannot find package '@modelcontextprotocol/sdk' imported from x"), { code: 'ERR_MODULE_NOT_FOUND' })
    const error = await loadLinkModule(() => Promise.reject(missing)).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).to.be.instanceOf(Error)
    expect((error as Error).message).to.equal(
      `McpTools needs the optional package "@modelcontextprotocol/sdk", which is not installed: npm i @modelcontextprotocol/sdk@${MCP_SDK_RANGE}`,
    )
    expect((error as { code?: string }).code).to.equal('PEER_DEPENDENCY')
  })

  it('declares the range package.json declares', async () => {
    const { readFileSync } = await import('node:fs')
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { peerDependencies: Record<string, string> }
    expect(manifest.peerDependencies['@modelcontextprotocol/sdk']).to.equal(MCP_SDK_RANGE)
  })
})
