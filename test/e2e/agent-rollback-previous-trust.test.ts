/**
 * What a real Agent accepts for an AgentRollback, whoever sends it: the release it recorded as
 * its previous one, always — also once that release's signature expired and the channel's TUF
 * metadata no longer lists it, as is the case as soon as a newer release is published, the very
 * moment an operator needs the way back. Nothing else: a rollback naming any other release it
 * once ran is refused, and its floors (confirmed and installed sequence) do not move, so a
 * hostile Control cannot walk a node down release by release (docs/decisions.md, "An Agent's
 * rollback goes to its recorded previous release, whatever its trust now").
 */
import { readlink } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  OperationPhase,
  OperationSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { agentStatus, eventually } from "./agent-fixture.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

const FINAL = [
  OperationPhase.REFUSED,
  OperationPhase.FAILED,
  OperationPhase.RESTARTING,
  OperationPhase.CONFIRMED,
  OperationPhase.REINSTATED,
];

describe("an Agent's rollback", { timeout: 300_000 }, () => {
  let world: HostileWorld;
  beforeAll(async () => {
    world = await startHostileWorld({
      join: "rollback-trust-join",
      nodeId: "rollback-trust",
      prefix: "agent-rollback-trust-",
      versions: ["1.0.0", "1.1.0", "1.2.0"],
      keys: 1,
    });
  }, 180_000);
  afterAll(async () => {
    await world?.stop();
  });

  const status = async () =>
    (await agentStatus(join(world.dir, "agent-1.0.0.mjs"), world.install)) as unknown as Record<
      string,
      unknown
    >;
  const connected = (version: string) =>
    eventually(
      async () => (world.control.live()?.hello?.agentVersion === version ? true : undefined),
      `${version} connected`,
      60_000,
    );
  const rollbackTo = (id: string, version: string) =>
    create(OperationSchema, { id, kind: { case: "agentRollback", value: { version } } });

  it("goes to its recorded previous release once that expired and is no longer listed, and nowhere else", async () => {
    const { forger } = world;
    const expires = new Date(Date.now() + 45_000);
    const up11 = await forger.upgrade({
      version: "1.1.0",
      sequence: 11,
      bytes: world.built.get("1.1.0") as Uint8Array,
      expires,
    });
    expect((await world.answer(up11, FINAL, 30_000)).phase).toBe(OperationPhase.RESTARTING);
    await connected("1.1.0");
    const confirmed = await world.answer(forger.confirm("1.1.0", 11n), FINAL, 30_000);
    expect(confirmed.phase).toBe(OperationPhase.CONFIRMED);
    // Publishing 1.2.0 lists only 1.2.0 in the channel's targets: 1.1.0 is delisted.
    const up12 = await forger.upgrade({
      version: "1.2.0",
      sequence: 12,
      bytes: world.built.get("1.2.0") as Uint8Array,
    });
    expect((await world.answer(up12, FINAL, 30_000)).phase).toBe(OperationPhase.RESTARTING);
    await connected("1.2.0");
    const wait = expires.getTime() - Date.now() + 2000;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));

    // As an upgrade, 1.1.0 is refused now: expired.
    const replay = create(OperationSchema, { id: "op-replay-11", kind: up11.kind });
    const replayed = await world.answer(replay, FINAL, 30_000);
    expect(replayed.phase).toBe(OperationPhase.REFUSED);

    // A rollback naming a release it ran before, but not its previous one, is refused.
    const further = await world.answer(rollbackTo("op-rb-100", "1.0.0"), FINAL, 30_000);
    expect(further).toMatchObject({ phase: OperationPhase.FAILED, code: "no_previous_version" });

    // Its way back, the recorded previous release, is taken.
    const back = await world.answer(rollbackTo("op-rb-110", "1.1.0"), FINAL, 30_000);
    expect(back.phase).toBe(OperationPhase.RESTARTING);
    await connected("1.1.0");
    expect(await readlink(join(world.install, "current"))).toMatch(/1\.1\.0$/);
    expect(await status()).toMatchObject({
      current: "1.1.0",
      previous: "1.2.0",
      confirmedSequence: "11",
      installedSequence: "12",
    });

    // And from there it cannot be walked further down: 1.0.0 is still not its previous.
    const again = await world.answer(rollbackTo("op-rb-100b", "1.0.0"), FINAL, 30_000);
    expect(again).toMatchObject({ phase: OperationPhase.FAILED, code: "no_previous_version" });
  });
});
