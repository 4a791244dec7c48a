/**
 * Outside health gates: checks a campaign names, evaluated by the worker (they are I/O) while a
 * batch soaks, and judged here as facts. A batch passes only when every gate's latest result,
 * taken after the batch settled, holds; a gate that fails — or stays unreachable for the
 * campaign's gate grace — breaches the batch (its on_breach applies).
 *
 * - `prometheus URL QUERY [OP NUMBER]`: an instant query on `URL/api/v1/query`. Without a
 *   comparison it holds when the result is non-empty. With one (`< 0.05`, ops `< <= > >= ==
 *   !=`), Control queries QUERY alone and it holds when the result is non-empty and EVERY
 *   sample satisfies the comparison (a PromQL filter would hide the failing series).
 * - `webhook URL`: a POST of the campaign, batch and target as JSON; holds on a 2xx answer.
 */

/** A comparison Control applies to each sample of a Prometheus gate. */
export type GateOp = "<" | "<=" | ">" | ">=" | "==" | "!=";

/** One gate, as stored. */
export type Gate =
  | {
      readonly kind: "prometheus";
      /** The Prometheus server's base URL (`/api/v1/query` is appended). */
      readonly url: string;
      readonly query: string;
      /** With `value`: the comparison every sample must satisfy; absent: non-empty holds. */
      readonly op?: GateOp | undefined;
      readonly value?: number | undefined;
    }
  | { readonly kind: "webhook"; readonly url: string };

/** What one evaluation found: held, did not hold, or could not be carried out. */
export type GateStatus = "pass" | "fail" | "unreachable";

/** The latest result of one gate for one batch, as the worker stores it. */
export interface GateResult {
  readonly batch: number;
  /** The gate's index in the spec. */
  readonly gate: number;
  readonly status: GateStatus;
  /**
   * When the gate was asked (epoch ms): the answer is evidence of that moment, so it counts for
   * a batch only when asked at or after the batch settled (`gate-rules.ts`).
   */
  readonly at: number;
  /** What was measured, for the audit log ("0.12", "HTTP 503", "no samples"). */
  readonly value: string;
  readonly message: string;
  /** While unreachable: since when, without a reachable result in between. */
  readonly unreachableSince?: number | undefined;
}

/** Default time a gate may stay unreachable before it counts as failing. */
export const DEFAULT_GATE_GRACE_MS = 60_000;

/** The outcome of {@link parseGate}. */
export type GateParse =
  | { readonly ok: true; readonly gate: Gate }
  | { readonly ok: false; readonly message: string };

const OPS: readonly GateOp[] = ["<=", ">=", "==", "!=", "<", ">"];

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * Parses `prometheus URL QUERY [OP NUMBER]` or `webhook URL`. A trailing comparison on a
 * Prometheus query is Control's (see the module comment), not PromQL's.
 */
export function parseGate(text: string): GateParse {
  const trimmed = text.trim();
  const fail = (why: string): GateParse => ({
    ok: false,
    message: `gate "${trimmed}": ${why}; expected "prometheus URL QUERY [OP NUMBER]" or "webhook URL"`,
  });
  const m = /^(\S+)\s+(\S+)\s*(.*)$/s.exec(trimmed);
  if (m === null) return fail("a kind and a URL are required");
  const [, kind, url, rest] = m as unknown as [string, string, string, string];
  if (!isHttpUrl(url)) return fail(`"${url}" is not an http(s) URL`);
  if (kind === "webhook") {
    if (rest.trim() !== "") return fail("a webhook takes only a URL");
    return { ok: true, gate: { kind: "webhook", url } };
  }
  if (kind !== "prometheus") return fail(`unknown kind "${kind}"`);
  const cmp = /^(.*?)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$/s.exec(rest);
  const query = (cmp ? (cmp[1] as string) : rest).trim();
  if (query === "") return fail("a query is required");
  if (cmp === null) return { ok: true, gate: { kind: "prometheus", url, query } };
  return {
    ok: true,
    gate: { kind: "prometheus", url, query, op: cmp[2] as GateOp, value: Number(cmp[3]) },
  };
}

/** The canonical text of a gate (parses back to the same gate). */
export function formatGate(g: Gate): string {
  switch (g.kind) {
    case "webhook":
      return `webhook ${g.url}`;
    case "prometheus":
      return `prometheus ${g.url} ${g.query}${g.op !== undefined ? ` ${g.op} ${g.value}` : ""}`;
  }
}

/**
 * A gate's text as the admin API shows it: a webhook URL is a secret (chat and incident
 * webhooks carry their credential in the path or query), so only its origin is shown, as
 * `webhook https://host[:port]/…`; user information is dropped. A Prometheus gate is shown in
 * full ({@link formatGate}).
 */
export function redactedGateText(g: Gate): string {
  switch (g.kind) {
    case "webhook": {
      let origin = "…";
      try {
        origin = new URL(g.url).origin;
      } catch {
        // a stored gate always parsed; show nothing of one that does not
      }
      return `webhook ${origin}/…`;
    }
    case "prometheus":
      return formatGate(g);
  }
}

function compare(op: GateOp, a: number, b: number): boolean {
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    case "==":
      return a === b;
    case "!=":
      return a !== b;
  }
}

/** What an evaluation reports: its status, value and message. */
export type GateOutcome = Pick<GateResult, "status" | "value" | "message">;

/**
 * Judges a Prometheus `/api/v1/query` answer (parsed JSON) for a gate: `status` not "success"
 * is unreachable (the query could not be answered); a vector, matrix or scalar result holds per
 * the module's rule (NaN never satisfies a comparison).
 */
export function judgePrometheusAnswer(
  gate: Extract<Gate, { kind: "prometheus" }>,
  answer: unknown,
): GateOutcome {
  const a = answer as {
    status?: string;
    error?: string;
    data?: { resultType?: string; result?: unknown };
  };
  if (a?.status !== "success" || a.data === undefined) {
    return {
      status: "unreachable",
      value: "error",
      message: `Prometheus answered ${a?.status ?? "no status"}: ${a?.error ?? "no data"}`,
    };
  }
  const samples: number[] = [];
  const { resultType, result } = a.data;
  if (resultType === "scalar" && Array.isArray(result)) samples.push(Number(result[1]));
  else if (resultType === "vector" && Array.isArray(result)) {
    for (const s of result as { value?: [number, string] }[]) samples.push(Number(s.value?.[1]));
  } else if (resultType === "matrix" && Array.isArray(result)) {
    for (const s of result as { values?: [number, string][] }[])
      for (const v of s.values ?? []) samples.push(Number(v[1]));
  }
  if (samples.length === 0) {
    return { status: "fail", value: "no samples", message: "the query returned no samples" };
  }
  const value = samples.map((s) => String(s)).join(",");
  if (gate.op === undefined || gate.value === undefined) {
    return { status: "pass", value, message: `${samples.length} sample(s)` };
  }
  const bad = samples.filter(
    (s) => Number.isNaN(s) || !compare(gate.op as GateOp, s, gate.value as number),
  );
  return bad.length === 0
    ? { status: "pass", value, message: `every sample ${gate.op} ${gate.value}` }
    : {
        status: "fail",
        value,
        message: `${bad.length} of ${samples.length} sample(s) not ${gate.op} ${gate.value} (${bad.slice(0, 5).join(", ")})`,
      };
}

/**
 * A gate result's message with its value named once: `message (value V)`, or the message alone
 * when it names the value already (a Prometheus comparison lists its failing samples, "no
 * samples" says itself), so an operator never reads `… not > 1000 (302) (value 302)`.
 */
export function gateResultText(message: string, value: string): string {
  return value === "" || message.includes(value) ? message : `${message} (value ${value})`;
}

/**
 * True when a gate's latest result counts as failing at `now`: it did not hold, or it is
 * unreachable and has been since `graceMs` or more before `now` (an unreachable gate within its
 * grace neither holds nor fails: the batch waits).
 */
export function gateFails(r: GateResult, graceMs: number, now: number): boolean {
  if (r.status === "fail") return true;
  return r.status === "unreachable" && now - (r.unreachableSince ?? r.at) >= graceMs;
}

/**
 * A label for a gate in messages, audit rows and waits: "gate 2 (prometheus up)", a webhook by
 * its origin only ("gate 1 (webhook https://hooks.example/…)", as {@link redactedGateText}).
 */
export function gateLabel(gates: readonly Gate[], index: number): string {
  const g = gates[index];
  if (g === undefined) return `gate ${index + 1}`;
  return `gate ${index + 1} (${g.kind === "prometheus" ? `prometheus ${g.query}` : redactedGateText(g)})`;
}

export { OPS as GATE_OPS };
