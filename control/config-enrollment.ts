/**
 * The `enrollment` section of the config: which Hello labels Control trusts, and whether new
 * nodes wait for an administrator's approval.
 */
import { isLabelKey } from "./agents/validate.js";
import { type ConfigInput, Reader } from "./config-reader.js";
import type { CertificateIdentity } from "./tls/node-identity.js";

/** `enrollment.*`: how nodes join and which of their own claims are believed. */
export interface EnrollmentConfig {
  /**
   * Label keys taken from the Agent's own Hello (`"*"`: every key, for labs and
   * simulations). Every other label comes only from the join token that enrolled the node
   * or from an administrator (`agentctl node label`): a node cannot make itself a canary
   * or choose its pool. Default: none.
   */
  readonly agentReportedLabels: readonly string[];
  /** New nodes wait as `pending` (never offered) until `agentctl node approve ID`. */
  readonly requireApproval: boolean;
  /**
   * Which client certificate forms name a node besides the SAN URI
   * `agentcontrol://node/<id>`: `certificateIdentity.dnsSuffix` (a SAN DNS name
   * `<id>.<suffix>`) and `certificateIdentity.commonName` (the subject CN; default false).
   */
  readonly certificateIdentity: CertificateIdentity;
}

const KEYS = ["agentReportedLabels", "requireApproval", "certificateIdentity"];

/** Reads and validates `enrollment`, adding a problem per bad value. */
export function readEnrollment(input: ConfigInput, problems: string[]): EnrollmentConfig {
  const v = new Reader(problems);
  const section = v.section(input, "enrollment");
  for (const key of Object.keys(section)) {
    if (!KEYS.includes(key)) problems.push(`enrollment.${key}: unknown setting`);
  }
  const labels = v.stringList(section, "enrollment.agentReportedLabels");
  const bad = labels.find((key) => key !== "*" && !isLabelKey(key));
  if (bad !== undefined) {
    problems.push(
      `enrollment.agentReportedLabels: "${bad.slice(0, 40)}" is not a label key (or "*" for every key)`,
    );
  }
  const identity = v.section(section, "certificateIdentity");
  for (const key of Object.keys(identity)) {
    if (!["dnsSuffix", "commonName"].includes(key)) {
      problems.push(`enrollment.certificateIdentity.${key}: unknown setting`);
    }
  }
  const dnsSuffix =
    identity.dnsSuffix === undefined
      ? undefined
      : v.string(identity, "enrollment.certificateIdentity.dnsSuffix", "");
  if (dnsSuffix !== undefined && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(dnsSuffix)) {
    problems.push(
      `enrollment.certificateIdentity.dnsSuffix: "${dnsSuffix.slice(0, 40)}" is not a DNS name suffix`,
    );
  }
  return {
    agentReportedLabels: [...new Set(labels)],
    requireApproval: v.boolean(section, "enrollment.requireApproval", false),
    certificateIdentity: {
      dnsSuffix,
      commonName: v.boolean(identity, "enrollment.certificateIdentity.commonName", false),
    },
  };
}
