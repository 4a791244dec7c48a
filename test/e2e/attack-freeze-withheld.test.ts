import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Operation,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { TestTufRepo } from "../helpers/tuf-repo.js";
import { agentStatus } from "./agent-fixture.js";
import type { Forger } from "./hostile-forge.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

const JOIN = "freeze-join";

describe("a freeze by withholding the timestamp", () => {
  let world: HostileWorld;
  let install = "";
  let artifact = "";
  let repo: TestTufRepo;
  let forger: Forger;

  beforeAll(async () => {
    world = await startHostileWorld({
      join: JOIN,
      nodeId: "frozen-1",
      prefix: "attack-freeze-",
      versions: ["1.0.0"],
      keys: 1,
    });
    ({ install, artifact, repo, forger } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  async function answer(op: Operation) {
    const final = [OperationPhase.REFUSED, OperationPhase.FAILED, OperationPhase.RESTARTING];
    return await world.answer(op, final, 40_000);
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
