import { request as httpRequest } from 'node:http'
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import { textOf } from '../../lib/content.ts'
import type { SubagentRun } from '../../lib/types.ts'
import Approvals from '../../plugins/approvals/index.ts'
import Inspector, {
  DECISION_PATH,
  foreignOriginMessage,
  InspectorServer,
  SECRET_HEADER,
  wrongSecretMessage,
} from '../../plugins/inspector/index.ts'
import { type ApprovalHost, askingConfig, createApprovalHost } from '../support/approvals.ts'
import { openStream } from './client.ts'
import '../support/unhandled.ts'

interface Reply {
  status: number
  body: string
}

/** One HTTP request to the inspector, its headers as given (no Origin unless set). */
function send(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, url), { method, headers }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** The secret the page embeds, read from the page as a browser would. */
async function pageSecret(url: string): Promise<string> {
  const page = await send(url, 'GET', '/')
  const match = /<meta name="inspector-secret" content="([A-Za-z0-9_-]+)">/.exec(page.body)
  if (!match) throw new Error('the page has no secret')
  return match[1]!
}

describe('inspector approvals (plugins/inspector: panel data and POST /approvals/decide)', () => {
  let host: ApprovalHost
  let fiber: Fiber
  let url: string
  const runs: SubagentRun[] = []

  const decide = (body: unknown, headers: Record<string, string>) =>
    send(url, 'POST', DECISION_PATH, { 'content-type': 'application/json', ...headers }, JSON.stringify(body))

  /** A child waiting on its `deploy` call, and its request. */
  const waitingChild = async () => {
    const run = await host.child('release', [{ target: 'production' }])
    runs.push(run)
    while (!host.root.approvals.pending().length) await new Promise((resolve) => setTimeout(resolve, 2))
    return { run, request: host.root.approvals.pending()[0]! }
  }

  beforeEach(async () => {
    host = await createApprovalHost()
    fiber = host.root.plugin(Inspector, {})
    await fiber
    url = host.root.inspector.url
  })

  afterEach(async () => {
    for (const run of runs.splice(0)) await run.dispose()
    await fiber.dispose()
    await host.root.agents.disposeAll()
  })

  it('lists the pending requests in the snapshot, streams a new one as it is asked and its decision', async () => {
    const { request: first } = await waitingChild()
    const client = await openStream(url)
    const snapshot = (await client.next('snapshot')).data as { approvals: { id: string; path: string[]; tool: string }[] }
    expect(snapshot.approvals.map((r) => [r.id, r.tool, r.path])).to.deep.equal([[first.id, 'deploy', first.path]])
    const second = await host.child('second', [{ target: 'staging' }])
    runs.push(second)
    const asked = (await client.next('approval')).data as { id: string; label: string; depth: number }
    expect([asked.label, asked.depth]).to.deep.equal(['second', 1])
    await host.root.approvals.decide(asked.id, { approved: false, reason: 'not now' })
    expect((await client.next('approval-decided')).data).to.deep.equal({ id: asked.id, approved: false, reason: 'not now', by: 'user' })
    client.disconnect()
  })

  it('decides a request posted with the secret of the page: the call runs', async () => {
    const { run, request } = await waitingChild()
    const reply = await decide({ id: request.id, approved: true }, { [SECRET_HEADER]: await pageSecret(url), origin: url.slice(0, -1) })
    expect(reply.status).to.equal(204)
    expect(textOf((await run.result).output)).to.equal('deployed to production')
    expect(host.deployed).to.deep.equal([{ target: 'production' }])
  })

  it('sends Always as remember: tree, and Deny with its reason', async () => {
    const secret = await pageSecret(url)
    const first = await waitingChild()
    expect((await decide({ id: first.request.id, approved: false, reason: 'frozen' }, { [SECRET_HEADER]: secret })).status).to.equal(204)
    expect(textOf((await first.run.result).output)).to.equal('Error: tool call "deploy" was denied: frozen')
    const second = await waitingChild()
    expect((await decide({ id: second.request.id, approved: true, remember: 'tree' }, { [SECRET_HEADER]: secret })).status).to.equal(204)
    await second.run.result
    const third = await host.child('third', [{ target: 'eu' }])
    runs.push(third)
    expect(textOf((await third.result).output)).to.equal('deployed to eu')
  })

  it('refuses a request without the secret with 403, deciding nothing', async () => {
    const { request } = await waitingChild()
    const reply = await decide({ id: request.id, approved: true }, {})
    expect(reply).to.deep.equal({ status: 403, body: wrongSecretMessage })
    expect(host.root.approvals.pending().map((r) => r.id)).to.deep.equal([request.id])
  })

  it('refuses a request with a wrong secret with 403, deciding nothing', async () => {
    const { request } = await waitingChild()
    const secret = await pageSecret(url)
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`
    expect(await decide({ id: request.id, approved: true }, { [SECRET_HEADER]: wrong })).to.deep.equal({ status: 403, body: wrongSecretMessage })
    expect(await decide({ id: request.id, approved: true }, { [SECRET_HEADER]: `${secret}x` })).to.deep.equal({ status: 403, body: wrongSecretMessage })
    expect(host.root.approvals.pending().map((r) => r.id)).to.deep.equal([request.id])
    expect(host.deployed).to.deep.equal([])
  })

  it('refuses a request from another origin with 403 even with the right secret, deciding nothing', async () => {
    const { request } = await waitingChild()
    const reply = await decide({ id: request.id, approved: true }, { [SECRET_HEADER]: await pageSecret(url), origin: 'http://evil.example' })
    expect(reply).to.deep.equal({ status: 403, body: foreignOriginMessage('http://evil.example') })
    expect(host.root.approvals.pending().map((r) => r.id)).to.deep.equal([request.id])
  })

  it('answers 409 with the pinned error for a request that is not pending', async () => {
    const reply = await decide({ id: 'no-such-request', approved: true }, { [SECRET_HEADER]: await pageSecret(url) })
    expect(reply).to.deep.equal({ status: 409, body: 'approval request "no-such-request" is not pending\n' })
  })

  it('answers 400 naming what is wrong with a body that is not a decision, deciding nothing', async () => {
    const { request } = await waitingChild()
    const secret = await pageSecret(url)
    const replies = await Promise.all([
      send(url, 'POST', DECISION_PATH, { 'content-type': 'application/json', [SECRET_HEADER]: secret }, '{'),
      decide({ id: request.id, approved: 'yes' }, { [SECRET_HEADER]: secret }),
      decide({ id: request.id, approved: true, remember: 'forever' }, { [SECRET_HEADER]: secret }),
      decide({ id: request.id, approved: true, by: 'policy' }, { [SECRET_HEADER]: secret }),
    ])
    expect(replies).to.deep.equal([
      { status: 400, body: 'the body is not JSON\n' },
      { status: 400, body: '"approved" must be true or false\n' },
      { status: 400, body: '"remember" must be "tree" when given\n' },
      { status: 400, body: 'unknown field "by" (id, approved, reason, remember)\n' },
    ])
    expect(host.root.approvals.pending().map((r) => r.id)).to.deep.equal([request.id])
  })

  it('answers 415 for a decision sent as a form, and 405 for a GET of the decision route', async () => {
    const secret = await pageSecret(url)
    const form = await send(url, 'POST', DECISION_PATH, { 'content-type': 'application/x-www-form-urlencoded', [SECRET_HEADER]: secret }, 'id=x')
    expect(form.status).to.equal(415)
    expect((await send(url, 'GET', DECISION_PATH)).status).to.equal(405)
  })

  it('lists no pending request while Approvals is unloaded, and streams requests again once it is loaded again', async () => {
    await waitingChild()
    await host.approvalsFiber.dispose()
    const client = await openStream(url)
    expect(((await client.next('snapshot')).data as { approvals: unknown[] }).approvals).to.deep.equal([])
    await host.root.plugin(Approvals, askingConfig())
    const run = await host.child('again', [{ target: 'eu' }])
    runs.push(run)
    const asked = (await client.next('approval')).data as { id: string; label: string }
    expect(asked.label).to.equal('again')
    const reply = await decide({ id: asked.id, approved: true }, { [SECRET_HEADER]: await pageSecret(url) })
    expect(reply.status).to.equal(204)
    expect(textOf((await run.result).output)).to.equal('deployed to eu')
    client.disconnect()
  })

  it('a saved-sessions server has no secret and no decision route', async () => {
    const server = new InspectorServer({ agents: () => [], events: () => undefined, problems: () => [] }, 'saved')
    const savedUrl = await server.listen(0)
    try {
      expect((await send(savedUrl, 'GET', '/')).body).to.not.include('inspector-secret')
      expect((await send(savedUrl, 'POST', DECISION_PATH, { 'content-type': 'application/json' }, '{}')).status).to.equal(405)
    } finally {
      await server.close()
    }
  })
})
