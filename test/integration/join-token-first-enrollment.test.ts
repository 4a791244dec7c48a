/**
 * A fleet's first enrollment on one join token is fast with the default limits: 300 simulated
 * agents with the default reconnect backoff, all presenting the same join token at once, are
 * welcomed with few refusals "this credential already has N handshakes in progress": the
 * per-credential handshake bound must not pace a fleet's provisioning (303 real Agents took
 * about 75 s with a join token held to 4 handshakes, each refused one backing off), while one
 * join token still holds a bounded share of the handshakes (credential-slots.ts). Prints the
 * time to welcome all and the refusals, for docs/BENCHMARKS.md.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

/** 300 by default; `FLEET=1000` for a longer measurement. */
const COUNT = Number(process.env.FLEET ?? 300);

describe("first enrollment of a fleet on one join token", { timeout: 180_000 }, () => {
  let tc: TestControl;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
  });

  it(`welcomes ${COUNT} agents without pacing them per credential, with the default limits`, async () => {
    const metrics = async () => (await fetch(`${tc.adminUrl}/metrics`)).text();
    const started = Date.now();
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: COUNT,
      seed: 11,
    });
    const marks: string[] = [`started in ${((Date.now() - started) / 1000).toFixed(1)} s`];
    let next = 0.5;
    await fleet.waitUntil(
      (f) => {
        const share = f.welcomedCount() / COUNT;
        if (share >= next) {
          marks.push(`${share * 100}% at ${((Date.now() - started) / 1000).toFixed(1)} s`);
          next = share >= 0.9 ? 1 : 0.9;
        }
        return f.welcomedCount() === COUNT;
      },
      150_000,
      "all agents welcomed",
    );
    console.log(marks.join(", "));
    const seconds = (Date.now() - started) / 1000;
    const counts = (await metrics())
      .split("\n")
      .filter(
        (l) => /^agent_control_(streams_refused|handshakes)_total\{/.test(l) && !/ 0$/.test(l),
      )
      .join(", ");
    console.log(`${COUNT} agents on one join token welcomed in ${seconds.toFixed(1)} s; ${counts}`);
    // Refused 31 to 56 times in four runs with a join token held to 4 handshakes, 5 with 32.
    // The time is printed, never asserted: the refusals are what the bound changes.
    expect(perCredentialRefusals(counts)).toBeLessThan(20);
  });
});

function perCredentialRefusals(counts: string): number {
  const found = /reason="max_handshakes_per_credential"\} (\d+)/.exec(counts);
  return Number(found?.[1] ?? 0);
}
