/**
 * Strict JSON reading for signed documents: the bytes must be valid UTF-8 (no byte-order
 * mark) and no object may repeat a key. `JSON.parse` alone silently keeps the last of two
 * duplicate keys, so two readers of the same signed bytes could disagree on their meaning;
 * here such bytes are refused instead.
 */

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The outcome of {@link parseStrictJson}: a value, or a sentence saying what is wrong. */
export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; problem: string };

/** Decodes strict UTF-8, or returns `undefined` if the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Parses `input` (bytes are decoded as strict UTF-8) as JSON, refusing invalid UTF-8, a
 * leading byte-order mark, syntax errors and duplicate object keys.
 */
export function parseStrictJson(input: Uint8Array | string): StrictJsonResult {
  const text = typeof input === "string" ? input : decodeUtf8(input);
  if (text === undefined) return { ok: false, problem: "is not valid UTF-8" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `is not valid JSON (${(error as Error).message})` };
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    return { ok: false, problem: `repeats the key ${JSON.stringify(duplicate)} in one object` };
  }
  return { ok: true, value };
}

type Frame = { kind: "array" } | { kind: "object"; keys: Set<string>; expectKey: boolean };

/**
 * Returns the first key that appears twice in one object of `text`, which must already be
 * known to be valid JSON (so the scan only needs to track structure and strings).
 */
function findDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.kind === "object" && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === "{") stack.push({ kind: "object", keys: new Set(), expectKey: true });
    else if (c === "[") stack.push({ kind: "array" });
    else if (c === "}" || c === "]") stack.pop();
    else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top?.kind === "object") top.expectKey = true;
    }
    i += 1;
  }
  return undefined;
}

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Serialises a JSON value canonically: object keys sorted by UTF-16 code units at every
 * level, 2-space indentation, and a trailing newline. Equal values give equal bytes.
 */
export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isJsonObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
  return sorted;
}
