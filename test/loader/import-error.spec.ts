import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { describeImportError } from '../../plugins/loader/import-error.ts'

describe('describeImportError', () => {
  let dir: string

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'import-error-'))
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n')
  })

  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('adds the file, line and code frame to a syntax error that names no file', async () => {
    const file = join(dir, 'broken.js')
    writeFileSync(file, 'export default function Broken() {\n  const a = ;\n}\n')
    expect(describeImportError(new SyntaxError("Unexpected token ';'"), file)).to.equal(
      `Unexpected token ';' at ${file}:2\n  const a = ;\n            ^`,
    )
  })

  it('keeps a syntax error that already names its file as it is', () => {
    const file = join(dir, 'broken.ts')
    const message = `Transform failed with 1 error:\n${file}:2:12: ERROR: Unexpected ";"`
    expect(describeImportError(new SyntaxError(message), file)).to.equal(message)
  })

  it('tells how to load a .ts plugin that plain Node refuses', () => {
    const file = join(dir, 'plugin.ts')
    const error = Object.assign(new TypeError(`Unknown file extension ".ts" for ${file}`), { code: 'ERR_UNKNOWN_FILE_EXTENSION' })
    expect(describeImportError(error, file)).to.equal(
      `Unknown file extension ".ts" for ${file} (a TypeScript plugin needs a loader: run the host under tsx, e.g. "node --import tsx", or build the plugin to .js)`,
    )
  })

  it('passes any other error through', () => {
    expect(describeImportError(new Error('Cannot find module'), join(dir, 'missing.js'))).to.equal('Cannot find module')
  })
})
