/**
 * PostgreSQL text and jsonb cannot hold U+0000, and a protobuf string may. A request that
 * carries one is refused where it enters Control (agent stream decoder, admin interceptor)
 * with a status naming the field, instead of failing later in a database write as an
 * internal error. Found by fuzzing (test/fuzz/).
 */

/**
 * The path of the first string in `value` (a decoded protobuf-es message, walked
 * recursively, map keys included) that contains U+0000; undefined when there is none.
 */
export function nulTextPath(value: unknown, path = "", depth = 0): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path || "value" : undefined;
  if (depth > 64 || value === null || typeof value !== "object") return undefined;
  if (value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = nulTextPath(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key === "$typeName" || key === "$unknown") continue;
    const at = path ? `${path}.${key.replaceAll("\u0000", "\\0")}` : key;
    if (key.includes("\u0000")) return `${at} (a key)`;
    const found = nulTextPath(item, at, depth + 1);
    if (found) return found;
  }
  return undefined;
}
