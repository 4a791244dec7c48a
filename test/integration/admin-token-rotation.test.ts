/**
 * Admin tokens with an expiry, rotated without a restart: a real Control process (`node
 * --import tsx control/main.ts`, so SIGHUP reaches Control itself) with an admin tokens file,
 * a simulated fleet and a running campaign. Rewriting the file and sending SIGHUP puts the
 * new tokens in force and retires the old ones while a stream the old token opened goes on;
 * a bad file changes nothing; the audit log names the token that acted, never its secret.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgentctl } from "../../agent-sim/demo/agentctl.js";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { freePort } from "../../control/db/embedded-postgres.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import {
  type Campaign,
  CampaignService,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";
import { fastConfig, quickSpec } from "./campaign-fixture.js";

const OPERATOR = "operator-token-rotation-0123456789";
const CI_OLD = "ci-old-token-0123456789abcdef";
const CI_NEW = "ci-new-token-0123456789abcdef";
const EXPIRED = "expired-token-0123456789abcdef";
const SOON = "soon-token-0123456789abcdef";
const SECRETS = [OPERATOR, CI_OLD, CI_NEW, EXPIRED, SOON];

let dir = "";
let tokensFile = "";
let adminUrl = "";
let agentAddr = "";
let database: TestDatabase;
let control: ChildProcess;
let exited: Promise<number | null>;
let output = "";
let fleet: Fleet | undefined;
/** When the SOON token stops working (set when the rotated tokens file is written). */
let soonExpires = new Date(0);

function client<S extends DescService>(service: S, token: string): Client<S> {
  return createClient(
    service,
    createConnectTransport({
      baseUrl: adminUrl,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", `Bearer ${token}`);
          return next(req);
        },
      ],
    }),
  );
}

/** The Connect code and message a ListNodes call with `token` gets (undefined code: OK). */
async function listNodesAs(token: string): Promise<{ code: Code | undefined; message: string }> {
  try {
    await client(NodeService, token).listNodes({});
    return { code: undefined, message: "" };
  } catch (error) {
    const e = ConnectError.from(error);
    return { code: e.code, message: e.rawMessage };
  }
}

async function writeTokens(entries: readonly object[] | string): Promise<void> {
  await writeFile(tokensFile, typeof entries === "string" ? entries : JSON.stringify(entries), {
    mode: 0o600,
  });
}

async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sends SIGHUP and waits for Control's log line about this reload. */
async function reload(): Promise<"reloaded" | "kept"> {
  const count = (text: string) => output.split(text).length - 1;
  const before = [count('"admin tokens reloaded"'), count('"admin tokens file not reloaded')];
  control.kill("SIGHUP");
  let outcome: "reloaded" | "kept" | undefined;
  await eventually(() => {
    if (count('"admin tokens reloaded"') > (before[0] ?? 0)) outcome = "reloaded";
    if (count('"admin tokens file not reloaded') > (before[1] ?? 0)) outcome = "kept";
    return outcome !== undefined;
  }, "the reload's log line");
  return outcome as "reloaded" | "kept";
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "admin-token-rotation-"));
  tokensFile = join(dir, "admin-tokens.json");
  await writeTokens([
    { name: "ci-old", role: "operator", token: CI_OLD },
    { name: "expired", role: "operator", token: EXPIRED, expires: "2020-01-01T00:00:00Z" },
  ]);
  const [key] = await makeKeys(1);
  if (!key) throw new Error("no key");
  await writeFile(
    join(dir, "control.json"),
    JSON.stringify(
      fastConfig(key.pin, { policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 } }),
    ),
  );
  database = await createTestDatabase("tokens");
  agentAddr = `127.0.0.1:${await freePort()}`;
  const adminAddr = `127.0.0.1:${await freePort()}`;
  adminUrl = `http://${adminAddr}`;
  control = spawn(
    process.execPath,
    ["--import", "tsx", "control/main.ts", "--config", join(dir, "control.json")],
    {
      cwd: process.cwd(),
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: database.url,
        AGENT_CONTROL_DATA_DIR: join(dir, "data"),
        AGENT_CONTROL_AGENT_ADDR: agentAddr,
        AGENT_CONTROL_ADMIN_ADDR: adminAddr,
        AGENT_CONTROL_ADMIN_TOKEN: OPERATOR,
        AGENT_CONTROL_ADMIN_TOKENS_FILE: tokensFile,
        AGENT_CONTROL_LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  control.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  control.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  exited = new Promise((resolve) => control.once("exit", (code) => resolve(code)));
  await eventually(
    () =>
      fetch(`${adminUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      ),
    "Control to be ready",
    90_000,
  );
  const joinToken = (await client(NodeService, CI_OLD).createJoinToken({})).secret;
  fleet = await startFleet({
    server: agentAddr,
    joinToken,
    count: 2,
    pins: [key.pin],
    restartMs: [20, 120],
  });
  await fleet.waitUntil((f) => f.welcomedCount() === 2, 60_000, "2 agents welcomed");
  await registerTestRelease(
    { client: (service) => client(service, CI_OLD) },
    { version: "2.0.0", sequence: 20, key },
  );
}, 150_000);

afterAll(async () => {
  await fleet?.stop();
  if (control && control.exitCode === null && control.signalCode === null) {
    control.kill("SIGKILL");
    await exited;
  }
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe("admin tokens with expiry, rotated by SIGHUP", { timeout: 120_000 }, () => {
  it("refuses an expired token as unauthenticated, and agentctl says so", async () => {
    expect(await listNodesAs(EXPIRED)).toEqual({
      code: Code.Unauthenticated,
      message: "token expired at 2020-01-01T00:00:00.000Z: ask for a new admin token",
    });
    const cli = await runAgentctl(["node", "list", "--server", adminUrl, "--token", EXPIRED], {
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" },
      timeoutMs: 60_000,
    });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(
      /^agentctl: not authenticated: the token given with --token was rejected \(token expired at 2020-01-01T00:00:00.000Z: ask for a new admin token\); /,
    );
  });

  it("puts a rewritten file's tokens in force on SIGHUP; a stream the removed token opened ends unauthenticated", async () => {
    expect((await listNodesAs(CI_OLD)).code).toBeUndefined();
    expect((await listNodesAs(CI_NEW)).message).toBe("unknown admin token");
    const started = await client(CampaignService, CI_OLD).startCampaign({
      // One batch that holds for ten minutes: the campaign runs through the whole test.
      spec: quickSpec("2.0.0", [100], {
        batches: [{ percent: 100, minDuration: { seconds: 600n, nanos: 0 } }],
      }),
    });
    const id = started.campaign?.id ?? "";
    const updates: Campaign[] = [];
    const abort = new AbortController();
    let ended: unknown;
    const watching = (async () => {
      for await (const update of client(CampaignService, CI_OLD).watchCampaign(
        { id },
        { signal: abort.signal },
      )) {
        if (update.campaign) updates.push(update.campaign);
      }
    })().catch((error: unknown) => {
      ended = error;
    });
    await eventually(() => updates.length > 0, "the first watch update");

    soonExpires = new Date(Date.now() + 8_000);
    await writeTokens([
      { name: "ci-new", role: "operator", token: CI_NEW },
      { name: "soon", role: "viewer", token: SOON, expires: soonExpires.toISOString() },
    ]);
    expect(await reload()).toBe("reloaded");

    expect((await listNodesAs(CI_NEW)).code).toBeUndefined();
    expect((await listNodesAs(SOON)).code).toBeUndefined();
    expect(await listNodesAs(CI_OLD)).toEqual({
      code: Code.Unauthenticated,
      message: "unknown admin token",
    });
    // The removed token's open stream ends too: a revoked credential keeps no access.
    await watching;
    expect(ended).toBeInstanceOf(ConnectError);
    expect((ended as ConnectError).code).toBe(Code.Unauthenticated);
    await client(CampaignService, CI_NEW).pauseCampaign({ id, reason: "rotation test" });
    abort.abort();
  });

  it("names the token that acted in the audit log, never its secret", async () => {
    const audit = client(AuditService, OPERATOR);
    let events: Awaited<ReturnType<typeof audit.listAuditEvents>>["events"] = [];
    await eventually(async () => {
      events = (await audit.listAuditEvents({ pageSize: 100 })).events;
      return events.some((e) => e.action === "pause");
    }, "the pause's audit event");
    const actorOf = (action: string) => events.find((e) => e.action === action)?.actor;
    expect(actorOf("token.create")).toBe("ci-old");
    expect(actorOf("release.register")).toBe("ci-old");
    expect(actorOf("start")).toBe("ci-old");
    expect(actorOf("pause")).toBe("ci-new");
    const text = JSON.stringify(events.map((e) => [e.actor, e.message, e.detailJson]));
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    for (const secret of SECRETS) expect(output).not.toContain(secret);
  });

  it.each([
    ["not JSON", "[{"],
    [
      "an entry with a misspelt key",
      [{ name: "ci-x", role: "operator", token: CI_OLD, expire: "2030-01-01T00:00:00Z" }],
    ],
    ["a token named like the operator token", [{ name: "admin", role: "viewer", token: CI_OLD }]],
  ])("keeps the tokens in force when the file on reload is %s", async (_, content) => {
    await writeTokens(content as object[] | string);
    expect(await reload()).toBe("kept");
    expect((await listNodesAs(CI_NEW)).code).toBeUndefined();
    expect((await listNodesAs(CI_OLD)).message).toBe("unknown admin token");
    expect(control.exitCode).toBeNull();
  });

  it("refuses a token once its expiry passes, with no reload", async () => {
    await eventually(() => Date.now() > soonExpires.getTime(), "the soon token's expiry", 30_000);
    const refused = await listNodesAs(SOON);
    expect(refused.code).toBe(Code.Unauthenticated);
    expect(refused.message).toMatch(/^token expired at /);
  });

  it("still drains and exits 0 on SIGTERM", async () => {
    await fleet?.stop();
    fleet = undefined;
    control.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
