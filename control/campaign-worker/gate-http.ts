/**
 * The product's {@link GateProbe}: Prometheus instant queries (`GET URL/api/v1/query`) and
 * webhooks (`POST URL`, JSON body), over HTTP with the runner's AbortSignal. An answer that is
 * not HTTP 2xx from Prometheus, or not a successful query, is `unreachable` (the query could not
 * be judged); a webhook's non-2xx answer is `fail`; a connection error or timeout rejects
 * (the runner stores it as unreachable).
 */
import { judgePrometheusAnswer } from "../campaign/index.js";
import type { GateContext, GateProbe } from "./gate-runner.js";

/** Evaluates gates over HTTP. */
export const httpGateProbe: GateProbe = {
  async evaluate(gate, context, signal) {
    switch (gate.kind) {
      case "prometheus": {
        const url = new URL("api/v1/query", gate.url.endsWith("/") ? gate.url : `${gate.url}/`);
        url.searchParams.set("query", gate.query);
        const res = await fetch(url, { signal });
        const text = await res.text();
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
          headers: { "content-type": "application/json" },
          body: JSON.stringify(webhookBody(context)),
        });
        await res.arrayBuffer().catch(() => undefined);
        const value = `HTTP ${res.status}`;
        return res.ok
          ? { status: "pass", value, message: "the webhook answered success" }
          : { status: "fail", value, message: `the webhook answered HTTP ${res.status}` };
      }
    }
  },
};

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
