/**
 * With a release channel (`tuf.dir`), every start checks that its release is listed, not only
 * StartCampaign: `desired set` of an unlisted release is refused `release_unusable`, and a desired
 * version whose release the channel stops listing halts its convergence with the reason (audited)
 * instead of starting a campaign every Agent on the channel would refuse. A real Control on a real
 * PostgreSQL, real TUF metadata on disk, a node on a real stream.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { DesiredVersionService } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually, type RawStream } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";
import { type TufChannel, writeTufChannel } from "../helpers/tuf-channel.js";

describe("every start on a TUF release channel", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let channel: TufChannel;
  let agent: RawStream | undefined;

  beforeAll(async () => {
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    channel = await writeTufChannel([{ version: "1.1.0", sequence: 1 }]);
    tc = await startTestControl({
      config: {
        release: { pins: [key.pin], threshold: 1 },
        worker: { convergenceIntervalMs: 200, intervalMs: 100 },
        tuf: channel.config,
      },
    });
    await registerTestRelease(tc, { version: "1.1.0", sequence: 1, key });
    await registerTestRelease(tc, { version: "1.2.0", sequence: 2, key });
  });

  afterAll(async () => {
    agent?.close();
    await tc?.stop();
  });

  it("refuses to set an unlisted release as a desired version", async () => {
    await expect(
      tc.client(DesiredVersionService).setDesiredVersion({ targetVersion: "1.2.0" }),
    ).rejects.toMatchObject({
      code: Code.FailedPrecondition,
      rawMessage: expect.stringMatching(
        /1\.2\.0 is not listed in the release channel's TUF targets/,
      ),
    });
    expect(
      (await tc.client(DesiredVersionService).listDesiredVersions({})).desiredVersions,
    ).toEqual([]);
  });

  it("halts convergence to a release the channel stops listing, and starts no campaign", async () => {
    await tc.client(DesiredVersionService).setDesiredVersion({
      targetVersion: "1.1.0",
      reason: "listed when set",
    });
    // The channel is re-signed without 1.1.0 (a pulled release), then a node behind it connects.
    await channel.list([{ version: "1.2.0", sequence: 2 }]);
    agent = (await connectAgent(tc.agentAddress, await tc.joinToken(), "tuf-start-1")).stream;
    const desired = tc.client(DesiredVersionService);
    await eventually(
      async () =>
        (await desired.listDesiredVersions({})).desiredVersions[0]?.haltedAt !== undefined,
      20_000,
      "convergence halted",
    );
    const [d] = (await desired.listDesiredVersions({})).desiredVersions;
    expect(d?.haltedReason).toMatch(
      /^convergence to 1\.1\.0 halted: release 1\.1\.0 is not listed in the release channel's TUF targets/,
    );
    const { events } = await tc
      .client(AuditService)
      .listAuditEvents({ action: "convergence.halt" });
    expect(events).toHaveLength(1);
    expect(events[0]?.message).toMatch(/not listed in the release channel's TUF targets/);
    const { campaigns } = await tc.client(CampaignService).listCampaigns({});
    expect(campaigns).toEqual([]);
  });
});
