/**
 * Reading a node's facts for one operation (internal to the judging rules).
 */
import type { NodeFacts, ObservedReport, SendFailure } from "./model.js";

/** A duration for a message: "10 minutes", or seconds when not whole minutes. */
export const minutes = (ms: number): string => {
  const m = ms / 60_000;
  return Number.isInteger(m)
    ? `${m} minute${m === 1 ? "" : "s"}`
    : `${Math.round(ms / 1000)} seconds`;
};

/** The latest report on an operation, if any. */
export function reportFor(
  facts: NodeFacts | undefined,
  operationId: string | undefined,
): ObservedReport | undefined {
  if (facts === undefined || operationId === undefined) return undefined;
  return facts.reports.find((r) => r.operationId === operationId);
}

/** The send failure of an operation, if the worker gave up delivering it. */
export function sendFailureFor(
  facts: NodeFacts | undefined,
  operationId: string | undefined,
): SendFailure | undefined {
  if (facts === undefined || operationId === undefined) return undefined;
  return facts.sendFailures.find((f) => f.operationId === operationId);
}

/** A report's code and message for a node's message (its phase when both are empty). */
export const detail = (r: ObservedReport): string =>
  [r.code, r.message].filter((s) => s !== "").join(": ") || r.phase;
