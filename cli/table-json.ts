/**
 * `--json` and `-o yaml` in the words of agentctl's tables. A response is first written as
 * protobuf's canonical JSON (lowerCamelCase names, 64-bit integers as strings, timestamps
 * RFC 3339, every field present), then three things are said as the tables say them:
 * - every enum value by its short name: `CAMPAIGN_PHASE_RUNNING` → `running`,
 *   `NODE_STATE_TIMED_OUT` → `timed_out` (the unspecified zero is `unspecified`);
 * - batch and group positions counted from 1, as the tables count them (`currentBatch: 2` is
 *   the batch the table shows as `2/3`; a node's `batch`, a batch's `index` likewise);
 * - a campaign spec in the words of `campaign start`'s flags ({@link specFields}), the form a
 *   campaign file takes.
 */
import type { DescField, DescMessage, JsonObject, JsonValue, Message } from "@bufbuild/protobuf";
import { toJson } from "@bufbuild/protobuf";
import { CampaignSpecSchema } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { specFields } from "./commands/campaign-fields.js";
import { enumName } from "./enum-name.js";

/**
 * Fields (full protobuf names) that hold a position counted from 0 on the wire and from 1 in
 * agentctl's tables.
 */
export const POSITION_FIELDS: ReadonlySet<string> = new Set([
  "agentcontrol.admin.v1.Campaign.current_batch",
  "agentcontrol.admin.v1.BatchStatus.index",
  "agentcontrol.admin.v1.CampaignNode.batch",
  "agentcontrol.admin.v1.PlannedBatch.index",
  "agentcontrol.admin.v1.GetCampaignWaitsResponse.current_batch",
  "agentcontrol.admin.v1.RolloutPlan.current_group",
]);

/** Messages written in words of their own instead of field by field. */
const OWN_WORDS: ReadonlyMap<string, (message: Message) => JsonValue> = new Map([
  [
    CampaignSpecSchema.typeName,
    (m: Message) => specFields(m as Parameters<typeof specFields>[0]) as JsonValue,
  ],
]);

/** The value of `field` in `message` (a oneof member only when it is the chosen case). */
function fieldValue(message: Message, field: DescField): unknown {
  const record = message as unknown as Record<string, unknown>;
  if (field.oneof !== undefined) {
    const chosen = record[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
    return chosen?.case === field.localName ? chosen.value : undefined;
  }
  return record[field.localName];
}

/** Rewrites one field's JSON value in table words; `value` is the field's message value. */
function rewriteField(field: DescField, value: unknown, json: JsonValue): JsonValue {
  switch (field.fieldKind) {
    case "enum":
      return enumName(field.enum, value as number);
    case "scalar":
      return POSITION_FIELDS.has(`${field.parent.typeName}.${field.name}`) &&
        typeof json === "number"
        ? json + 1
        : json;
    case "message":
      return rewriteMessage(field.message, value as Message, json);
    case "list": {
      const items = value as unknown[];
      const out = json as JsonValue[];
      if (field.listKind === "enum") return items.map((v) => enumName(field.enum, v as number));
      if (field.listKind === "message")
        return items.map((v, i) => rewriteMessage(field.message, v as Message, out[i] ?? null));
      return json;
    }
    case "map": {
      const entries = value as Record<string, unknown>;
      const out = json as JsonObject;
      if (field.mapKind === "enum") {
        return Object.fromEntries(
          Object.keys(out).map((k) => [k, enumName(field.enum, entries[k] as number)]),
        );
      }
      if (field.mapKind === "message") {
        return Object.fromEntries(
          Object.keys(out).map((k) => [
            k,
            rewriteMessage(field.message, entries[k] as Message, out[k] ?? null),
          ]),
        );
      }
      return json;
    }
  }
}

/** Rewrites a message's canonical JSON (`json`) in table words. */
function rewriteMessage(desc: DescMessage, message: Message, json: JsonValue): JsonValue {
  const own = OWN_WORDS.get(desc.typeName);
  if (own !== undefined) return own(message);
  // Well-known types (Timestamp, Duration, Struct, …) keep their canonical JSON.
  if (desc.typeName.startsWith("google.protobuf.")) return json;
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const out: JsonObject = { ...json };
  for (const field of desc.fields) {
    const current = out[field.jsonName];
    if (current === undefined) continue;
    out[field.jsonName] = rewriteField(field, fieldValue(message, field), current);
  }
  return out;
}

/**
 * `message` as JSON in the words of agentctl's tables (see the module comment). Fields keep
 * protobuf's JSON names; each is present even when it holds its default.
 */
export function tableJson<Desc extends DescMessage>(desc: Desc, message: Message): JsonValue {
  const json = toJson(desc, message as never, { alwaysEmitImplicit: true });
  return rewriteMessage(desc, message, json);
}
