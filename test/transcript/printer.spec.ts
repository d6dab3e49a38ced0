import { expect } from 'chai'
import type { Session, SessionEvent, SessionHeader, SubagentInfo } from '../../lib/types.ts'
import { TranscriptPrinter } from '../../plugins/transcript/index.ts'

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
  /** Whole lines written so far; `open` the line being streamed. */
  let lines: string[]
  let open: string
  let printer: TranscriptPrinter
  const writer = (text: string) => {
    const parts = (open + text).split('\n')
    open = parts.pop()!
    lines.push(...parts)
  }

  beforeEach(() => {
    lines = []
    open = ''
    printer = new TranscriptPrinter(writer, { width: 100, maxLines: 3 })
  })

  it('writes a streamed assistant text as each delta arrives and does not repeat it at the message', () => {
    const parent = session('parent')
    printer.event(parent, event(0, 'assistant/delta', { turn: 1, step: 1, text: 'Hel' }))
    expect([lines, open]).to.deep.equal([[], 'assistant  Hel'])
    printer.event(parent, event(1, 'assistant/delta', { turn: 1, step: 1, text: 'lo, world' }))
    expect([lines, open]).to.deep.equal([[], 'assistant  Hello, world'])
    printer.event(parent, event(2, 'assistant/message', { turn: 1, step: 1, content: text('Hello, world') }))
    expect([lines, open]).to.deep.equal([['assistant  Hello, world'], ''])
  })

  it('cuts a streamed message longer than maxLines as it cuts a whole one', () => {
    const parent = session('parent')
    for (const [seq, piece] of ['a\nb', '\nc\nd', '\ne'].entries()) printer.event(parent, event(seq, 'assistant/delta', { turn: 1, step: 1, text: piece }))
    printer.event(parent, event(3, 'assistant/message', { turn: 1, step: 1, content: text('a\nb\nc\nd\ne') }))
    expect([lines, open]).to.deep.equal([['assistant  a', '           b', '           … (3 more lines)'], ''])
  })

  it('writes a child\'s streamed line whole, tagged and aligned, while another child streams beside it', () => {
    const first = session('first', { origin: 'subagent', delegationDepth: 1 })
    const second = session('second', { origin: 'subagent', delegationDepth: 1 })
    printer.start(info('first', 1), first)
    printer.start(info('second', 1), second)
    lines.length = 0
    printer.event(first, event(2, 'assistant/delta', { turn: 1, step: 1, text: 'first ' }))
    printer.event(second, event(2, 'assistant/delta', { turn: 1, step: 1, text: 'second' }))
    printer.event(first, event(3, 'assistant/delta', { turn: 1, step: 1, text: 'answer' }))
    printer.event(first, event(4, 'assistant/message', { turn: 1, step: 1, content: text('first answer') }))
    printer.event(second, event(3, 'assistant/message', { turn: 1, step: 1, content: text('second') }))
    expect(lines).to.deep.equal(['  │ assistant  [first]  first answer', '  │ assistant  [second] second'])
  })

  it('adds a line per subagent hook when verbose', () => {
    printer = new TranscriptPrinter(writer, { width: 100, maxLines: 3, verbosity: 'verbose' })
    printer.start(info('child-4', 1), undefined)
    printer.end(info('child-4', 1, { stopReason: 'completed' }))
    expect(lines.filter((line) => line.includes('hook'))).to.deep.equal([
      '  │ hook       subagent/start run child-4 · parent parent · root parent',
      '  │ hook       subagent/end run child-4 · completed',
    ])
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
    expect(lines.at(-1)).to.match(/^ {2}└─ "child-3" error: the model failed · \d+(\.\d)? ms$/)
  })

  it('prints a top-level turn that failed with its error message', () => {
    const parent = session('parent')
    printer.event(parent, event(0, 'turn/start', { turn: 1, trigger: 'message' }))
    printer.event(parent, event(1, 'turn/end', { turn: 1, reason: { kind: 'error', error: { message: 'model request failed: HTTP 401' } } }))
    expect(lines[0]).to.match(/^ {11}turn 1 error: model request failed: HTTP 401 · \d+(\.\d)? ms$/)
  })

  // model text and tool output are untrusted: an escape sequence could clear or retitle the terminal
  it('shows the control characters of streamed text and of a tool result instead of writing them', () => {
    const parent = session('parent')
    printer.event(parent, event(0, 'assistant/delta', { turn: 1, step: 1, text: '\x1b[2Jwiped\rmasked' }))
    printer.event(parent, event(1, 'assistant/message', { turn: 1, step: 1, content: text('\x1b[2Jwiped\rmasked') }))
    printer.event(parent, event(2, 'tool/result', { turn: 1, step: 1, callId: 'c1', name: 'fetch', isError: false, content: text('\x1b]0;owned\x07page') }))
    expect(lines).to.deep.equal(['assistant  ␛[2Jwiped␍masked', 'tool       fetch ✓ ␛]0;owned␇page'])
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
    expect(lines[1]).to.match(/^ {2}└─ "second" completed · \d+(\.\d)? ms$/)
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
