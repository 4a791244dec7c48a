import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CampaignPhase,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { OperationPhase } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { channelCredentials, NODE_A, NODE_CN, tlsConfig, tlsFile } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, type RawStream } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";
import { fastConfig, quickSpec, waitForCampaign } from "./campaign-fixture.js";

const OLD = "1.0.0";
const NEW = "2.0.0";

/**
 * A minimal real agent over mTLS (its identity is its client certificate, no token): it
 * reports an upgrade's phases, "restarts" onto the target with a new boot id, and confirms.
 */
async function mtlsAgent(
  address: string,
  nodeId: string,
  cert: "node-a" | "node-cn",
  signal: AbortSignal,
): Promise<string[]> {
  const seen: string[] = [];
  const tls = channelCredentials(cert);
  const hello = (version: string, previous: string, boot: number) =>
    connectAgent(
      address,
      undefined,
      nodeId,
      {
        agentVersion: version,
        previousVersion: previous,
        bootId: `${nodeId}-boot-${boot}`,
        capabilities: ["upgrade.v1"],
      },
      tls,
    );
  let boot = 1;
  let { stream } = await hello(OLD, "", boot);
  signal.addEventListener("abort", () => stream.close(), { once: true });
  const report = (s: RawStream, operationId: string, phase: OperationPhase, version: string) =>
    s.send({ body: { case: "observed", value: { operationId, phase, version } } });
  while (!signal.aborted) {
    const message = await stream.next(60_000).catch(() => undefined);
    if (message?.body.case !== "operation") continue;
    const op = message.body.value;
    seen.push(op.kind.case ?? "?");
    if (op.kind.case === "agentUpgrade") {
      const target = op.kind.value.version;
      for (const phase of [
        OperationPhase.ACCEPTED,
        OperationPhase.DOWNLOADING,
        OperationPhase.VERIFYING,
        OperationPhase.APPLYING,
        OperationPhase.RESTARTING,
      ]) {
        report(stream, op.id, phase, target);
      }
      stream.close();
      await stream.ended;
      boot += 1;
      ({ stream } = await hello(target, OLD, boot));
    } else if (op.kind.case === "agentConfirm") {
      report(stream, op.id, OperationPhase.CONFIRMED, NEW);
    }
  }
  stream.close();
  return seen;
}

describe("a campaign entirely over TLS: agents on mTLS (no tokens), the admin API on HTTPS", () => {
  let tc: TestControl;
  beforeAll(async () => {
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    tc = await startTestControl({
      adminCa: tlsFile("ca"),
      config: {
        ...fastConfig(key.pin),
        tls: tlsConfig({ mtls: true, admin: true }),
        // One of the fleet's certificates names its node by CN only: allowed here explicitly.
        enrollment: { agentReportedLabels: ["*"], certificateIdentity: { commonName: true } },
      },
    });
    await registerTestRelease(tc, { version: NEW, sequence: 20, key });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("upgrades and confirms both certified nodes in two batches", async () => {
    const stop = new AbortController();
    const agents = [
      mtlsAgent(tc.agentAddress, NODE_A, "node-a", stop.signal),
      mtlsAgent(tc.agentAddress, NODE_CN, "node-cn", stop.signal),
    ];
    try {
      const campaigns = tc.client(CampaignService);
      while (tc.control.hub.size < 2) await new Promise((r) => setTimeout(r, 20));
      const started = await campaigns.startCampaign({ spec: quickSpec(NEW, [5, 100]) });
      const done = await waitForCampaign(campaigns, started.campaign?.id ?? "");
      expect(done.phase).toBe(CampaignPhase.COMPLETED);
      expect(done.batches.map((b) => b.nodeCount)).toEqual([1, 1]);
      expect(done.counts).toEqual([
        expect.objectContaining({ state: NodeState.SUCCEEDED, count: 2 }),
      ]);
    } finally {
      stop.abort();
    }
    const seen = await Promise.all(agents);
    for (const ops of seen) expect(ops.slice(0, 2)).toEqual(["agentUpgrade", "agentConfirm"]);
  });
});
