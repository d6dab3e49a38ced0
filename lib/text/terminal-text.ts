/**
 * Text that is safe to write to a terminal: model text and tool output reach the console
 * verbatim otherwise, and a control sequence in them (an ESC sequence, a carriage return, an 8-bit
 * CSI) can clear or rewrite the screen, retitle the window, or make some terminals answer on the
 * user's input. Plain code: no I/O here.
 */

// C0 controls but tab and line feed, DEL, and the C1 controls
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

function picture(control: string): string {
  const code = control.charCodeAt(0)
  // U+2400… "control pictures" show a C0 control (␛ for ESC, ␍ for CR) and DEL (␡); C1 has none
  if (code < 0x20) return String.fromCharCode(0x2400 + code)
  return code === 0x7f ? '\u2421' : '\ufffd'
}

/**
 * `text` with every control character but tab and line feed replaced by a visible stand-in: a C0
 * control by its control picture (`\x1b` → `␛`, `\r` → `␍`), DEL by `␡`, a C1 control by `�`.
 * Returns `text` itself when it holds none.
 */
export function printable(text: string): string {
  controls.lastIndex = 0
  return controls.test(text) ? text.replace(controls, picture) : text
}
