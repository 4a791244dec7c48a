/**
 * `-o yaml`: the JSON a command prints (protobuf's canonical JSON of its response) rendered
 * as YAML, as kubectl does. Each JSON document written, or each line of a JSON-lines stream
 * (`campaign watch`), becomes one YAML document; documents after the first start with `---`.
 * Text that is not JSON passes through unchanged. No character a terminal obeys is written raw
 * (see {@link yamlPrintable}).
 */
import type { Sink } from "./output.js";

const DEL_AND_C1 = /[\u007f-\u009f]/g;

/**
 * YAML text from `yaml`'s stringify with each DEL and C1 character (which it leaves raw, though
 * it escapes C0) written as its `\xXX` escape: the same value, and nothing a terminal obeys.
 * Safe on that text, since stringify writes a string holding such a character double-quoted,
 * where `\xXX` is an escape.
 */
export function yamlPrintable(text: string): string {
  return text.replace(DEL_AND_C1, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** A sink that turns each JSON document written to it into YAML on `sink`. */
export async function yamlSink(sink: Sink): Promise<Sink> {
  const yaml = await import("yaml");
  // Bundled, the package's CommonJS build may arrive as the default export only.
  const { stringify } =
    typeof yaml.stringify === "function"
      ? yaml
      : (yaml as unknown as { default: typeof yaml }).default;
  let documents = 0;
  const render = (text: string): string => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return text;
    }
    const prefix = documents++ > 0 ? "---\n" : "";
    return `${prefix}${yamlPrintable(stringify(value, { lineWidth: 0 }))}`;
  };
  return {
    isTTY: sink.isTTY,
    columns: sink.columns,
    write(text: string) {
      const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : [text];
      // One JSON document per write (messageJson) or one per line (messageJsonLine).
      const whole = render(text);
      if (whole !== text || lines.length === 1) return sink.write(whole);
      return sink.write(lines.map((line) => render(`${line}\n`)).join(""));
    },
  };
}
