/**
 * Handshakes are limited per credential (`limits.handshakesPerCredential`) beside the limit on
 * all of them: a storm of silent streams from one join token holds that credential's few
 * slots, the rest of the storm is refused RESOURCE_EXHAUSTED before its Hello is looked at, and a
 * node token's handshake still finds a slot while the storm holds its own.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually, openRawStream, type RawStream } from "../helpers/raw-agent.js";

const PER_CREDENTIAL = 2;
/** All handshakes at once: a storm without the per-credential limit fills every one. */
const ALL = 4;
const STORM = 6;

describe("handshakes per credential", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: {
        limits: { handshakesPerCredential: PER_CREDENTIAL, maxConcurrentHandshakes: ALL },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const metrics = async () => (await fetch(`${tc.adminUrl}/metrics`)).text();
  const sample = (text: string, series: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return Number(line?.slice(series.length + 1) ?? Number.NaN);
  };

  it("a storm of silent streams from one join token cannot starve a node token's handshake", async () => {
    const join = await tc.joinToken();
    const enrolled = await connectAgent(tc.agentAddress, join, "per-credential-node-1");
    const welcome = enrolled.welcome.body;
    const nodeToken = welcome.case === "welcome" ? welcome.value.nodeToken : "";
    expect(nodeToken).not.toBe("");
    enrolled.stream.close();
    await enrolled.stream.ended;

    // Streams that connect with the join token and never say Hello.
    const storm: RawStream[] = Array.from({ length: STORM }, () =>
      openRawStream(tc.agentAddress, join),
    );
    const refusedSeries =
      'agent_control_streams_refused_total{reason="max_handshakes_per_credential"}';
    await eventually(
      async () => sample(await metrics(), refusedSeries) === STORM - PER_CREDENTIAL,
      5000,
      "the storm's excess refused",
    );
    const text = await metrics();
    expect(sample(text, "agent_control_handshakes_in_flight")).toBe(PER_CREDENTIAL);
    expect(sample(text, 'agent_control_streams_refused_total{reason="max_handshakes"}')).toBe(0);

    // Ended at once, each saying which limit refused it.
    const ends = await Promise.all(
      storm.map((s) =>
        Promise.race([
          s.ended,
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000)),
        ]),
      ),
    );
    const refused = ends.filter((e) => e !== undefined);
    expect(refused).toHaveLength(STORM - PER_CREDENTIAL);
    for (const end of refused) {
      expect(end?.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(end?.details).toMatch(/limits\.handshakesPerCredential/);
    }

    // While the storm still holds its slots (the Hello timeout is 10 s), the node's own
    // credential is welcomed.
    const back = await connectAgent(tc.agentAddress, nodeToken, "per-credential-node-1");
    expect(back.welcome.body.case).toBe("welcome");
    expect(sample(await metrics(), "agent_control_handshakes_in_flight")).toBe(PER_CREDENTIAL);
    back.stream.close();
    expect((await back.stream.ended).code).toBe(status.OK);
    for (const s of storm) s.close();
    await eventually(
      async () => sample(await metrics(), "agent_control_handshakes_in_flight") === 0,
      15_000,
      "no handshake left",
    );
  });
});
