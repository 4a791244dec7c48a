/**
 * The gate host allow-list (`gates.allowedHosts`) through the real `agentctl`: a campaign whose
 * gate names a host outside it is refused INVALID_ARGUMENT naming the host and the key, and
 * nothing is started; a gate on an allowed host is admitted.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, type RawStream } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";

const BATCHES = ["--batches", "100:0s"];

describe("agentctl campaign with a gate host allow-list", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let env: Record<string, string>;
  let agent: RawStream | undefined;

  beforeAll(async () => {
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    tc = await startTestControl({
      config: {
        release: { pins: [key.pin], threshold: 1 },
        policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
        gates: { allowedHosts: ["prometheus.internal:9090", "hooks.example.com"] },
      },
    });
    env = { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
    await registerTestRelease(tc, { version: "1.1.0", sequence: 1, key });
    agent = (await connectAgent(tc.agentAddress, await tc.joinToken(), "gate-hosts-1")).stream;
  });

  afterAll(async () => {
    agent?.close();
    await tc?.stop();
  });

  it.each<[string, string, string]>([
    ["a host not listed", "prometheus http://169.254.169.254/latest up", "169.254.169.254:80"],
    [
      "a listed host on another port",
      "prometheus http://prometheus.internal:9091 up",
      "prometheus.internal:9091",
    ],
    [
      "a host listed without a port, on a port not the default",
      "webhook https://hooks.example.com:8443/x",
      "hooks.example.com:8443",
    ],
  ])(
    "refuses a start whose gate names %s, naming it and the key, and starts nothing",
    async (_, gate, host) => {
      const result = await agentctl(
        ["campaign", "start", "--version", "1.1.0", ...BATCHES, "--gate", gate, "--yes"],
        env,
      );
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^agentctl: [^\n]+\n$/);
      expect(result.stderr).toContain(`gate host ${host} is not in gates.allowedHosts`);
      const { campaigns } = await tc.client(CampaignService).listCampaigns({});
      expect(campaigns).toHaveLength(0);
      const { events } = await tc.client(AuditService).listAuditEvents({ action: "start" });
      expect(events).toHaveLength(0);
    },
  );

  it("answers the admin API INVALID_ARGUMENT", async () => {
    const start = tc.client(CampaignService).startCampaign({
      spec: {
        targetVersion: "1.1.0",
        gates: ["webhook http://attacker.example/collect"],
        batches: [{ percent: 100 }],
      },
    });
    await expect(start).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining(
        "gate host attacker.example:80 is not in gates.allowedHosts",
      ),
    });
  });

  it("admits a gate on an allowed host and port, and a host listed without a port on its scheme's default", async () => {
    for (const gate of [
      "prometheus http://prometheus.internal:9090 up",
      "webhook https://hooks.example.com/rollout",
    ]) {
      const result = await agentctl(
        ["campaign", "plan", "--version", "1.1.0", ...BATCHES, "--gate", gate],
        env,
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/1 node\(s\) in 1 batch/);
    }
  });
});
