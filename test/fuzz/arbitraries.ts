/**
 * fast-check arbitraries for fuzzing protobuf decoders: random bytes, mutations of valid
 * encodings, hostile strings, and random (valid but hostile) messages of any schema, built
 * from its descriptor so a new field is fuzzed without touching this file.
 */
import {
  create,
  type DescField,
  type DescMessage,
  type Message,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import fc from "fast-check";

/** Inputs per property: `FUZZ_RUNS` (scaled by `share`) in a full run, `quick` otherwise. */
export function fuzzRuns(quick: number, share = 1): number {
  const full = Number(process.env.FUZZ_RUNS ?? "");
  return Number.isFinite(full) && full > 0 ? Math.max(1, Math.round(full * share)) : quick;
}

/** fast-check parameters: the run count, and `FUZZ_SEED` to replay a failure. */
export function fuzzParams(numRuns: number): fc.Parameters<unknown> {
  const seed = Number(process.env.FUZZ_SEED ?? "");
  return { numRuns, ...(Number.isInteger(seed) && process.env.FUZZ_SEED ? { seed } : {}) };
}

/** Strings an attacker would try: empty, huge, control bytes, prototype keys, surrogates. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "__proto__",
      "constructor",
      "prototype",
      "toString",
      "../../etc/passwd",
      "'; drop table nodes; --",
      "%s%n%x",
      "\u0000",
      "\ud800",
      "a/b/../../c",
      "node-1",
      "upgrade.v1",
      "linux-amd64",
      "1.0.0",
      "9999999999999999999.0.0",
    ),
  },
  { weight: 1, arbitrary: fc.nat({ max: 70_000 }).map((n) => "x".repeat(n)) },
);

const INT32 = fc.integer();
const UINT32 = fc.nat({ max: 0xffff_ffff });
const INT64 = fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n);
const UINT64 = fc.bigInt(0n, 2n ** 64n - 1n);

function scalar(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return fc.double();
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return INT32;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return UINT32;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return INT64;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return UINT64;
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.STRING:
      return hostileString;
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 256 });
  }
}

function enumValue(field: { enum: { values: readonly { number: number }[] } }) {
  return fc.oneof(fc.constantFrom(...field.enum.values.map((v) => v.number)), INT32);
}

function fieldValue(field: DescField, depth: number): fc.Arbitrary<unknown> {
  const nested = (message: DescMessage) =>
    depth > 0 ? messageArbitrary(message, depth - 1) : fc.constant(create(message));
  switch (field.fieldKind) {
    case "scalar":
      return scalar(field.scalar);
    case "enum":
      return enumValue(field);
    case "message":
      return nested(field.message);
    case "list": {
      const item =
        field.listKind === "scalar"
          ? scalar(field.scalar)
          : field.listKind === "enum"
            ? enumValue(field)
            : nested(field.message);
      return fc.array(item, { maxLength: 8 });
    }
    case "map": {
      const key = scalar(field.mapKey).map((k) => String(k));
      const value =
        field.mapKind === "scalar"
          ? scalar(field.scalar)
          : field.mapKind === "enum"
            ? enumValue(field)
            : nested(field.message);
      return fc.dictionary(key, value, { maxKeys: 8 });
    }
  }
}

/** A random message of `schema`: each field present or absent, one member of each oneof. */
export function messageArbitrary<M extends Message>(
  schema: DescMessage,
  depth = 2,
): fc.Arbitrary<M> {
  const plain = schema.fields.filter((f) => f.oneof === undefined);
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of plain) {
    parts[field.localName] = fc.option(fieldValue(field, depth), { nil: undefined });
  }
  for (const oneof of schema.oneofs) {
    const members = oneof.fields.map((field) =>
      fieldValue(field, depth).map((value) => ({ case: field.localName, value })),
    );
    parts[oneof.localName] = fc.option(fc.oneof(...members), { nil: undefined });
  }
  return fc.record(parts).map((init) => {
    const defined = Object.fromEntries(Object.entries(init).filter(([, v]) => v !== undefined));
    return create(schema, defined as never) as unknown as M;
  });
}

/** Mutations of a valid encoding: flip, truncate, insert, splice random bytes, concatenate. */
export function mutatedEncoding(
  schema: DescMessage,
  depth = 2,
): fc.Arbitrary<Uint8Array<ArrayBuffer>> {
  const encoded = messageArbitrary(schema, depth).map((m) => toBinary(schema, m));
  return fc
    .tuple(
      encoded,
      encoded,
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
      fc.constantFrom("flip", "truncate", "insert", "concat", "none"),
      fc.nat(),
    )
    .map(([a, b, edits, how, at]) => {
      let bytes = Uint8Array.from(a);
      if (how === "concat") bytes = Uint8Array.from([...a, ...b]);
      if (how === "truncate" && bytes.length > 0) bytes = bytes.slice(0, at % bytes.length);
      if (how === "insert") {
        const cut = bytes.length > 0 ? at % bytes.length : 0;
        const noise = edits.map(([, v]) => v);
        bytes = Uint8Array.from([...bytes.slice(0, cut), ...noise, ...bytes.slice(cut)]);
      }
      if (how === "flip" && bytes.length > 0) {
        for (const [index, value] of edits) bytes[index % bytes.length] = value;
      }
      return bytes;
    });
}

/** Random bytes, mutated valid encodings, or a valid encoding: what a hostile peer sends. */
export function hostileFrame(schema: DescMessage): fc.Arbitrary<Uint8Array<ArrayBuffer>> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 512 }).map((b) => Uint8Array.from(b)),
    mutatedEncoding(schema),
    messageArbitrary(schema).map((m) => Uint8Array.from(toBinary(schema, m))),
  );
}

/** Per-test timeout: generous in a full run (`FUZZ_RUNS`), vitest's default otherwise. */
export const FUZZ_TIMEOUT_MS = process.env.FUZZ_RUNS ? 60 * 60_000 : 60_000;
