import { expect } from 'chai'
import { OpenFileGate } from '../../plugins/session-files/open-file-gate.ts'

const fastRetry = { firstDelayMs: 0, maxDelayMs: 1, giveUpAfterMs: 5 }

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: too many open files`), { code })
}

/** A task the test finishes by hand. */
function deferred(): { promise: Promise<void>; finish: () => void } {
  let finish!: () => void
  const promise = new Promise<void>((resolve) => (finish = resolve))
  return { promise, finish }
}

describe('OpenFileGate', () => {
  it('runs at most limit tasks at once and starts waiting ones in the order they came', async () => {
    const gate = new OpenFileGate(3, fastRetry)
    const tasks = Array.from({ length: 8 }, deferred)
    const started: number[] = []
    let peak = 0
    const runs = tasks.map((task, index) =>
      gate.run(() => {
        started.push(index)
        peak = Math.max(peak, gate.active)
        return task.promise
      }),
    )
    await Promise.resolve()
    expect(started).to.deep.equal([0, 1, 2])
    for (const index of [1, 0, 2, 3, 4, 5, 6, 7]) {
      tasks[index].finish()
      await runs[index]
    }
    expect(started).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7])
    expect(peak).to.equal(3)
    expect(gate.active).to.equal(0)
  })

  for (const code of ['EMFILE', 'ENFILE']) {
    it(`runs a task again after it failed with ${code}, until it succeeds`, async () => {
      const gate = new OpenFileGate(2, fastRetry)
      let attempts = 0
      const result = await gate.run(async () => {
        if (++attempts < 4) throw errno(code)
        return 'written'
      })
      expect(result).to.equal('written')
      expect(attempts).to.equal(4)
      expect(gate.active).to.equal(0)
    })
  }

  it('gives its slot to a waiting task while it pauses before a retry', async () => {
    const gate = new OpenFileGate(1, { firstDelayMs: 1, maxDelayMs: 1, giveUpAfterMs: 1000 })
    const order: string[] = []
    let attempts = 0
    const retried = gate.run(async () => {
      order.push(`retried attempt ${++attempts}`)
      if (attempts === 1) throw errno('EMFILE')
    })
    const waiting = gate.run(async () => void order.push('waiting'))
    await Promise.all([retried, waiting])
    expect(order).to.deep.equal(['retried attempt 1', 'waiting', 'retried attempt 2'])
  })

  it('rejects with the last error once the pauses reach giveUpAfterMs', async () => {
    const gate = new OpenFileGate(1, fastRetry)
    let attempts = 0
    const error = await gate.run(async () => {
      attempts++
      throw errno('EMFILE')
    }).then(
      () => expect.fail('the task succeeded'),
      (reason: NodeJS.ErrnoException) => reason,
    )
    expect(error.code).to.equal('EMFILE')
    expect(attempts).to.be.greaterThan(1)
    expect(gate.active).to.equal(0)
  })

  it('passes any other failure through at once', async () => {
    const gate = new OpenFileGate(1, fastRetry)
    let attempts = 0
    const error = await gate.run(async () => {
      attempts++
      throw errno('ENOSPC')
    }).then(
      () => expect.fail('the task succeeded'),
      (reason: NodeJS.ErrnoException) => reason,
    )
    expect(error.code).to.equal('ENOSPC')
    expect(attempts).to.equal(1)
    expect(gate.active).to.equal(0)
  })

  for (const limit of [0, -1, 1.5, Number.NaN]) {
    it(`rejects the limit ${limit}`, () => {
      expect(() => new OpenFileGate(limit)).to.throw(RangeError, 'open file limit must be a positive safe integer')
    })
  }
})
