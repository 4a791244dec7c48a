import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAgentArgs } from "../../../agent/cli-args.js";
import {
  DEFAULT_TUF_REFRESH_MS,
  nextRefreshDelayMs,
  runTrustRefresh,
} from "../../../agent/core/trust-refresh.js";
import {
  nextTrustState,
  type TrustState,
  type TrustVerdict,
} from "../../../agent/core/trust-state.js";
import { type TufVerdict, tufClient } from "../../../agent/core/tuf-check.js";
import { makeKeys } from "../../helpers/releases.js";
import { TestTufRepo } from "../../helpers/tuf-repo.js";

const T0 = new Date("2026-12-01T10:00:00.000Z");
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const EXPIRED: TufVerdict = { ok: false, code: "metadata_expired", message: "ts expired" };
const UNAVAILABLE: TufVerdict = { ok: false, code: "metadata_unavailable", message: "down" };
const OK: TufVerdict = { ok: true };

describe("the trust state after a TUF refresh", () => {
  it("becomes frozen since now on the first metadata_expired, and says it changed", () => {
    expect(nextTrustState(undefined, EXPIRED, T0)).toEqual({
      state: {
        frozen: true,
        checkedAt: T0.toISOString(),
        since: T0.toISOString(),
        code: "metadata_expired",
        message: "ts expired",
      },
      changed: true,
    });
  });

  it("keeps the first frozen time while it stays frozen, and does not count that as a change", () => {
    const first = nextTrustState(undefined, EXPIRED, T0).state;
    const later = nextTrustState(first, EXPIRED, at(60));
    expect(later).toEqual({
      state: { ...first, checkedAt: at(60).toISOString(), since: T0.toISOString() },
      changed: false,
    });
  });

  it("clears frozen and since on a successful refresh, as a change", () => {
    const frozen = nextTrustState(undefined, EXPIRED, T0).state;
    expect(nextTrustState(frozen, OK, at(5))).toEqual({
      state: { frozen: false, checkedAt: at(5).toISOString() },
      changed: true,
    });
  });

  it.each<[string, TrustState | undefined, TrustVerdict]>([
    ["a first success", undefined, OK],
    ["unreachable metadata that has not expired", undefined, UNAVAILABLE],
    [
      "a release not listed",
      { frozen: false, checkedAt: T0.toISOString() },
      {
        ok: false,
        code: "untrusted_release",
        message: "not listed",
      },
    ],
  ])("is not frozen, and no change, after %s", (_what, previous, verdict) => {
    const { state, changed } = nextTrustState(previous, verdict, at(1));
    expect({ frozen: state.frozen, since: state.since, changed }).toEqual({
      frozen: false,
      since: undefined,
      changed: false,
    });
  });
});

describe("the periodic TUF refresh", () => {
  it("waits 80 to 100 percent of the period, never longer", () => {
    expect(nextRefreshDelayMs(60_000, 0)).toBe(48_000);
    expect(nextRefreshDelayMs(60_000, 0.5)).toBe(54_000);
    expect(nextRefreshDelayMs(60_000, 0.999999)).toBe(60_000);
    expect(nextRefreshDelayMs(60_000, 7)).toBe(60_000);
    expect(nextRefreshDelayMs(1, 0)).toBe(1);
    expect(DEFAULT_TUF_REFRESH_MS).toBe(3_600_000);
  });

  it("refreshes at once, then after each drawn wait, tells each change once and persists every outcome", async () => {
    const verdicts: TufVerdict[] = [OK, EXPIRED, EXPIRED, OK, OK];
    const stop = new AbortController();
    let nowMs = T0.getTime();
    const waits: number[] = [];
    const refreshedAt: number[] = [];
    const changes: TrustState[] = [];
    const holder: { state: { trust?: TrustState }; trustChanged(s: TrustState): void } = {
      state: {},
      trustChanged: (s) => changes.push(s),
    };
    let persisted = 0;
    await runTrustRefresh({
      tuf: {
        refresh: async () => {
          refreshedAt.push(nowMs);
          const verdict = verdicts.shift();
          if (verdicts.length === 0) stop.abort();
          return verdict ?? OK;
        },
      },
      holder,
      intervalMs: 10_000,
      persist: async () => {
        persisted++;
      },
      now: () => new Date(nowMs),
      sleep: async (ms) => {
        waits.push(ms);
        nowMs += ms;
      },
      random: () => 0.5,
      signal: stop.signal,
    });
    expect(waits).toEqual([9_000, 9_000, 9_000, 9_000]);
    expect(refreshedAt.map((ms) => ms - T0.getTime())).toEqual([0, 9_000, 18_000, 27_000, 36_000]);
    // The last refresh ran after the stop: nothing is recorded for it.
    expect(persisted).toBe(4);
    expect(changes).toEqual([
      {
        frozen: true,
        checkedAt: new Date(T0.getTime() + 9_000).toISOString(),
        since: new Date(T0.getTime() + 9_000).toISOString(),
        code: "metadata_expired",
        message: "ts expired",
      },
      { frozen: false, checkedAt: new Date(T0.getTime() + 27_000).toISOString() },
    ]);
    expect(holder.state.trust).toEqual(changes[1]);
  });

  it("stops without refreshing once the signal is aborted", async () => {
    const stop = new AbortController();
    stop.abort();
    let refreshes = 0;
    await runTrustRefresh({
      tuf: {
        refresh: async () => {
          refreshes++;
          return OK;
        },
      },
      holder: { state: {} },
      intervalMs: 1000,
      persist: async () => {},
      now: () => T0,
      sleep: async () => {},
      signal: stop.signal,
    });
    expect(refreshes).toBe(0);
  });

  it("refuses a period that is not a positive integer of ms", async () => {
    await expect(
      runTrustRefresh({
        tuf: { refresh: async () => OK },
        holder: { state: {} },
        intervalMs: 0,
        persist: async () => {},
        now: () => T0,
        sleep: async () => {},
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow(/positive integer/);
  });
});

describe("the TUF client's refresh", () => {
  let repo: TestTufRepo | undefined;
  afterEach(async () => {
    await repo?.stop();
    repo = undefined;
  });

  async function agentDir(r: TestTufRepo): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "agent-refresh-"));
    await writeFile(join(dir, "root.json"), r.initialRoot);
    return dir;
  }

  it("passes on current metadata, is frozen on a served expired timestamp, and passes again once fresh", async () => {
    repo = await TestTufRepo.create();
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.refresh()).toEqual({ ok: true });
    await repo.publishTimestamp(new Date(Date.now() - 1000));
    expect(await client.refresh()).toMatchObject({ ok: false, code: "metadata_expired" });
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    expect(await client.refresh()).toEqual({ ok: true });
  });

  it("is frozen when its trusted timestamp expired and the server answers with a bad one instead", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 1500));
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.refresh()).toEqual({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    repo.files.set("timestamp.json", Buffer.from('{"signed": "not metadata"}'));
    expect(await client.refresh()).toMatchObject({
      ok: false,
      code: "metadata_expired",
      message: expect.stringContaining("no newer one could be fetched"),
    });
    // An upgrade's check at that moment says the same (the trust state cannot flap).
    const upgrade = {
      version: "2.0.0",
      sequence: 20n,
      artifact: { url: "http://127.0.0.1:1/x", sha256: "0".repeat(64), size: 1 },
    };
    expect(await client.check(upgrade, "linux-amd64")).toMatchObject({
      ok: false,
      code: "metadata_expired",
    });
  });

  it("is not frozen when the metadata is only unreachable and still unexpired", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const client = tufClient({ metadataDir: await agentDir(repo), metadataBaseUrl: repo.base });
    expect(await client.refresh()).toEqual({ ok: true });
    repo.files.delete("timestamp.json");
    expect(await client.refresh()).toMatchObject({ ok: false, code: "metadata_unavailable" });
  });
});

describe("--tuf-refresh", () => {
  async function args(extra: string[]) {
    const [key] = await makeKeys(1);
    repo = await TestTufRepo.create();
    const dir = await mkdtemp(join(tmpdir(), "agent-refresh-args-"));
    const root = join(dir, "root.json");
    await writeFile(root, repo.initialRoot);
    await repo.stop();
    return parseAgentArgs([
      "run",
      "--install-dir",
      dir,
      "--server",
      "127.0.0.1:7443",
      "--pins",
      key?.pin ?? "",
      "--tuf-root",
      root,
      "--tuf-url",
      "http://127.0.0.1:7081/tuf/",
      ...extra,
    ]);
  }
  let repo: TestTufRepo | undefined;

  it.each<[string[], number]>([
    [[], 3_600_000],
    [["--tuf-refresh", "15m"], 900_000],
    [["--tuf-refresh", "1h30m"], 5_400_000],
    [["--tuf-refresh", "2s"], 2_000],
  ])("takes %j as %d ms", async (extra, ms) => {
    expect(await args(extra)).toMatchObject({
      ok: true,
      command: { options: { tufRefreshMs: ms } },
    });
  });

  it.each(["0s", "90", "1.5h", "25h", "1d", ""])(
    "refuses %j with one line naming the flag",
    async (value) => {
      expect(await args(["--tuf-refresh", value])).toEqual({
        ok: false,
        message: `--tuf-refresh must be a duration from 1s to 24h such as 15m, 1h or 1h30m, got ${JSON.stringify(value)}`,
      });
    },
  );

  it("refuses --tuf-refresh without a TUF channel", async () => {
    const [key] = await makeKeys(1);
    const dir = await mkdtemp(join(tmpdir(), "agent-refresh-args-"));
    expect(
      parseAgentArgs([
        "run",
        "--install-dir",
        dir,
        "--server",
        "127.0.0.1:7443",
        "--pins",
        key?.pin ?? "",
        "--tuf-refresh",
        "1h",
      ]),
    ).toEqual({
      ok: false,
      message: "--tuf-refresh needs --tuf-root and --tuf-url (it refreshes that channel)",
    });
  });
});
