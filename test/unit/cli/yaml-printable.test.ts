/**
 * `-o yaml` never writes a character a terminal obeys: C0, DEL and C1 inside a value or a key
 * come out as YAML escapes, and the document still parses to the same value.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { yamlSink } from "../../../cli/yaml-output.js";

/** What `-o yaml` writes for one JSON document. */
async function yamlOf(value: unknown): Promise<string> {
  let out = "";
  const sink = await yamlSink({
    isTTY: false,
    columns: 80,
    write: (text: string) => {
      out += text;
      return true;
    },
  });
  sink.write(`${JSON.stringify(value)}\n`);
  return out;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters looked for
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe("-o yaml and control characters", () => {
  it.each([
    ["DEL", "x\u007fy"],
    ["CSI (C1)", "p\u009b31mq"],
    ["NEL (C1)", "a\u0085b"],
    ["the first C1", "k\u0080"],
    ["ESC (C0)", "n\u001b[31mm"],
    ["a line break and C1", "l1\nl2\u009bz\n"],
  ])("%s in a value and in a key is escaped, and reads back the same", async (_, text) => {
    const value = { message: text, labels: { [`k${text}`]: "v" }, list: [text] };
    const out = await yamlOf(value);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(parse(out)).toEqual(value);
  });

  it("leaves printable text as it was", async () => {
    const out = await yamlOf({ message: "ünïcode — fine", n: 3 });
    expect(out).toBe("message: ünïcode — fine\nn: 3\n");
  });
});
