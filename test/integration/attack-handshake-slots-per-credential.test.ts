/**
 * Attack (one leaked join token locks every node out): the issue asks for "few concurrent
 * handshakes per credential", but a handshake slot is taken per stream, whatever credential
 * it carries. The holder of a single join token opens as many streams as there are slots
 * and never says Hello; until the Hello timeout every slot is held, and an honest node
 * reconnecting with its own node token is refused RESOURCE_EXHAUSTED. Repeating it at the
 * timeout's pace keeps the whole fleet out with one credential and a few dozen sockets.
 *
 * Expected refusal: one credential holds at most a few handshakes at once (the excess of that
 * credential is refused), so an honest node with another credential is still welcomed.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, hello, openRawStream, type RawStream } from "../helpers/raw-agent.js";

const SLOTS = 8;

describe("handshake slots held by one leaked join token", { timeout: 120_000 }, () => {
  let tc: TestControl;
  const silent: RawStream[] = [];
  beforeAll(async () => {
    tc = await startTestControl({ config: { limits: { maxConcurrentHandshakes: SLOTS } } });
  });
  afterAll(async () => {
    for (const s of silent) s.close();
    await tc?.stop();
  });

  it("do not keep an honest node with its own node token out", async () => {
    const honest = await connectAgent(tc.agentAddress, await tc.joinToken(), "honest-1");
    const token = honest.welcome.body.case === "welcome" ? honest.welcome.body.value.nodeToken : "";
    expect(token).toMatch(/^ant\./);
    honest.stream.close();

    const leaked = await tc.joinToken();
    for (let i = 0; i < SLOTS; i++) {
      silent.push(
        openRawStream(tc.agentAddress, leaked, {
          channelOptions: { "grpc.use_local_subchannel_pool": 1 },
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 1000));

    // Its own connection, as a separate host has.
    const back = openRawStream(tc.agentAddress, token, {
      channelOptions: { "grpc.use_local_subchannel_pool": 1 },
    });
    back.send(hello("honest-1"));
    const first = await back.next(10_000).then(
      (m) => m.body.case,
      (e: Error) => e.message,
    );
    back.close();
    // Refused now: "stream ended: 8 too many agents are connecting at once …".
    expect(first).toBe("welcome");
    expect(first).not.toMatch(new RegExp(`^stream ended: ${status.RESOURCE_EXHAUSTED} `));
  });
});
