/**
 * `AgentControlCampaignBreached` (docs/monitoring/alerts.yml) names the campaign a breach
 * stopped, and never one an operator paused, judged by the real `promtool test rules` over
 * synthetic series. Found by the operator's day: the alert named a campaign paused by hand
 * (and later completed) when another campaign breached.
 */
import { describe, expect, it } from "vitest";
import { promtoolTestRules } from "../../helpers/promtool.js";

const named = (campaign: string) => ({
  exp_labels: { severity: "critical", campaign },
  exp_annotations: {
    summary: `Campaign ${campaign}: a batch breached`,
    description: `A batch breached in the last 15 minutes: its failed nodes reached the campaign's threshold (cause="failures") or a health gate failed (cause="gate"); the campaign acts as its on-breach setting says (roll back, pause or stop). \`agentctl campaign show ${campaign}\` names the node that stopped it and the failing nodes' codes.`,
  },
});

describe("the AgentControlCampaignBreached alert", () => {
  it("names the campaign a breach stopped, not one an operator paused, and only within its window", async () => {
    const stdout = await promtoolTestRules([
      {
        interval: "1m",
        input_series: [
          // c-paused: an operator paused it at minute 2; it runs on, never breached.
          {
            series: 'agent_control_campaign_phase{campaign="c-paused",phase="running"}',
            values: "1x1 _x5 1x40",
          },
          {
            series: 'agent_control_campaign_phase{campaign="c-paused",phase="paused"}',
            values: "_x1 1x5 _x40",
          },
          // c-bad: a batch breached at minute 5; it rolls back, then stays rolled back
          // live as paused (on breach: pause) for the rest of the test.
          {
            series: 'agent_control_campaign_phase{campaign="c-bad",phase="paused"}',
            values: "_x4 1x44",
          },
          {
            series: 'agent_control_campaign_breached{campaign="c-bad",code="batch_failed"}',
            values: "_x4 1x44",
          },
          {
            series: 'agent_control_campaign_breaches_total{cause="failures"}',
            values: "0x4 1x44",
          },
        ],
        alert_rule_test: [
          { eval_time: "3m", alertname: "AgentControlCampaignBreached", exp_alerts: [] },
          {
            eval_time: "7m",
            alertname: "AgentControlCampaignBreached",
            exp_alerts: [named("c-bad")],
          },
          // Past the window: the breach is old news, whatever the campaign still says.
          { eval_time: "30m", alertname: "AgentControlCampaignBreached", exp_alerts: [] },
        ],
      },
    ]);
    expect(stdout).toContain("SUCCESS");
  });
});
