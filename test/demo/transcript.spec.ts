import { expect } from 'chai'
import type { Session, SessionEvent, SessionHeader, SubagentInfo } from '../../lib/types.ts'
import { TranscriptPrinter } from '../../demo/transcript.ts'

function session(id: string, header: Partial<SessionHeader> = {}): Session {
  return { id, header: { id, createdAt: 0, ...header }, events: [], append: () => { throw new Error('read-only') } } as Session
}

function event(seq: number, type: string, data: unknown): SessionEvent {
  return { seq, type, data } as SessionEvent
}

const text = (value: string) => [{ type: 'text', text: value }]

function info(childId: string, depth: number, extra: Partial<SubagentInfo> = {}): SubagentInfo {
  return { runId: childId, parentId: 'parent', childId, rootId: 'parent', mode: 'spawn', depth, label: childId, ...extra }
}

describe('TranscriptPrinter', () => {
  let lines: string[]
  let printer: TranscriptPrinter

  beforeEach(() => {
    lines = []
    printer = new TranscriptPrinter((line) => lines.push(line), { width: 100, maxLines: 3 })
  })

  it('holds a child\'s first events until subagent/start names it', () => {
    const child = session('child-1', { origin: 'subagent', delegationDepth: 1 })
    printer.event(child, event(0, 'user/message', { content: text('do it'), source: { kind: 'user' } }))
    expect(lines).to.deep.equal([])
    printer.start(info('child-1', 1), child)
    expect(lines).to.deep.equal(['  ┌─ child "child-1" · spawn · depth 1 · agent child-1', '  │ task       do it'])
  })

  it('indents a grandchild one level deeper than a child, announced before its first event', () => {
    const grandchild = session('child-2', { origin: 'subagent', delegationDepth: 2 })
    printer.start(info('child-2', 2), grandchild)
    printer.event(grandchild, event(0, 'user/message', { content: text('dig'), source: { kind: 'user' } }))
    expect(lines).to.deep.equal(['  │   ┌─ child "child-2" · spawn · depth 2 · agent child-2', '  │   │ task       dig'])
  })

  it('ends a child with its stop reason and diagnostic', () => {
    printer.start(info('child-3', 1), undefined)
    printer.settled('child-3', { output: [], stopReason: 'error', diagnostic: 'the model failed' })
    printer.end(info('child-3', 1, { stopReason: 'error' }))
    expect(lines.at(-1)).to.match(/^ {2}└─ "child-3" error: the model failed · \d+\.\d ms$/)
  })

  it('prints a top-level turn that failed with its error message', () => {
    const parent = session('parent')
    printer.event(parent, event(0, 'turn/start', { turn: 1, trigger: 'message' }))
    printer.event(parent, event(1, 'turn/end', { turn: 1, reason: { kind: 'error', error: { message: 'model request failed: HTTP 401' } } }))
    expect(lines[0]).to.match(/^ {11}turn 1 error: model request failed: HTTP 401 · \d+\.\d ms$/)
  })

  it('cuts a message longer than maxLines', () => {
    printer.event(session('parent'), event(0, 'assistant/message', { turn: 1, step: 1, content: text('a\nb\nc\nd\ne') }))
    expect(lines).to.deep.equal(['assistant  a', '           b', '           … (3 more lines)'])
  })

  it('tags the lines of a child with its label while another child runs beside it', () => {
    const first = session('first', { origin: 'subagent', delegationDepth: 1 })
    const second = session('second', { origin: 'subagent', delegationDepth: 1 })
    printer.start(info('first', 1), first)
    printer.start(info('second', 1), second)
    lines.length = 0
    printer.event(second, event(2, 'assistant/message', { turn: 1, step: 1, content: text('second answer') }))
    printer.end(info('second', 1, { stopReason: 'completed' }))
    printer.event(first, event(2, 'assistant/message', { turn: 1, step: 1, content: text('first answer') }))
    expect(lines[0]).to.equal('  │ assistant  [second] second answer')
    expect(lines[1]).to.match(/^ {2}└─ "second" completed · \d+\.\d ms$/)
    expect(lines[2]).to.equal('  │ assistant  first answer')
  })

  it('labels a message a plugin sent to the parent apart from user input', () => {
    const parent = session('parent')
    printer.event(parent, event(0, 'user/message', { content: text('Background subagent "scan" (run r1) finished:'), source: { kind: 'plugin' } }))
    expect(lines).to.deep.equal(['message    Background subagent "scan" (run r1) finished:'])
  })

  it('marks a subagent call that runs in the background', () => {
    const call = { type: 'tool-call', id: 'c1', name: 'subagent', arguments: JSON.stringify({ prompt: 'scan', label: 'scan', background: true }) }
    printer.event(session('parent'), event(0, 'assistant/message', { turn: 1, step: 1, content: [call] }))
    expect(lines).to.deep.equal(['assistant  → subagent (spawn, "scan", in the background): scan'])
  })
})
