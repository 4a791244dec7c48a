import { describe, expect, it } from "vitest";
import { createPainter, formatFields, formatTable } from "../../../cli/output.js";
import {
  jsonPrintable,
  printable,
  printableOutput,
  printableSink,
  stripAnsi,
  terminalSequence,
} from "../../../cli/printable.js";

const ESC = "\u001b";
/** Every control character: C0 (0x00–0x1f), DEL and C1 (0x80–0x9f). */
const CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
].map((c) => String.fromCharCode(c));
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never be printed raw
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never be printed raw
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("text from Control as agentctl prints it", () => {
  it("writes every control character of a cell or value as a visible escape", () => {
    const hostile = CONTROLS.join("");
    expect(printable(hostile)).not.toMatch(ANY_CONTROL);
    expect(printable(`${ESC}]0;pwned\u0007${ESC}[2J\u009b31m\r\n\tok`)).toBe(
      "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\r\\n\\tok",
    );
    expect(printable("plain text, ünïcode ✓")).toBe("plain text, ünïcode ✓");
  });

  it("keeps a table's rows and a detail's lines one per line whatever a cell holds", () => {
    const table = formatTable(["NODE", "LABELS"], [["n1", `site=a\nn2  forged${ESC}[2J`]]);
    expect(table.split("\n")).toEqual(["NODE  LABELS", "n1    site=a\\nn2  forged\\x1b[2J", ""]);
    const fields = formatFields([["Labels", `x${ESC}[1A\u0085y`]]);
    expect(fields).toBe("Labels: x\\x1b[1A\\x85y\n");
  });

  it("lets through the colour and cursor sequences agentctl makes, and no other", () => {
    const paint = createPainter(true);
    const own = `${paint("red", "failed")} ${terminalSequence("[2F")}${terminalSequence("[J")}`;
    const forged = `${ESC}[31m${ESC}[2F${ESC}]52;c;Zm9v\u0007\u009b2J`;
    const out = printableOutput(`${own}\n\t${forged}\n`);
    expect(out).toBe(
      `${ESC}[31mfailed${ESC}[0m ${ESC}[2F${ESC}[J\n\t\\x1b[31m\\x1b[2F\\x1b]52;c;Zm9v\\x07\\x9b2J\n`,
    );
    for (const c of CONTROLS) {
      expect(printableOutput(`a${c}b`)).toMatch(c === "\n" || c === "\t" ? /^a[\n\t]b$/ : /^a\\/);
    }
    expect(printableOutput(CONTROLS.join(""))).not.toMatch(CONTROL_BUT_LINES);
  });

  it("writes DEL and C1 in JSON as escapes, keeping every value exact", () => {
    const value = { text: CONTROLS.join(""), list: [`a\u009b1A`, "ünïcode ✓"] };
    const json = jsonPrintable(JSON.stringify(value, null, 2));
    expect(json).not.toMatch(CONTROL_BUT_LINES);
    expect(json).toContain("\\u009b1A");
    expect(JSON.parse(json)).toEqual(value);
  });

  it("measures agentctl's own sequences as no width", () => {
    expect(stripAnsi(createPainter(true)("green", "ok"))).toBe("ok");
  });

  it("passes a sink's terminal facts through and escapes what is written to it", () => {
    let written = "";
    const sink = printableSink({
      write: (t: string) => {
        written += t;
      },
      isTTY: true,
      columns: 80,
    });
    sink.write(`x${ESC}[2J\n`);
    expect({ written, tty: sink.isTTY, columns: sink.columns }).toEqual({
      written: "x\\x1b[2J\n",
      tty: true,
      columns: 80,
    });
  });
});
