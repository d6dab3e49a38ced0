/**
 * The inspector page: one HTML document with its style and script inline (no build step). Every
 * model-written string reaches the DOM through `textContent`, never as markup.
 */
import { approvalsMarkup, approvalsScript, approvalsStyle } from './approvals-page.ts'

/** A live host's page: the approvals panel, and the secret its decisions carry. */
export interface PageApprovals {
  secret: string
}

/**
 * The page; `title` is the only server-side text in it, and it is escaped. With `approvals`, the
 * page has the approvals panel and the secret (base64url: no escaping needed) in a meta tag.
 */
export function inspectorPage(title: string, approvals?: PageApprovals): string {
  const safeTitle = title.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  const secretMeta = approvals ? `<meta name="inspector-secret" content="${approvals.secret.replace(/[^A-Za-z0-9_-]/g, '')}">` : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${secretMeta}<title>${safeTitle}</title>
<style>${approvals ? approvalsStyle : ''}
body{margin:0;font:14px/1.45 system-ui,sans-serif;color:#1d2330;background:#f6f7fb;display:grid;grid-template-columns:minmax(0,1.6fr) minmax(0,1fr);grid-template-rows:auto minmax(0,1fr);height:100vh}
header{grid-column:1/3;padding:10px 18px;background:#1d2330;color:#fff;display:flex;gap:16px;align-items:baseline}
header h1{font-size:16px;margin:0}header span{opacity:.7;font-size:12px}
#tree,#transcript{overflow:auto;padding:12px 18px}#transcript{background:#fff;border-left:1px solid #dde1ea}
table{border-collapse:collapse;width:100%}th{text-align:left;font-weight:600;font-size:11px;text-transform:uppercase;color:#667;padding:4px 6px}
td{padding:4px 6px;border-top:1px solid #e6e9f0;white-space:nowrap}tr.agent{cursor:pointer}tr.agent:hover{background:#eef2ff}tr.selected{background:#e0e7ff}
.name{font-weight:600}.dim{color:#778}.ok{color:#16794a}.bad{color:#b42318}.run{color:#1d4ed8}
.lane{position:relative;height:10px;min-width:120px;background:#eceff5;border-radius:5px}.bar{position:absolute;top:0;height:10px;border-radius:5px;background:#6d8cf5}.bar.live{background:#22a06b}
#problems{color:#b42318;font-size:12px;white-space:pre-wrap}
.msg{margin:0 0 10px}.role{font-size:11px;text-transform:uppercase;color:#667;letter-spacing:.04em}.text{white-space:pre-wrap;word-break:break-word}
.tool{font-family:ui-monospace,monospace;font-size:12px;background:#f3f4f8;padding:4px 6px;border-radius:4px;white-space:pre-wrap;word-break:break-word}
</style></head>
<body><header><h1>${safeTitle}</h1><span id="summary"></span></header>
<section id="tree">${approvals ? approvalsMarkup : ''}<div id="problems"></div><table><thead><tr><th>agent</th><th>mode</th><th>depth</th><th>status</th><th>stop</th><th>tokens in / out</th><th>elapsed</th><th>when it ran</th></tr></thead><tbody id="rows"></tbody></table></section>
<section id="transcript"><p class="dim">Select an agent to read its transcript.</p></section>
<script>${approvals ? approvalsScript : ''}
const agents = new Map(); let selected; let live = null; let frame = 0
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = String(text); return e }
const order = () => { const kids = new Map(); for (const a of agents.values()) { const p = agents.has(a.parentId) ? a.parentId : ''; if (!kids.has(p)) kids.set(p, []); kids.get(p).push(a) }
  const out = []; const walk = (p, level) => { for (const a of (kids.get(p) || []).sort((x, y) => x.startedAt - y.startedAt)) { out.push([a, level]); walk(a.id, level + 1) } }; walk('', 0); return out }
const elapsed = (a) => { const ms = (a.endedAt ?? (a.status === 'running' ? Date.now() : a.startedAt)) - a.startedAt; return ms < 1000 ? ms + ' ms' : (ms / 1000).toFixed(1) + ' s' }
function render() { frame = 0; const rows = document.getElementById('rows'); rows.replaceChildren(); const list = order(); if (!list.length) return
  const t0 = Math.min(...list.map(([a]) => a.startedAt)); const t1 = Math.max(Date.now(), ...list.map(([a]) => a.endedAt ?? a.startedAt)); const span = Math.max(1, t1 - t0)
  for (const [a, level] of list) { const tr = el('tr', 'agent' + (a.id === selected ? ' selected' : '')); tr.onclick = () => select(a.id)
    const name = el('td'); name.style.paddingLeft = 6 + level * 18 + 'px'; name.append(el('span', 'name', a.label ?? (a.mode === 'root' ? 'root' : 'child')), el('span', 'dim', ' ' + a.id.slice(0, 8))); if (a.agent) name.append(el('span', 'dim', ' · ' + a.agent))
    const stop = a.stopReason ?? ''; const status = el('td', a.status === 'running' ? 'run' : '', a.status)
    const lane = el('div', 'lane'); const bar = el('div', 'bar' + (a.status === 'running' ? ' live' : '')); const end = a.endedAt ?? (a.status === 'running' ? Date.now() : a.startedAt)
    bar.style.left = ((a.startedAt - t0) / span) * 100 + '%'; bar.style.width = Math.max(0.8, ((end - a.startedAt) / span) * 100) + '%'; lane.append(bar); const laneCell = el('td'); laneCell.append(lane)
    tr.append(name, el('td', '', a.mode), el('td', '', a.depth), status, el('td', stop === 'completed' ? 'ok' : stop ? 'bad' : '', stop), el('td', '', a.usage.inputTokens + ' / ' + a.usage.outputTokens), el('td', '', elapsed(a)), laneCell); rows.append(tr) }
  const running = list.filter(([a]) => a.status === 'running').length; document.getElementById('summary').textContent = list.length + ' agents · ' + running + ' running' }
const schedule = () => { if (!frame) frame = requestAnimationFrame(render) }
const textOf = (content) => (content || []).map((b) => b.type === 'tool-call' ? '→ ' + b.name + ' ' + b.arguments : b.text).join('\\n')
function addEvent(box, e) { const d = e.data || {}
  if (e.type === 'user/message') box.append(msg('user', textOf(d.content)))
  else if (e.type === 'assistant/delta') { if (!live) { live = msg('assistant', ''); box.append(live) } live.lastChild.textContent += d.text }
  else if (e.type === 'assistant/message') { const m = msg('assistant' + (d.interrupted ? ' (interrupted)' : ''), textOf(d.content)); if (live) live.replaceWith(m); else box.append(m); live = null }
  else if (e.type === 'tool/result') { const m = msg('tool ' + d.name + (d.isError ? ' ✗' : ' ✓'), textOf(d.content)); m.lastChild.className = 'tool'; box.append(m) }
  else if (e.type === 'turn/end') box.append(msg('turn end', (d.reason && d.reason.kind) || '')) }
function msg(role, text) { const m = el('div', 'msg'); m.append(el('div', 'role', role), el('div', 'text', text)); return m }
function select(id) { selected = id; live = null; schedule(); const box = document.getElementById('transcript'); box.replaceChildren(el('p', 'dim', 'loading…')); listen() }
// only the followed agent's events are streamed: choosing another agent reopens the stream
let source = null
function listen() { if (source) source.close(); source = new EventSource('/events' + (selected ? '?follow=' + encodeURIComponent(selected) : ''))
  source.addEventListener('snapshot', (m) => { const s = JSON.parse(m.data); agents.clear(); for (const a of s.agents) agents.set(a.id, a); document.getElementById('problems').textContent = s.problems.join('\\n'); schedule() })
  source.addEventListener('transcript', (m) => { const { id, events } = JSON.parse(m.data); if (id !== selected) return; live = null; const box = document.getElementById('transcript'); box.replaceChildren(); const a = agents.get(id)
    box.append(el('h3', '', (a && a.label) || id)); for (const e of events) addEvent(box, e) })
  source.addEventListener('agent', (m) => { const a = JSON.parse(m.data); agents.set(a.id, a); schedule() })
  source.addEventListener('event', (m) => { const { id, event } = JSON.parse(m.data); if (id === selected) addEvent(document.getElementById('transcript'), event) })
  if (typeof watchApprovals === 'function') watchApprovals(source) }
listen()
setInterval(() => { for (const a of agents.values()) if (a.status === 'running') return schedule() }, 500)
</script></body></html>
`
}
