/**
 * `AgentControlTufFrozen` (docs/monitoring/alerts.yml) fires on a freeze the Agents report as
 * well as on Control's own expired offline metadata, judged by the real `promtool test rules`
 * over synthetic series: a `metadata_expired` refusal counted by
 * `agent_control_agent_trust_refusals_total` raises it while the offline metadata is fresh.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ALERTS, promtoolTestRules } from "../../helpers/promtool.js";

interface Rule {
  alert?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

async function frozenRule(): Promise<Rule> {
  const doc = parse(await readFile(ALERTS, "utf8")) as { groups: { rules: Rule[] }[] };
  const rule = doc.groups.flatMap((g) => g.rules).find((r) => r.alert === "AgentControlTufFrozen");
  if (rule === undefined) throw new Error("no AgentControlTufFrozen rule");
  return rule;
}

describe("the AgentControlTufFrozen alert", () => {
  it("fires when Agents refuse releases metadata_expired or report themselves frozen, and not before", async () => {
    const rule = await frozenRule();
    const expected = [{ exp_labels: rule.labels ?? {}, exp_annotations: rule.annotations ?? {} }];
    const stdout = await promtoolTestRules([
      {
        interval: "1m",
        input_series: [
          // The offline metadata is fresh for the whole test.
          {
            series: 'agent_control_tuf_offline_expiry_seconds{instance="a"}',
            values: "999999x40",
          },
          {
            series:
              'agent_control_agent_trust_refusals_total{code="metadata_expired",instance="a"}',
            values: "0x5 3x35",
          },
          {
            series:
              'agent_control_agent_trust_refusals_total{code="untrusted_release",instance="a"}',
            values: "0 5x39",
          },
        ],
        alert_rule_test: [
          { eval_time: "4m", alertname: "AgentControlTufFrozen", exp_alerts: [] },
          { eval_time: "8m", alertname: "AgentControlTufFrozen", exp_alerts: expected },
          // Fifteen minutes without a new refusal: the Agents no longer report a freeze.
          { eval_time: "30m", alertname: "AgentControlTufFrozen", exp_alerts: [] },
        ],
      },
      {
        // No upgrade is offered (no refusals): the Agents' periodic refresh reports it.
        interval: "1m",
        input_series: [
          {
            series: 'agent_control_tuf_offline_expiry_seconds{instance="a"}',
            values: "999999x40",
          },
          {
            series: 'agent_control_nodes_trust_frozen{instance="a"}',
            values: "0x5 2x10 0x20",
          },
        ],
        alert_rule_test: [
          { eval_time: "4m", alertname: "AgentControlTufFrozen", exp_alerts: [] },
          { eval_time: "8m", alertname: "AgentControlTufFrozen", exp_alerts: expected },
          // The nodes refreshed fresh metadata: none reports a freeze any more.
          { eval_time: "25m", alertname: "AgentControlTufFrozen", exp_alerts: [] },
        ],
      },
    ]);
    expect(stdout).toContain("SUCCESS");
  });
});
