/**
 * What agentctl lets reach an operator's terminal. Much of what it prints is text an Agent
 * chose (hostnames, labels, status and failure messages), and a hostile Agent could put
 * terminal escape sequences there: clear the screen, set the window title, write to the
 * clipboard, or move the cursor back and overwrite what the operator reads. So every human
 * (table, wide, detail, error) line agentctl writes passes {@link printableSink}: each control
 * character (C0, DEL, C1) in it is written as a visible escape such as `\x1b`, except a line's
 * newline and tab and the colour and cursor sequences agentctl itself makes
 * ({@link terminalSequence}). Those carry a mark drawn at random when agentctl starts, so no
 * text from Control or an Agent can pass as one. JSON output keeps its exact values: JSON
 * escapes every C0 character itself, and {@link jsonPrintable} writes DEL and C1 as `\u00XX`.
 */
import { randomBytes } from "node:crypto";

/** The escape character that starts an ANSI control sequence. */
export const ESC = String.fromCharCode(27);

/** Precedes each sequence agentctl writes itself; unknown to anything outside this process. */
const MARK = `\uE000${randomBytes(8).toString("hex")}\uE001`;

/**
 * A terminal sequence of agentctl's own: `ESC` + `body` (such as `[31m` or `[2F`), marked so
 * that {@link printableSink} writes it to the terminal as a sequence.
 */
export function terminalSequence(body: string): string {
  return `${MARK}${ESC}${body}`;
}

/** An ANSI CSI sequence, with the mark of agentctl's own when it has one. */
const ANSI = new RegExp(`(?:${MARK})?${ESC}\\[[0-9;]*[A-Za-z]`, "g");

/** `text` without ANSI colour or cursor sequences (agentctl's own or any other). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const visible = (c: string): string => {
  const code = c.charCodeAt(0);
  if (c === "\n") return "\\n";
  if (c === "\t") return "\\t";
  if (c === "\r") return "\\r";
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
};

/**
 * `text` as one line of plain text: every control character (C0 with tab and newline, DEL,
 * C1) written as a visible escape (`\x1b`, `\n`, `\x9b`). For a table cell or a field's value,
 * where a newline would forge a row.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, visible);
}

const OWN_SEQUENCE = new RegExp(`${MARK}(${ESC}\\[[0-9;]*[A-Za-z])`, "g");

/**
 * `text` as agentctl writes it to a terminal: agentctl's own sequences as sequences, its lines'
 * newlines and tabs as they are, and every other control character as a visible escape.
 */
export function printableOutput(text: string): string {
  let out = "";
  let from = 0;
  for (const m of text.matchAll(OWN_SEQUENCE)) {
    out += text.slice(from, m.index).replace(CONTROL_BUT_LINES, visible) + m[1];
    from = m.index + m[0].length;
  }
  return out + text.slice(from).replace(CONTROL_BUT_LINES, visible);
}

const DEL_AND_C1 = /[\u007f-\u009f]/g;

/**
 * JSON text with each DEL and C1 character (which JSON.stringify leaves raw) written as its
 * `\u00XX` escape: the same JSON value, and nothing a terminal obeys. Safe on any JSON text,
 * since those characters can stand only inside its strings.
 */
export function jsonPrintable(text: string): string {
  return text.replace(DEL_AND_C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A stream agentctl writes to (see `output.ts`). */
interface WritableSink {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/**
 * `sink` with everything written through {@link printableOutput}, or through
 * {@link jsonPrintable} when `json`.
 */
export function printableSink<S extends WritableSink>(sink: S, json = false): WritableSink {
  const printed = json ? jsonPrintable : printableOutput;
  return {
    write: (text) => sink.write(printed(text)),
    get isTTY() {
      return sink.isTTY;
    },
    get columns() {
      return sink.columns;
    },
  };
}
