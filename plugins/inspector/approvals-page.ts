/**
 * The inspector page's approvals panel (SPEC §11.4): the pending requests of every tree, live,
 * each with Approve / Deny / Always buttons that POST the decision with the page's secret. Its
 * style, markup and script are pieces `page.ts` puts into the page; like the rest of the page,
 * every string a model or a tool wrote reaches the DOM through `textContent`.
 */
import { DECISION_METHOD, DECISION_PATH, SECRET_HEADER } from './decision-route.ts'

/** Characters of a string argument shown before it is cut with a marker. */
export const PAGE_VALUE_CHARS = 300

export const approvalsStyle = `
#approvals{margin:0 0 14px;padding:10px 12px;background:#fff7e6;border:1px solid #f0c36d;border-radius:6px}
#approvals h2{font-size:13px;margin:0 0 8px;color:#7a4b00}
.approval{padding:8px 0;border-top:1px solid #f3dca8}.approval:first-of-type{border-top:0}
.approval .who{font-weight:600}.approval .path{font-size:12px;color:#667}
.approval pre{font:12px/1.4 ui-monospace,monospace;background:#fffdf7;border:1px solid #f3dca8;border-radius:4px;padding:6px;margin:6px 0;max-height:180px;overflow:auto;white-space:pre-wrap;word-break:break-word}
.approval .actions{display:flex;gap:6px;align-items:center}.approval input{flex:1;min-width:80px;font:inherit;font-size:12px;padding:3px 6px}
.approval button{font:inherit;font-size:12px;padding:3px 10px;border-radius:4px;border:1px solid #aab;background:#fff;cursor:pointer}
.approval button.approve{background:#16794a;border-color:#16794a;color:#fff}.approval button.deny{background:#b42318;border-color:#b42318;color:#fff}
.approval .error{color:#b42318;font-size:12px}
`

export const approvalsMarkup = '<div id="approvals" hidden><h2>Waiting for approval</h2><div id="approval-cards"></div></div>'

/** The panel's script; `watchApprovals(source)` is called by the page for every event stream it opens. */
export const approvalsScript = `
const approvalSecret = document.querySelector('meta[name="inspector-secret"]').content
const approvalCards = new Map()
const cutValues = (value) => typeof value === 'string' ? (value.length > ${PAGE_VALUE_CHARS} ? value.slice(0, ${PAGE_VALUE_CHARS}) + '… [' + (value.length - ${PAGE_VALUE_CHARS}) + ' more characters]' : value)
  : Array.isArray(value) ? value.map(cutValues) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutValues(v)])) : value
const argsText = (args) => { let value = args; if (typeof args === 'string') { try { value = JSON.parse(args) } catch { value = args } } return JSON.stringify(cutValues(value ?? {}), null, 2) }
const pathText = (path) => path.map((id, i) => { const a = agents.get(id); const name = i === 0 ? 'root' : a && a.label; return (name ? name + ' ' : '') + id.slice(0, 8) }).join(' › ')
function showApprovals() { const box = document.getElementById('approvals'); box.hidden = approvalCards.size === 0 }
function addApproval(r) { if (approvalCards.has(r.id)) return; const card = el('div', 'approval'); card.dataset.id = r.id
  const who = r.depth === 0 ? 'root' : r.label !== undefined ? 'child "' + r.label + '"' : 'a child'
  card.append(el('div', 'who', who + ' asks to run ' + r.tool), el('div', 'path', ''), el('pre', 'args', argsText(r.args))); card.request = r; showPath(card)
  const reason = el('input'); reason.placeholder = 'reason (optional, sent with Deny)'; reason.maxLength = 2000
  const button = (cls, label, body) => { const b = el('button', cls, label); b.type = 'button'; b.onclick = () => postDecision(card, { id: r.id, ...body(reason.value.trim()) }); return b }
  const actions = el('div', 'actions'); actions.append(button('approve', 'Approve', () => ({ approved: true })), button('deny', 'Deny', (why) => why ? { approved: false, reason: why } : { approved: false }), button('always', 'Always', () => ({ approved: true, remember: 'tree' })), reason)
  card.append(actions, el('div', 'error')); approvalCards.set(r.id, card); document.getElementById('approval-cards').append(card); showApprovals() }
// an agent's label may reach the page after its request: paths are written again as agents arrive
function showPath(card) { const r = card.request; card.querySelector('.path').textContent = 'depth ' + r.depth + ' · path ' + pathText(r.path) }
function dropApproval(id) { const card = approvalCards.get(id); if (card) card.remove(); approvalCards.delete(id); showApprovals() }
async function postDecision(card, body) { for (const b of card.querySelectorAll('button')) b.disabled = true; card.querySelector('.error').textContent = ''
  const failed = (message) => { card.querySelector('.error').textContent = message; for (const b of card.querySelectorAll('button')) b.disabled = false }
  // the card goes when its approval-decided message comes; a refusal (409: decided elsewhere) is shown on it
  try { const res = await fetch('${DECISION_PATH}', { method: '${DECISION_METHOD}', headers: { 'content-type': 'application/json', '${SECRET_HEADER}': approvalSecret }, body: JSON.stringify(body) })
    if (!res.ok) failed(await res.text()) } catch (error) { failed(String(error.message || error)) } }
function watchApprovals(source) {
  source.addEventListener('snapshot', (m) => { const s = JSON.parse(m.data); const live = new Set((s.approvals || []).map((r) => r.id)); for (const id of [...approvalCards.keys()]) if (!live.has(id)) dropApproval(id); for (const r of s.approvals || []) addApproval(r); for (const card of approvalCards.values()) showPath(card) })
  source.addEventListener('approval', (m) => addApproval(JSON.parse(m.data)))
  source.addEventListener('agent', () => { for (const card of approvalCards.values()) showPath(card) })
  source.addEventListener('approval-decided', (m) => dropApproval(JSON.parse(m.data).id)) }
`
