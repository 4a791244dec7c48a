/**
 * Attack (TUF's indefinite freeze, by withholding): the network or a compromised Control
 * lets the Agent trust a timestamp, then serves no timestamp at all (404) once that one has
 * expired. The Agent's newest trusted timestamp is past its expiry, so it is frozen exactly
 * as when it is served the stale timestamp, but the refusal is classified
 * `metadata_unavailable` (a fetch error) and `agent status` says `trust.frozen: false`: the
 * freeze the issue requires the Agent to report goes unreported, and the operator is told the
 * metadata is merely unreachable.
 *
 * Expected: with its newest trusted timestamp expired, the Agent refuses the release
 * `metadata_expired` and `agent status` shows `trust.frozen: true`, whether the server
 * answers with stale metadata or with none.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, type ReleaseKeyPair } from "../../control/shared/release/index.js";
import {
  type Operation,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { TestTufRepo } from "../helpers/tuf-repo.js";
import {
  agentStatus,
  buildAgent,
  eventually,
  type RunningAgent,
  startAgent,
} from "./agent-fixture.js";
import { HostileArtifacts, HostileControl } from "./hostile-control.js";
import { FORGED_PLATFORM, Forger } from "./hostile-forge.js";

const JOIN = "freeze-join";

describe("a freeze by withholding the timestamp", () => {
  let dir = "";
  let install = "";
  let artifact = "";
  let control: HostileControl;
  let artifacts: HostileArtifacts;
  let elsewhere: HostileArtifacts;
  let repo: TestTufRepo;
  let keys: ReleaseKeyPair[];
  let agent: RunningAgent | undefined;
  let forger: Forger;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "attack-freeze-"));
    install = join(dir, "install");
    artifact = join(dir, "agent-1.0.0.mjs");
    await buildAgent("1.0.0", artifact);
    keys = [await generateKeyPair()];
    control = await new HostileControl(JOIN).start();
    artifacts = await new HostileArtifacts().start();
    elsewhere = await new HostileArtifacts().start();
    repo = await TestTufRepo.create();
    forger = new Forger({ artifacts, elsewhere, repo, keys });
    const root = join(dir, "root.json");
    await writeFile(root, repo.initialRoot);
    agent = startAgent(artifact, install, [
      "--server",
      control.address,
      "--join-token",
      JOIN,
      "--node-id",
      "frozen-1",
      "--platform",
      FORGED_PLATFORM,
      "--pins",
      keys.map((k) => k.pin).join(","),
      "--threshold",
      "1",
      "--tuf-root",
      root,
      "--tuf-url",
      repo.base,
      "--download-origins",
      artifacts.base,
    ]);
    await eventually(async () => control.live()?.hello, "the Agent's first Hello");
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    control?.stop();
    await artifacts?.stop();
    await elsewhere?.stop();
    await repo?.stop();
  });

  async function answer(op: Operation) {
    control.send(op);
    const final = new Set([
      OperationPhase.REFUSED,
      OperationPhase.FAILED,
      OperationPhase.RESTARTING,
    ]);
    return eventually(
      async () => control.reports(op.id).find((r) => final.has(r.phase)),
      `the Agent's answer to ${op.id}`,
      40_000,
    );
  }

  it("is reported as a freeze (metadata_expired, trust.frozen) once the trusted timestamp expired", async () => {
    // The Agent trusts a timestamp that expires in 3 s (an unlisted release makes it refresh).
    const expiresAt = Date.now() + 3000;
    await repo.publishTimestamp(new Date(expiresAt));
    const first = await answer(
      await forger.upgrade({ version: "1.5.0", sequence: 50, listed: false }),
    );
    expect(first.code).toBe("untrusted_release");
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 1000));

    // Now no timestamp is served at all; a listed release is offered.
    const op = await forger.upgrade({ version: "1.6.0", sequence: 60 });
    repo.files.delete("timestamp.json");
    const report = await answer(op);
    const status = (await agentStatus(artifact, install)) as unknown as {
      trust: { frozen: boolean; code?: string } | null;
    };
    expect({ code: report.code, frozen: status.trust?.frozen }).toEqual({
      code: "metadata_expired",
      frozen: true,
    });
  });
});
