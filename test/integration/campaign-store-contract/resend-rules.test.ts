/**
 * The campaign store contract (see ./harness.ts), run against both adapters: the one rule of
 * which unacknowledged operation is still sent (`worthResending`, resend-rules.ts). An
 * unacknowledged row may never have reached its Agent, so a re-send is judged as a first
 * delivery: an upgrade only while its campaign offers (running, inside a window, target not
 * yanked) and its node is enabled; a confirm not once its release is yanked; a rollback not once the release it
 * restores is yanked.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { CampaignPhase, CampaignState } from "../../../control/campaign/index.js";
import { makeKeys, makeRelease } from "../../helpers/releases.js";
import { windowsOf } from "../../unit/campaign/windows-of.js";
import { at, op, T0, TARGET } from "./builders.js";
import { describeStoreContract } from "./harness.js";

const PREVIOUS = "1.0.0";

describeStoreContract("resend rules", ({ fx, store, insert, addOperations, unackedIds }) => {
  beforeEach(async () => {
    const keys = await makeKeys(1);
    for (const [version, sequence] of [
      [PREVIOUS, 5],
      [TARGET, 7],
    ] as const) {
      const made = await makeRelease({ version, sequence, keys, platforms: ["linux-amd64"] });
      await fx.putRelease({
        version,
        sequence,
        envelope: made.envelope,
        artifacts: [{ platform: "linux-amd64", sha256: "ab".repeat(32), size: 42, url: "" }],
        expiresAt: at(7 * 24 * 3_600_000).getTime(),
      });
    }
  });

  /** Rewrites campaign `id`'s state (phase, spec) as a decision would. */
  async function rewrite(id: string, change: (c: CampaignState) => CampaignState) {
    await store.transaction(async (tx) => {
      const row = await tx.readCampaign(id, true);
      if (row === undefined) throw new Error(`no campaign ${id}`);
      await tx.writeDecision({
        campaignId: id,
        version: row.version,
        campaign: change(row.campaign),
        nodes: [],
        operations: [],
        appliedCommands: [],
        audits: [],
        now: at(2),
      });
    });
  }

  /** An offered node with an unacknowledged upgrade, and a node with an unacknowledged confirm. */
  async function offeredAndConfirmed() {
    await insert("c1", [
      { id: "n1", state: "offered" },
      { id: "n2", state: "succeeded" },
    ]);
    await addOperations("c1", [op("c1", "n1", "upgrade"), op("c1", "n2", "confirm")], at(1));
  }

  describe("an unacknowledged upgrade", () => {
    it("is re-sent while its campaign runs", async () => {
      await offeredAndConfirmed();
      expect(await unackedIds()).toEqual(["c1/n1/upgrade", "c1/n2/confirm"]);
    });

    for (const phase of [
      "paused",
      "aborted",
      "rolling_back",
      "failed",
      "completed",
    ] as CampaignPhase[]) {
      it(`is not sent once its campaign is ${phase} (its confirm still is)`, async () => {
        await offeredAndConfirmed();
        await rewrite("c1", (c) => ({ ...c, phase }));
        expect(await unackedIds()).toEqual(["c1/n2/confirm"]);
      });
    }

    it("is sent only while one of its campaign's windows is open", async () => {
      await offeredAndConfirmed();
      // T0 is a Wednesday, 00:00 UTC.
      await rewrite("c1", (c) => ({
        ...c,
        spec: { ...c.spec, windows: windowsOf("Mon-Sun 00:00-00:30 UTC") },
      }));
      expect(await unackedIds({ now: new Date(T0 + 10 * 60_000) })).toEqual([
        "c1/n1/upgrade",
        "c1/n2/confirm",
      ]);
      expect(await unackedIds({ now: new Date(T0 + 40 * 60_000) })).toEqual(["c1/n2/confirm"]);
      expect(await unackedIds({ now: new Date(T0 + 24 * 3_600_000) })).toEqual([
        "c1/n1/upgrade",
        "c1/n2/confirm",
      ]);
    });
  });

  describe("an unacknowledged upgrade to a node an administrator disabled", () => {
    /** Registers n1 (offered) and n2 (confirmed), enabled or not. */
    async function register(enabled: { n1: boolean; n2: boolean }) {
      for (const id of ["n1", "n2"] as const) {
        await fx.putNode({
          id,
          pool: "p",
          boot_id: "b",
          agent_version: PREVIOUS,
          capabilities: ["upgrade.v1"],
          platform: "linux-amd64",
          enabled: enabled[id],
          last_seen: null,
        });
      }
    }

    it("is not sent (a disabled node is never offered; a confirm still is)", async () => {
      await offeredAndConfirmed();
      await register({ n1: false, n2: false });
      expect(await unackedIds()).toEqual(["c1/n2/confirm"]);
    });

    it("is sent while its node's registry row says enabled", async () => {
      await offeredAndConfirmed();
      await register({ n1: true, n2: false });
      expect(await unackedIds()).toEqual(["c1/n1/upgrade", "c1/n2/confirm"]);
    });
  });

  describe("an unacknowledged confirm", () => {
    it("is not re-sent once its release is yanked", async () => {
      await offeredAndConfirmed();
      await fx.yankRelease(PREVIOUS, "another release", at(2), "alice");
      expect(await unackedIds()).toEqual(["c1/n1/upgrade", "c1/n2/confirm"]);
      await fx.yankRelease(TARGET, "data loss", at(3), "alice");
      expect(await unackedIds()).toEqual([]);
    });
  });

  describe("an unacknowledged rollback", () => {
    it("is not re-sent once the release it restores is yanked, whatever the campaign's phase", async () => {
      const c = await insert("c1", [{ id: "n1" }, { id: "n2" }]);
      await store.transaction((tx) =>
        tx.writeDecision({
          campaignId: "c1",
          version: 1,
          campaign: { ...c.campaign, phase: "rolling_back", rollbackCause: "breach" },
          nodes: c.nodes.map((n) => ({
            ...n,
            state: "rolling_back" as const,
            previousVersion: n.nodeId === "n1" ? PREVIOUS : "0.9.0",
          })),
          operations: [op("c1", "n1", "rollback"), op("c1", "n2", "rollback")],
          appliedCommands: [],
          audits: [],
          now: at(1),
        }),
      );
      expect(await unackedIds()).toEqual(["c1/n1/rollback", "c1/n2/rollback"]);
      await fx.yankRelease(TARGET, "the target", at(2), "alice");
      expect(await unackedIds()).toEqual(["c1/n1/rollback", "c1/n2/rollback"]);
      await fx.yankRelease(PREVIOUS, "CVE", at(3), "alice");
      expect(await unackedIds()).toEqual(["c1/n2/rollback"]);
    });
  });
});
