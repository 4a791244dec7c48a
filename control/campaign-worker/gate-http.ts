/**
 * The product's {@link GateProbe}: Prometheus instant queries (`GET URL/api/v1/query`) and
 * webhooks (`POST URL`, JSON body), over HTTP with the runner's AbortSignal. An answer that is
 * not HTTP 2xx from Prometheus, or not a successful query, is `unreachable` (the query could not
 * be judged); a webhook's non-2xx answer is `fail`; a connection error or timeout rejects
 * (the runner stores it as unreachable).
 *
 * A gate endpoint is trusted with a verdict, not with Control's memory or its requests: an
 * answer is read to at most {@link MAX_GATE_ANSWER_BYTES} (then `unreachable`), and redirects
 * are never followed (a 3xx is judged as the answer it is: unreachable for Prometheus, fail for
 * a webhook), so a gate URL cannot send Control's requests to another host. With a host
 * allow-list (`gates.allowedHosts`), a gate on another host is not contacted at all: it is
 * `unreachable`, saying why, although admission already refuses such a campaign (a list
 * tightened after the campaign started).
 */
import {
  type Gate,
  type GateOutcome,
  gateHostRefusal,
  judgePrometheusAnswer,
} from "../campaign/index.js";
import type { GateContext, GateProbe } from "./gate-runner.js";

/** The most bytes of a gate's answer Control reads. */
export const MAX_GATE_ANSWER_BYTES = 1024 * 1024;

/** The body of `res` as text, or undefined once it exceeds `limit` bytes (reading stops). */
async function boundedText(res: Response, limit: number): Promise<string | undefined> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const isRedirect = (status: number) => status >= 300 && status < 400;

/** Options of {@link createHttpGateProbe}. */
export interface HttpGateProbeOptions {
  /** `gates.allowedHosts`; undefined: any host. */
  readonly allowedHosts?: readonly string[] | undefined;
}

/** Evaluates gates over HTTP, only on the allowed hosts. */
export function createHttpGateProbe(options: HttpGateProbeOptions): GateProbe {
  return {
    async evaluate(gate, context, signal) {
      const refusal = gateHostRefusal(gate.url, options.allowedHosts);
      if (refusal !== undefined) {
        return { status: "unreachable", value: "host not allowed", message: refusal };
      }
      return await evaluateOverHttp(gate, context, signal);
    },
  };
}

/** Evaluates gates over HTTP, on any host (no allow-list). */
export const httpGateProbe: GateProbe = createHttpGateProbe({});

async function evaluateOverHttp(
  gate: Gate,
  context: GateContext,
  signal: AbortSignal,
): Promise<GateOutcome> {
  switch (gate.kind) {
    case "prometheus": {
      const url = new URL("api/v1/query", gate.url.endsWith("/") ? gate.url : `${gate.url}/`);
      url.searchParams.set("query", gate.query);
      const res = await fetch(url, { signal, redirect: "manual" });
      if (isRedirect(res.status)) {
        await res.body?.cancel().catch(() => undefined);
        return {
          status: "unreachable",
          value: `HTTP ${res.status}`,
          message: `Prometheus answered a redirect (HTTP ${res.status}), which is not followed: give the gate its final URL`,
        };
      }
      const text = await boundedText(res, MAX_GATE_ANSWER_BYTES);
      if (text === undefined) {
        return {
          status: "unreachable",
          value: `HTTP ${res.status}`,
          message: "Prometheus answered more than 1 MiB: larger than 1 MiB is not read",
        };
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return {
          status: "unreachable",
          value: `HTTP ${res.status}`,
          message: `Prometheus answered HTTP ${res.status} without JSON`,
        };
      }
      return judgePrometheusAnswer(gate, body);
    }
    case "webhook": {
      const res = await fetch(gate.url, {
        method: "POST",
        signal,
        redirect: "manual",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(webhookBody(context)),
      });
      // Only the status counts: the body is not read.
      await res.body?.cancel().catch(() => undefined);
      const value = `HTTP ${res.status}`;
      if (isRedirect(res.status)) {
        return {
          status: "fail",
          value,
          message: `the webhook answered HTTP ${res.status}, a redirect, which is not followed`,
        };
      }
      return res.ok
        ? { status: "pass", value, message: "the webhook answered success" }
        : { status: "fail", value, message: `the webhook answered HTTP ${res.status}` };
    }
  }
}

/**
 * The JSON a webhook gate is sent: the campaign, its batch and the gate, both numbered from 1
 * as agentctl, the dashboard and the audit log number them, and the target version.
 */
export function webhookBody(context: GateContext): {
  campaignId: string;
  batch: number;
  gate: number;
  targetVersion: string;
} {
  return {
    campaignId: context.campaignId,
    batch: context.batch + 1,
    gate: context.gate + 1,
    targetVersion: context.targetVersion,
  };
}
