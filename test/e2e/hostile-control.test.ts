/**
 * A hostile Control against the real Agent: every attack a server that speaks the Agent
 * protocol can make on the release channel (forged confirms, unsigned, tampered, expired,
 * rolled-back, older-than-running, wrong-platform and under-threshold releases, releases the TUF metadata does
 * not list or lists otherwise, wrong bytes, endless downloads, a frozen timestamp,
 * mixed-and-matched metadata, a forged root rotation, a node token aimed at another port)
 * is refused, and the install directory is left as it was. Its attacks on the stream itself
 * are tested beside it: a Welcome's node token that is no header value or arrives on a
 * node-token stream (attack-welcome-node-token.test.ts, unit welcome-node-token), a heartbeat
 * interval out of range (unit welcome-heartbeat), operation ids over 256 characters or named
 * `__proto__` (unit attack-huge-operation-ids, attack-prototype-operation-ids).
 */
import { randomBytes } from "node:crypto";
import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, type ReleaseKeyPair } from "../../control/shared/release/index.js";
import { tufSigner } from "../../control/shared/tuf/keys.js";
import { buildRoot, metadataBytes } from "../../control/shared/tuf/repository.js";
import {
  type Operation,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { TestTufRepo } from "../helpers/tuf-repo.js";
import { agentStatus, eventually } from "./agent-fixture.js";
import type { HostileArtifacts, HostileControl } from "./hostile-control.js";
import type { Forged, Forger } from "./hostile-forge.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

const JOIN = "hostile-join";
const U64_MAX = 2n ** 64n - 1n;

describe("a hostile Control cannot harm a real Agent", () => {
  let world: HostileWorld;
  let dir = "";
  let install = "";
  let control: HostileControl;
  let artifacts: HostileArtifacts;
  let elsewhere: HostileArtifacts;
  let repo: TestTufRepo;
  let keys: ReleaseKeyPair[];
  let v110: Uint8Array = new Uint8Array();
  let forger: Forger;

  beforeAll(async () => {
    world = await startHostileWorld({
      join: JOIN,
      nodeId: "victim-1",
      prefix: "hostile-control-",
      versions: ["1.0.0", "1.1.0"],
      keys: 2,
      agentFlags: ["--download-grace-ms", "1000", "--download-min-rate", "8192"],
    });
    ({ dir, install, control, artifacts, elsewhere, repo, keys, forger } = world);
    v110 = world.built.get("1.1.0") ?? new Uint8Array();
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  /** What the install directory holds: the link, the versions, the durable floor. */
  async function snapshot() {
    const status = await agentStatus(join(dir, "agent-1.0.0.mjs"), install);
    return {
      current: await readlink(join(install, "current")),
      versions: (await readdir(join(install, "versions"))).sort(),
      confirmedSequence: status.confirmedSequence,
      previous: status.previous,
    };
  }

  /** Sends `op` and resolves with its final report (REFUSED, FAILED, RESTARTING, CONFIRMED). */
  async function attack(op: Operation) {
    const final = [
      OperationPhase.REFUSED,
      OperationPhase.FAILED,
      OperationPhase.RESTARTING,
      OperationPhase.CONFIRMED,
    ];
    return await world.answer(op, final, 20_000);
  }

  const forge = (f: Forged) => forger.upgrade(f);
  const confirmOp = (version: string, sequence: bigint) => forger.confirm(version, sequence);

  const untouched = { current: "versions/1.0.0", versions: ["1.0.0"], confirmedSequence: "0" };

  it.each<[string, () => Forged, OperationPhase, string]>([
    [
      "an unsigned release",
      () => ({ version: "1.5.0", sequence: 50, signers: [] }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "an under-threshold release (1 of 2 pins)",
      () => ({ version: "1.5.0", sequence: 50, signers: [keys[0]!] }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "a release signed by a key it does not pin",
      () => ({ version: "1.5.0", sequence: 50, signers: [keys[0]!, repo.keys.timestamp] }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "a tampered release",
      () => ({
        version: "1.5.0",
        sequence: 50,
        // The signed manifest, re-written to name another version: still JSON, no longer signed.
        tamper: (e) => {
          const text = new TextDecoder().decode(e.payload);
          const changed = text.replace(/("version"\s*:\s*")1\.5\.0"/, '$11.5.9"');
          if (changed === text) throw new Error("the tamper changed nothing");
          return { ...e, payload: new TextEncoder().encode(changed) };
        },
      }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "an expired release",
      () => ({ version: "1.5.0", sequence: 50, expires: new Date(Date.now() - 60_000) }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "an older signed release than the one it runs, on a fresh install with no floor",
      () => ({ version: "0.9.0", sequence: 9 }),
      OperationPhase.REFUSED,
      "sequence_rollback",
    ],
    [
      "a release for another platform",
      () => ({ version: "1.5.0", sequence: 50, platform: "linux-arm64" }),
      OperationPhase.REFUSED,
      "wrong_platform",
    ],
    [
      "a signed release the TUF targets do not list",
      () => ({ version: "1.5.0", sequence: 50, listed: false }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "a signed release TUF lists with other bytes",
      () => ({ version: "1.5.0", sequence: 50, listed: { sha256: "0".repeat(64) } }),
      OperationPhase.REFUSED,
      "untrusted_release",
    ],
    [
      "wrong bytes behind a signed, listed release",
      () => ({ version: "1.5.0", sequence: 50, served: new Uint8Array(randomBytes(4096)) }),
      OperationPhase.FAILED,
      "sha256_mismatch",
    ],
  ])(
    "refuses %s and leaves the install directory as it was",
    async (_what, forged, phase, code) => {
      const before = await snapshot();
      expect(before).toMatchObject(untouched);
      const report = await attack(await forge(forged()));
      expect({ phase: OperationPhase[report.phase], code: report.code }).toEqual({
        phase: OperationPhase[phase],
        code,
      });
      expect(await snapshot()).toEqual(before);
    },
  );

  it("cuts an endless download off (download_too_slow) and takes the next operation", async () => {
    const before = await snapshot();
    const op = await forge({ version: "1.5.0", sequence: 50 });
    const path = new URL(op.kind.case === "agentUpgrade" ? (op.kind.value.artifact?.url ?? "") : "")
      .pathname;
    const body = artifacts.routes.get(path)!.body;
    artifacts.routes.set(path, { kind: "trickle", body, chunk: 256, everyMs: 2000 });
    control.send(op);
    const next = confirmOp("1.0.0", 0n);
    const answer = await attack(next);
    expect(OperationPhase[answer.phase]).toBe("CONFIRMED");
    const slow = control.reports(op.id).at(-1)!;
    expect({ phase: OperationPhase[slow.phase], code: slow.code }).toEqual({
      phase: "FAILED",
      code: "download_too_slow",
    });
    expect(await snapshot()).toEqual(before);
  });

  it("never fetches from another port on the same host (artifact_origin_refused), so its node token never goes there", async () => {
    const before = await snapshot();
    const op = await forge({
      version: "1.5.0",
      sequence: 50,
      base: elsewhere.base,
      served: new Uint8Array(1),
    });
    const report = await attack(op);
    expect({ phase: OperationPhase[report.phase], code: report.code }).toEqual({
      phase: "FAILED",
      code: "artifact_origin_refused",
    });
    expect(elsewhere.requests).toEqual([]);
    const home = artifacts.requests.filter((r) => r.headers.authorization !== undefined);
    expect(home.length).toBeGreaterThan(0);
    expect(await snapshot()).toEqual(before);
  });

  it("never fetches the cloud metadata address a signed release names (artifact_origin_refused)", async () => {
    const before = await snapshot();
    const op = await forge({ version: "1.5.0", sequence: 50, base: "http://169.254.169.254" });
    const report = await attack(op);
    expect({ phase: OperationPhase[report.phase], code: report.code }).toEqual({
      phase: "FAILED",
      code: "artifact_origin_refused",
    });
    expect(report.message).toMatch(/169\.254\.169\.254/);
    expect(await snapshot()).toEqual(before);
  });

  it("refuses every release while the timestamp is expired (a freeze), and says so in status", async () => {
    const before = await snapshot();
    const op = await forge({ version: "1.5.0", sequence: 50 });
    await repo.publishTimestamp(new Date(Date.now() - 1000));
    const report = await attack(op);
    expect(report.code).toBe("metadata_expired");
    const status = (await agentStatus(join(dir, "agent-1.0.0.mjs"), install)) as unknown as {
      trust: { frozen: boolean } | null;
    };
    expect(status.trust).toMatchObject({ frozen: true });
    expect(await snapshot()).toEqual(before);
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
  });

  it("refuses mixed-and-matched metadata: an old snapshot beside a new timestamp", async () => {
    const before = await snapshot();
    const old = repo.files.get("snapshot.json")!;
    const op = await forge({ version: "1.5.0", sequence: 50 });
    repo.files.set("snapshot.json", old);
    const report = await attack(op);
    expect(report.code).toBe("untrusted_release");
    expect(await snapshot()).toEqual(before);
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000), true);
  });

  it("refuses a root rotation the trusted root keys did not sign", async () => {
    const before = await snapshot();
    const saved = new Map(repo.files);
    const forgedKeys = {
      ...repo.keys,
      root: [await generateKeyPair()],
      targets: [await generateKeyPair()],
    };
    const honestRoot = repo.root;
    repo.root = buildRoot(repo.rootSpec(honestRoot.signed.version + 1, forgedKeys));
    repo.root.sign((await tufSigner(forgedKeys.root[0]!.privateKey)).sign);
    repo.files.set(`${repo.root.signed.version}.root.json`, metadataBytes(repo.root));
    const op = await forge({ version: "1.5.0", sequence: 50 });
    const report = await attack(op);
    expect(report.code).toBe("untrusted_release");
    expect(await snapshot()).toEqual(before);
    repo.root = honestRoot;
    repo.files.clear();
    for (const [k, v] of saved) repo.files.set(k, v);
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000), true);
  });

  it("installs a genuine release, then refuses a forged confirm and a rolled-back release", async () => {
    const good = await forge({ version: "1.1.0", sequence: 11, bytes: v110 });
    const streams = control.streams.length;
    const report = await attack(good);
    expect(OperationPhase[report.phase]).toBe("RESTARTING");
    await eventually(
      async () =>
        control.streams.length > streams && control.live()?.hello?.agentVersion === "1.1.0"
          ? true
          : undefined,
      "1.1.0 connected",
    );
    await eventually(
      async () => ((await snapshot()).current === "versions/1.1.0" ? true : undefined),
      "switched",
    );
    const upgraded = await snapshot();

    const forged = await attack(confirmOp("1.1.0", U64_MAX));
    expect({ phase: OperationPhase[forged.phase], code: forged.code }).toEqual({
      phase: "FAILED",
      code: "confirm_mismatch",
    });
    expect(await snapshot()).toEqual(upgraded);

    const genuine = await attack(confirmOp("1.1.0", 11n));
    expect(OperationPhase[genuine.phase]).toBe("CONFIRMED");
    const confirmed = await eventually(async () => {
      const s = await snapshot();
      return s.confirmedSequence === "11" && s.versions.length === 1 ? s : undefined;
    }, "confirmed at 11");
    expect(confirmed).toMatchObject({ current: "versions/1.1.0", versions: ["1.1.0"] });

    const back = await attack(await forge({ version: "1.0.5", sequence: 5 }));
    expect({ phase: OperationPhase[back.phase], code: back.code }).toEqual({
      phase: "REFUSED",
      code: "sequence_rollback",
    });
    const later = await attack(await forge({ version: "1.2.0", sequence: 12, listed: false }));
    expect(later.code).toBe("untrusted_release");
    expect(await snapshot()).toEqual(confirmed);
  });
});
