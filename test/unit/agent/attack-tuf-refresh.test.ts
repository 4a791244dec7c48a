/**
 * A hostile metadata server against the Agent's TUF refresh (real tuf-js, a real repository
 * served over loopback HTTP): what it serves in place of timestamp.json must neither freeze
 * an Agent whose metadata is current, nor clear the freeze of one whose metadata expired,
 * nor hold the refresh for longer than its fetch bound.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { observedMessage, trustStatusMessage } from "../../../agent/core/messages.js";
import { nextTrustState } from "../../../agent/core/trust-state.js";
import { tufClient } from "../../../agent/core/tuf-check.js";
import { nulTextPath } from "../../../control/shared/nul-text.js";
import { buildTargets } from "../../../control/shared/tuf/repository.js";
import { type LoopbackHttp, serveFile, startLoopbackHttp } from "../../helpers/loopback-http.js";
import { TestTufRepo } from "../../helpers/tuf-repo.js";

/** An upgrade to a release the repository does not list. */
const UPGRADE = {
  version: "2.0.0",
  sequence: 20n,
  artifact: { url: "http://127.0.0.1:1/x", sha256: "0".repeat(64), size: 1 },
};

/** What the hostile server does with a request for timestamp.json. */
type Hostile = (res: ServerResponse) => void;

describe("a hostile server answering the Agent's TUF refresh", () => {
  let repo: TestTufRepo | undefined;
  let server: LoopbackHttp | undefined;
  afterEach(async () => {
    await server?.close();
    await repo?.stop();
    server = undefined;
    repo = undefined;
  });

  /** Serves `repo`'s files, except timestamp.json while `hostile.now` is set. */
  async function serve(r: TestTufRepo, hostile: { now?: Hostile | undefined }): Promise<string> {
    server = await startLoopbackHttp((req, res) => {
      const name = (req.url ?? "/").replace(/^\/tuf\//, "");
      if (name === "timestamp.json" && hostile.now !== undefined) return hostile.now(res);
      serveFile(r.files, name, res);
    });
    return `${server.origin}/tuf/`;
  }

  /**
   * The Agent's TUF client over a fresh metadata directory that trusts `r`'s initial root,
   * refreshing from `r` served as {@link serve} does.
   */
  async function agentClient(
    r: TestTufRepo,
    hostile: { now?: Hostile | undefined } = {},
    fetchTimeoutMs?: number,
  ) {
    const dir = await mkdtemp(join(tmpdir(), "agent-attack-refresh-"));
    await writeFile(join(dir, "root.json"), r.initialRoot);
    return tufClient({
      metadataDir: dir,
      metadataBaseUrl: await serve(r, hostile),
      ...(fetchTimeoutMs === undefined ? {} : { fetchTimeoutMs }),
    });
  }

  it("cannot freeze a current Agent with metadata whose parse error says 'is expired'", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const hostile: { now?: Hostile | undefined } = {};
    const client = await agentClient(repo, hostile);
    expect(await client.refresh()).toEqual({ ok: true });
    hostile.now = (res) =>
      res.writeHead(200).end('{"signed":{"_type":"is expired"},"signatures":[]}');
    const verdict = await client.refresh();
    expect(verdict.ok).toBe(false);
    expect(verdict.ok === false && verdict.code).not.toBe("metadata_expired");
  });

  it("cannot clear a freeze by replaying the same expired timestamp", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 1500));
    const client = await agentClient(repo);
    expect(await client.refresh()).toEqual({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await client.refresh()).toMatchObject({ ok: false, code: "metadata_expired" });
  });

  it("cannot make a frozen Agent's TrustStatus carry U+0000 (which Control ends the stream for) by quoting one", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 1500));
    const hostile: { now?: Hostile | undefined } = {};
    const client = await agentClient(repo, hostile);
    expect(await client.refresh()).toEqual({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    hostile.now = (res) => res.writeHead(200).end('{"signed":{"_type":"\\u0000"},"signatures":[]}');
    const verdict = await client.refresh();
    expect(verdict).toMatchObject({ ok: false, code: "metadata_expired" });
    // The refusal quotes the server's U+0000 (the ground truth of this attack)…
    expect(verdict.ok === false && verdict.message.includes("\u0000")).toBe(true);
    const message = trustStatusMessage(nextTrustState(undefined, verdict, new Date()).state);
    // …and the TrustStatus still passes the check Control's stream decoder makes.
    expect(nulTextPath(message)).toBeUndefined();
    expect(message.body.case === "trustStatus" && message.body.value).toMatchObject({
      frozen: true,
      reason: expect.stringContaining("no newer one could be fetched"),
    });
  });

  it("cannot clear a freeze by expired targets with a bad timestamp while the trusted one is current", async () => {
    repo = await TestTufRepo.create();
    repo.targets = buildTargets(new Date(Date.now() + 1500));
    await repo.publishTargets([], repo.keys.targets);
    const hostile: { now?: Hostile | undefined } = {};
    const client = await agentClient(repo, hostile);
    expect(await client.refresh()).toEqual({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // The honest server's metadata: the offline targets role has expired, a freeze.
    expect(await client.refresh()).toMatchObject({ ok: false, code: "metadata_expired" });
    hostile.now = (res) => res.writeHead(200).end("{}");
    expect(await client.refresh()).toMatchObject({ ok: false, code: "metadata_expired" });
    hostile.now = (res) => res.writeHead(404).end();
    expect(await client.refresh()).toMatchObject({ ok: false, code: "metadata_expired" });
  });

  it("cannot redirect the refresh elsewhere", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    let elsewhere = 0;
    const other = await startLoopbackHttp((_req, res) => {
      elsewhere++;
      res.writeHead(404).end();
    });
    const otherUrl = `${other.origin}/timestamp.json`;
    try {
      const hostile: { now?: Hostile | undefined } = {};
      const client = await agentClient(repo, hostile);
      expect(await client.refresh()).toEqual({ ok: true });
      hostile.now = (res) => res.writeHead(302, { location: otherUrl }).end();
      expect(await client.refresh()).toMatchObject({ ok: false });
      expect(elsewhere).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("cannot make an upgrade's refusal report carry U+0000 onto the stream by quoting one", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const hostile: { now?: Hostile | undefined } = {};
    const client = await agentClient(repo, hostile);
    hostile.now = (res) => res.writeHead(200).end('{"signed":{"_type":"\\u0000"},"signatures":[]}');
    const verdict = await client.check(UPGRADE, "linux-amd64");
    expect(verdict.ok === false && verdict.message.includes("\u0000")).toBe(true);
    if (verdict.ok) return;
    const message = observedMessage("op-1", {
      phase: 5,
      version: "2.0.0",
      code: verdict.code,
      message: verdict.message,
    });
    expect(nulTextPath(message)).toBeUndefined();
    expect(message.body.case === "observed" && message.body.value.message).toMatch(
      /TUF metadata refused/,
    );
  });

  it("cannot roll the timestamp back to an older, still unexpired one", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const older = repo.files.get("timestamp.json");
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const client = await agentClient(repo);
    expect(await client.refresh()).toEqual({ ok: true });
    if (older === undefined) throw new Error("no timestamp published");
    repo.files.set("timestamp.json", older);
    expect(await client.refresh()).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringMatching(/version/i),
    });
  });

  it("cannot serve fresh metadata to the refresh and an older timestamp to the upgrade's check", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const older = repo.files.get("timestamp.json");
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const client = await agentClient(repo);
    expect(await client.refresh()).toEqual({ ok: true });
    if (older === undefined) throw new Error("no timestamp published");
    repo.files.set("timestamp.json", older);
    expect(await client.check(UPGRADE, "linux-amd64")).toMatchObject({
      ok: false,
      code: "untrusted_release",
      message: expect.stringMatching(/version/i),
    });
  });

  it("ends an endless timestamp at its length bound, not at the fetch timeout", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const hostile: { now?: Hostile | undefined } = {};
    const client = await agentClient(repo, hostile, 60_000);
    expect(await client.refresh()).toEqual({ ok: true });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    hostile.now = (res) => {
      res.writeHead(200);
      const more = () => {
        while (!res.destroyed && sent < 1024 * 1024 * 1024) {
          sent += chunk.byteLength;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
      };
      more();
    };
    const started = Date.now();
    const verdict = await client.refresh();
    expect(verdict.ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("ends a trickled timestamp at the fetch timeout, and a check queued behind it then runs", async () => {
    repo = await TestTufRepo.create();
    await repo.publishTimestamp(new Date(Date.now() + 3_600_000));
    const hostile: { now?: Hostile | undefined } = {};
    const client = await agentClient(repo, hostile, 1500);
    expect(await client.refresh()).toEqual({ ok: true });
    const timers: NodeJS.Timeout[] = [];
    hostile.now = (res) => {
      hostile.now = undefined; // only this refresh is trickled
      res.writeHead(200);
      const tick = () => {
        if (res.destroyed) return;
        res.write(" ");
        timers.push(setTimeout(tick, 100));
      };
      tick();
    };
    const started = Date.now();
    const refresh = client.refresh();
    const check = client.check(UPGRADE, "linux-amd64");
    expect(await refresh).toMatchObject({ ok: false, code: "metadata_unavailable" });
    expect(Date.now() - started).toBeLessThan(6_000);
    // The check ran after the refresh, against the honest server: the release is not listed.
    expect(await check).toMatchObject({ ok: false, code: "untrusted_release" });
    for (const t of timers) clearTimeout(t);
  });
});
