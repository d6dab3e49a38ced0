import { expect } from 'chai'
import McpTools from '../../plugins/mcp-tools/index.ts'

describe('McpTools config', () => {
  it('takes stdio and Streamable HTTP servers, with the documented defaults', () => {
    const config = McpTools.Config({ servers: { files: { command: 'node', args: ['server.js'] }, web: { url: 'http://127.0.0.1:1/mcp' } } } as never)
    expect(config).to.deep.include({ timeout: 60000, startTimeout: 60000, reconnectDelay: 1000, maxReconnectDelay: 30000 })
    expect(Object.keys(config.servers ?? {})).to.deep.equal(['files', 'web'])
  })

  it('refuses a server name outside ^[A-Za-z0-9_-]+$', () => {
    expect(() => McpTools.Config({ servers: { 'my server': { command: 'node' } } } as never)).to.throw()
  })

  it('refuses a server with neither command nor url', () => {
    expect(() => McpTools.Config({ servers: { empty: {} } } as never)).to.throw()
  })
})
