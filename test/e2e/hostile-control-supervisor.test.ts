/**
 * A hostile Control cannot give a real Agent a supervisor: a release that says it carries
 * its supervisor is refused, and nothing of a supervisor is written (no `supervisors/`, no
 * `supervisor` pointer, no `supervisor.json`), when it is signed by a key the Agent does not
 * pin, and when its signed sequence is below the highest sequence the node has installed.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  type ReleaseKeyPair,
  sha256Hex,
  signEnvelope,
} from "../../control/shared/release/index.js";
import {
  type Operation,
  OperationPhase,
  OperationSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { agentStatus, eventually } from "./agent-fixture.js";
import { FORGED_PLATFORM } from "./hostile-forge.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

describe("a hostile Control cannot give a real Agent a supervisor", () => {
  let world: HostileWorld;
  let count = 0;

  beforeAll(async () => {
    world = await startHostileWorld({
      join: "hostile-sup-join",
      nodeId: "victim-sup",
      prefix: "hostile-sup-",
      versions: ["1.0.0", "1.1.0"],
      keys: 1,
    });
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  /** An upgrade to a release whose manifest carries its supervisor, signed by `signers`, listed and served. */
  async function supervisorRelease(
    version: string,
    sequence: number,
    signers: readonly ReleaseKeyPair[],
  ): Promise<Operation> {
    const bytes = world.built.get("1.1.0") ?? new Uint8Array();
    const path = `/supervisor/${version}/${++count}`;
    world.artifacts.routes.set(path, { kind: "bytes", body: bytes });
    const url = `${world.artifacts.base}${path}`;
    const sha256 = sha256Hex(bytes);
    const manifest = buildManifest({
      version,
      sequence,
      expires: new Date(Date.now() + 3_600_000),
      artifacts: { [FORGED_PLATFORM]: { url, sha256, size: bytes.byteLength } },
      supervisor: true,
    });
    let envelope = createEnvelope(manifest);
    for (const key of signers) envelope = await signEnvelope(envelope, key.privateKey);
    await world.repo.publishTargets(
      [{ version, sequence, platform: FORGED_PLATFORM, length: bytes.byteLength, sha256 }],
      world.repo.keys.targets,
    );
    return create(OperationSchema, {
      id: `sup-op-${count}`,
      kind: {
        case: "agentUpgrade",
        value: {
          version,
          sequence: BigInt(sequence),
          artifact: { platform: FORGED_PLATFORM, url, sha256, size: BigInt(bytes.byteLength) },
          envelope: {
            payloadType: envelope.payloadType,
            payload: envelope.payload,
            signatures: envelope.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig })),
          },
        },
      },
    });
  }

  const final = [OperationPhase.REFUSED, OperationPhase.FAILED, OperationPhase.RESTARTING];

  /** Nothing of a supervisor is in the install directory, and status says none. */
  async function noSupervisor(): Promise<void> {
    for (const name of ["supervisors", "supervisor", "supervisor.json"]) {
      expect(existsSync(join(world.install, name)), name).toBe(false);
    }
    const status = (await agentStatus(world.artifact, world.install)) as unknown as {
      supervisor: unknown;
    };
    expect(status.supervisor).toMatchObject({ inUse: null, trial: null, installed: [] });
  }

  it("refuses a supervisor release signed by a key it does not pin", async () => {
    const op = await supervisorRelease("1.5.0", 50, [await generateKeyPair()]);
    const report = await world.answer(op, final, 20_000);
    expect({ phase: OperationPhase[report.phase], code: report.code }).toEqual({
      phase: "REFUSED",
      code: "untrusted_release",
    });
    await noSupervisor();
  });

  it("refuses a supervisor release below the highest sequence it has installed", async () => {
    const good = await world.forger.upgrade({
      version: "1.1.0",
      sequence: 11,
      bytes: world.built.get("1.1.0") ?? new Uint8Array(),
    });
    const streams = world.control.streams.length;
    expect(OperationPhase[(await world.answer(good, final, 20_000)).phase]).toBe("RESTARTING");
    await eventually(
      async () =>
        world.control.streams.length > streams &&
        world.control.live()?.hello?.agentVersion === "1.1.0"
          ? true
          : undefined,
      "1.1.0 connected",
    );
    const op = await supervisorRelease("1.0.5", 5, world.keys);
    const report = await world.answer(op, final, 20_000);
    expect({ phase: OperationPhase[report.phase], code: report.code }).toEqual({
      phase: "REFUSED",
      code: "sequence_rollback",
    });
    await noSupervisor();
  });
});
