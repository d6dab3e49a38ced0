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
})
