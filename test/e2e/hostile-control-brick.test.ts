/**
 * A hostile Control trying to brick a real Agent for good with releases that are already
 * signed: the node goes 1.0.0 → 1.1.0 (unconfirmed), then is offered a signed "upgrade" back
 * to 1.0.0 (whose unwelcomed process the supervisor used to revert, deleting versions/1.0.0
 * while `previous` still named it), then an AgentRollback (which pointed `current` at the
 * deleted directory: the supervisor looped for ever).
 *
 * Expected: the "upgrade" back is refused (`sequence_rollback`: below the highest sequence the
 * node installed), going back is the AgentRollback to the recorded previous release, and a
 * rollback to a version that is not installed is refused (`previous_version_missing`) and never
 * applied: the node keeps running and talking to Control.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  OperationPhase,
  OperationSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { agentStatus, eventually } from "./agent-fixture.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

const { FAILED, REFUSED, RESTARTING, REINSTATED } = OperationPhase;

describe("a hostile Control cannot brick a real Agent with releases already signed", () => {
  let world: HostileWorld;

  beforeAll(async () => {
    world = await startHostileWorld({
      join: "brick-join",
      nodeId: "brick-1",
      prefix: "hostile-brick-",
      versions: ["1.0.0", "1.1.0"],
      keys: 1,
      agentFlags: ["--start-deadline-ms", "5000"],
    });
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  const status = () => agentStatus(join(world.dir, "agent-1.0.0.mjs"), world.install);
  const rollback = (id: string, version: string) =>
    create(OperationSchema, {
      id,
      kind: { case: "agentRollback", value: { version, reason: "hostile" } },
    });
  const connectedOn = (version: string, streams: number) =>
    eventually(
      async () =>
        world.control.streams.length > streams &&
        world.control.live()?.hello?.agentVersion === version
          ? true
          : undefined,
      `${version} connected`,
      60_000,
    );

  it("refuses the signed way back as an upgrade, reinstates by rollback, and refuses a rollback to a missing version", async () => {
    const { control, forger } = world;
    // 1.0.0 → 1.1.0, genuine, never confirmed.
    let streams = control.streams.length;
    const up = await forger.upgrade({
      version: "1.1.0",
      sequence: 11,
      bytes: world.built.get("1.1.0") ?? new Uint8Array(),
    });
    expect(OperationPhase[(await world.answer(up, [RESTARTING, FAILED], 30_000)).phase]).toBe(
      "RESTARTING",
    );
    await connectedOn("1.1.0", streams);
    expect(await status()).toMatchObject({
      current: "1.1.0",
      previous: "1.0.0",
      installedSequence: "11",
    });

    // The signed 1.0.0, offered as an upgrade: refused before anything is fetched.
    const back = await forger.upgrade({
      version: "1.0.0",
      sequence: 10,
      bytes: world.built.get("1.0.0") ?? new Uint8Array(),
    });
    const refused = await world.answer(back, [REFUSED, FAILED, RESTARTING], 30_000);
    expect({ phase: OperationPhase[refused.phase], code: refused.code }).toEqual({
      phase: "REFUSED",
      code: "sequence_rollback",
    });
    expect(await status()).toMatchObject({ current: "1.1.0", previous: "1.0.0" });

    // Going back is the rollback to the recorded previous release.
    streams = control.streams.length;
    const reinstated = await world.answer(rollback("rb-1", "1.0.0"), [REINSTATED, FAILED], 60_000);
    expect(OperationPhase[reinstated.phase]).toBe("REINSTATED");
    await connectedOn("1.0.0", streams);
    expect(await status()).toMatchObject({
      current: "1.0.0",
      previous: "1.1.0",
      installed: ["1.0.0", "1.1.0"],
    });

    // Its previous release gone from disk (by whatever means): a rollback to it is refused.
    await rm(join(world.install, "versions", "1.1.0"), { recursive: true, force: true });
    const missing = await world.answer(rollback("rb-2", "1.1.0"), [REINSTATED, FAILED], 30_000);
    expect({ phase: OperationPhase[missing.phase], code: missing.code }).toEqual({
      phase: "FAILED",
      code: "previous_version_missing",
    });
    const after = await status();
    expect(after).toMatchObject({ current: "1.0.0", pending: null, installed: ["1.0.0"] });
    // Still running and talking to Control: a redelivery is answered on the same stream.
    const live = control.live();
    expect(live?.hello?.agentVersion).toBe("1.0.0");
    expect(live?.ended).toBe(false);
  }, 180_000);
});
