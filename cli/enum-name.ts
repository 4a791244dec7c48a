/**
 * The short names agentctl writes for protobuf enum values, in tables and in JSON alike.
 */
import type { DescEnum } from "@bufbuild/protobuf";

/**
 * The short lower-case name of an enum value: `CAMPAIGN_PHASE_ROLLED_BACK` → `rolled_back`.
 * Unknown numbers print as their number.
 */
export function enumName(desc: DescEnum, value: number): string {
  const found = desc.values.find((v) => v.number === value);
  if (found === undefined) return String(value);
  const name = found.name.toLowerCase();
  const prefix = desc.sharedPrefix;
  return prefix !== undefined && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}
