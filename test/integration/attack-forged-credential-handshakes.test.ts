/**
 * Attack (forged credential ids take handshake slots): a node token reads
 * `ant.<base64url node id>.<secret>`, and Control counted a handshake against the admission of
 * all handshakes and against the credential's own slots (`limits.handshakesPerCredential`)
 * before it checked the secret. So a client with no secret at all, sending a stream of
 * `ant.<victim id>.wrong` handshakes, kept the victim's own handshakes refused "this credential
 * already has 4 handshakes in progress"; with random ids it kept the fleet refused "too many
 * agents are connecting at once".
 *
 * Expected: a credential that does not verify costs its sender only; the genuine node is
 * welcomed every time while the flood runs.
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const CONNECTIONS = 4;
const STREAMS_PER_CONNECTION = 8;

/** Keeps `forged()` handshakes running on a few connections until `stop()`. */
function flood(address: string, forged: () => string) {
  const clients = Array.from(
    { length: CONNECTIONS },
    () =>
      new grpc.Client(address, grpc.credentials.createInsecure(), {
        "grpc.use_local_subchannel_pool": 1,
      }),
  );
  let stopped = false;
  let sent = 0;
  const loop = async (client: grpc.Client) => {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${forged()}`);
        const call = client.makeBidiStreamRequest(
          "/agentcontrol.v1.AgentControlService/Connect",
          (b: Buffer) => b,
          (b: Buffer) => b,
          metadata,
        );
        sent += 1;
        call.on("error", () => undefined);
        call.on("data", () => undefined);
        call.on("status", () => resolve());
      });
    }
  };
  const loops = clients.flatMap((c) =>
    Array.from({ length: STREAMS_PER_CONNECTION }, () => loop(c)),
  );
  return {
    sent: () => sent,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      for (const c of clients) c.close();
    },
  };
}

describe("forged credential ids", { timeout: 120_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    // A small admission (its minimum is this too), as a busy Control's is while it measures.
    tc = await startTestControl({ config: { limits: { maxConcurrentHandshakes: 8 } } });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  /** How `tries` handshakes of `nodeId` with `token` ended, one after the other. */
  async function handshakes(token: string, nodeId: string, tries: number): Promise<string[]> {
    const outcomes: string[] = [];
    for (let i = 0; i < tries; i++) {
      try {
        const { stream, welcome } = await connectAgent(tc.agentAddress, token, nodeId, {}, {});
        outcomes.push(welcome.body.case ?? "none");
        stream.close();
        await stream.ended;
      } catch (error) {
        outcomes.push(String((error as Error).message));
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return outcomes;
  }

  async function enrolled(nodeId: string): Promise<string> {
    const first = await connectAgent(tc.agentAddress, await tc.joinToken(), nodeId);
    first.stream.close();
    await first.stream.ended;
    return first.welcome.body.case === "welcome" ? first.welcome.body.value.nodeToken : "";
  }

  it("naming the victim do not take its handshake slots", async () => {
    const nodeToken = await enrolled("victim-1");
    const forged = `${nodeToken.split(".").slice(0, 2).join(".")}.not-the-secret-${"x".repeat(20)}`;
    const attack = flood(tc.agentAddress, () => forged);
    await new Promise((r) => setTimeout(r, 500));
    const during = await handshakes(nodeToken, "victim-1", 12);
    await attack.stop();
    expect(attack.sent()).toBeGreaterThan(100);
    // Refused before: "stream ended: 8 this credential already has 4 handshakes in progress".
    expect(during).toEqual(during.map(() => "welcome"));
  });

  it("at random do not take the admission of every handshake", async () => {
    const nodeToken = await enrolled("victim-2");
    const attack = flood(tc.agentAddress, () => {
      const id = Buffer.from(`n${Math.random().toString(36).slice(2)}`).toString("base64url");
      return `ant.${id}.wrong-secret-${"y".repeat(20)}`;
    });
    await new Promise((r) => setTimeout(r, 500));
    const during = await handshakes(nodeToken, "victim-2", 12);
    await attack.stop();
    expect(attack.sent()).toBeGreaterThan(100);
    // Refused before: "stream ended: 8 too many agents are connecting at once".
    expect(during).toEqual(during.map(() => "welcome"));
  });
});
