/**
 * Attack (a freeze hidden by the server's own bytes): the metadata of a real Agent process
 * expires, and the hostile server then answers timestamp.json with metadata that carries
 * U+0000 and terminal escape sequences, which tuf-js quotes in its refusal. Control ends any
 * stream whose message holds U+0000, so an Agent that sent that refusal as its reason would
 * lose its stream after every Welcome, and its freeze would never be recorded.
 *
 * Expected: the real Agent (`--tuf-refresh 2s`) is frozen, says so once on its stream with a
 * reason free of U+0000, and keeps that stream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestTufRepo } from "../helpers/tuf-repo.js";
import { agentStatus, eventually } from "./agent-fixture.js";
import type { HostileControl } from "./hostile-control.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

const JOIN = "freeze-quoted-join";

describe("a freeze whose refusal quotes the server's bytes", () => {
  let world: HostileWorld | undefined;
  let install = "";
  let artifact = "";
  let control: HostileControl;
  let repo: TestTufRepo;

  beforeAll(async () => {
    // The Agent trusts the repository's first timestamp, current for an hour.
    world = await startHostileWorld({
      join: JOIN,
      nodeId: "frozen-quoted-1",
      prefix: "attack-freeze-quoted-",
      versions: ["1.0.0"],
      keys: 1,
      agentFlags: ["--tuf-refresh", "2s"],
    });
    ({ install, artifact, control, repo } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  it("reports the freeze without U+0000 and keeps its stream", async () => {
    const status = async () =>
      (await agentStatus(artifact, install)) as unknown as { trust: { frozen: boolean } | null };
    await eventually(
      async () => ((await status()).trust?.frozen === false ? true : undefined),
      "a first refresh that finds the metadata current",
    );
    // A timestamp that expires soon, trusted by the next refresh (tuf-js refuses a served
    // expired one, so the Agent keeps the current one and expires with it). Its 8 s leave the
    // junk below time to take its place before it expires, however slow the status polls are
    // (served again once expired, it would be refused as expired, quoting nothing)…
    await repo.publishTimestamp(new Date(Date.now() + 8000));
    const trustedAt = (await agentStatus(artifact, install)) as unknown as {
      trust: { checkedAt: string };
    };
    await eventually(async () => {
      const now = (await agentStatus(artifact, install)) as unknown as {
        trust: { checkedAt: string };
      };
      return now.trust.checkedAt !== trustedAt.trust.checkedAt ? true : undefined;
    }, "a refresh that trusts the short timestamp");
    // …then, in its place, metadata whose refusal quotes U+0000 and an escape sequence.
    repo.files.set(
      "timestamp.json",
      Buffer.from('{"signed":{"_type":"\\u0000\\u001b[2J"},"signatures":[]}'),
    );
    const streams = control.streams.length;
    const frozen = await eventually(
      async () => control.trust.find((t) => t.frozen),
      "a TrustStatus saying frozen",
      25_000,
    );
    expect(frozen.reason).toMatch(/no newer one could be fetched/);
    expect(frozen.reason.includes("\u0000")).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(control.streams.length).toBe(streams);
    expect(control.trust.filter((t) => t.frozen)).toHaveLength(1);
  }, 60_000);
});
