/**
 * Attack (TUF's indefinite freeze, without ever offering an upgrade): a compromised Control
 * offers the node nothing and serves a timestamp that has expired. An Agent that refreshed
 * its metadata only when offered an upgrade would never learn that it is frozen, and neither
 * would its operator.
 *
 * Expected: the real Agent process (supervisor and Agent, `--tuf-refresh 2s`) refreshes on
 * its own, reports `trust.frozen` to Control (TrustStatus, with the reason and since when)
 * and in `agent status` within the refresh period, logs it once however many refreshes stay
 * frozen, says it again on its next stream, keeps running its version, and clears the
 * freeze at the first honest refresh.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestTufRepo } from "../helpers/tuf-repo.js";
import { agentStatus, eventually, type RunningAgent } from "./agent-fixture.js";
import type { HostileControl } from "./hostile-control.js";
import { type HostileWorld, startHostileWorld } from "./hostile-world.js";

const JOIN = "freeze-no-offer-join";
const REFRESH_MS = 2000;
/** Slack for a loaded machine: a refresh is a few loopback requests and a state write. */
const SLACK_MS = 3000;

interface TrustJson {
  trust: { frozen: boolean; since?: string; code?: string; checkedAt: string } | null;
  current: string | null;
}

describe("a freeze without any offer", () => {
  let world: HostileWorld | undefined;
  let install = "";
  let artifact = "";
  let control: HostileControl;
  let repo: TestTufRepo;
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    world = await startHostileWorld({
      join: JOIN,
      nodeId: "frozen-quietly-1",
      prefix: "attack-freeze-no-offer-",
      versions: ["1.0.0"],
      keys: 1,
      agentFlags: ["--tuf-refresh", "2s"],
    });
    ({ install, artifact, control, repo, agent } = world);
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  const status = async () => (await agentStatus(artifact, install)) as unknown as TrustJson;

  it("is reported frozen within the refresh period, logged once, and cleared by an honest refresh", async () => {
    // The Agent offers trust.v1 and trusts current metadata: nothing to report yet.
    expect(control.live()?.hello?.capabilities).toContain("trust.v1");
    await eventually(
      async () => ((await status()).trust?.frozen === false ? true : undefined),
      "a first refresh that finds the metadata current",
    );
    expect(control.trust.filter((t) => t.frozen)).toEqual([]);

    // The hostile Control now serves a timestamp that has already expired, and offers nothing.
    await repo.publishTimestamp(new Date(Date.now() - 60_000));
    const servedAt = Date.now();
    const frozen = await eventually(
      async () => control.trust.find((t) => t.frozen),
      "a TrustStatus saying frozen",
      REFRESH_MS + SLACK_MS,
    );
    expect(frozen.reason).toMatch(/expired \(a freeze\)/);
    expect(frozen.since).toBeDefined();
    const since = timestampDate(frozen.since!).getTime();
    expect(since).toBeGreaterThanOrEqual(servedAt - 1000);
    expect(since).toBeLessThanOrEqual(servedAt + REFRESH_MS + SLACK_MS);
    const local = await status();
    expect({
      frozen: local.trust?.frozen,
      code: local.trust?.code,
      since: local.trust?.since,
    }).toEqual({ frozen: true, code: "metadata_expired", since: new Date(since).toISOString() });

    // Several more refreshes stay frozen: one log line and one TrustStatus, the since kept.
    const checked = local.trust!.checkedAt;
    await eventually(
      async () => {
        const later = await status();
        return later.trust?.checkedAt !== checked ? later : undefined;
      },
      "another frozen refresh",
      2 * (REFRESH_MS + SLACK_MS),
    );
    const stillFrozen = await status();
    expect({ frozen: stillFrozen.trust?.frozen, since: stillFrozen.trust?.since }).toEqual({
      frozen: true,
      since: local.trust?.since,
    });
    expect(control.trust.filter((t) => t.frozen)).toHaveLength(1);
    const frozenLogs = agent!
      .logs()
      .split("\n")
      .filter((line) => line.includes("TUF metadata frozen"));
    expect(frozenLogs).toHaveLength(1);

    // On a new stream (a Control restart, another Control) the freeze is said again at once.
    const streams = control.streams.length;
    control.dropLive();
    await eventually(
      async () => (control.streams.length > streams && control.live() ? true : undefined),
      "the Agent's next stream",
    );
    await eventually(
      async () => (control.trust.filter((t) => t.frozen).length === 2 ? true : undefined),
      "the freeze said again after the new Welcome",
      REFRESH_MS + SLACK_MS,
    );
    expect(control.trust.filter((t) => t.frozen).map((t) => t.since)).toEqual([
      frozen.since,
      frozen.since,
    ]);

    // A frozen node keeps running its version; no operation was ever offered.
    expect({ current: stillFrozen.current, sent: control.sent }).toEqual({
      current: "1.0.0",
      sent: 0,
    });

    // Honest metadata again: the next refresh clears the freeze, on the stream and locally.
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const afterFrozen = control.trust.indexOf(frozen) + 1;
    const cleared = await eventually(
      async () => control.trust.slice(afterFrozen).find((t) => !t.frozen),
      "a TrustStatus saying not frozen",
      REFRESH_MS + SLACK_MS,
    );
    expect({ reason: cleared.reason, since: cleared.since }).toEqual({
      reason: "",
      since: undefined,
    });
    const after = await status();
    expect({ frozen: after.trust?.frozen, since: after.trust?.since }).toEqual({
      frozen: false,
      since: undefined,
    });
    expect(
      agent!
        .logs()
        .split("\n")
        .filter((line) => line.includes("no longer frozen")),
    ).toHaveLength(1);
  });
});
