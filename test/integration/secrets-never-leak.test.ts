import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256OfText } from "../../control/auth/secrets.js";
import { createLogger } from "../../control/log.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl, VIEWER_TOKEN } from "../helpers/control.js";
import { connectAgent, hello, openRawStream } from "../helpers/raw-agent.js";

/** Everything Control logged, as text: a pino logger at trace writing into memory. */
const lines: string[] = [];
const memory = { write: (line: string) => void lines.push(line) };
const logText = () => lines.join("");

/** The secret part of `<kind>.<id>.<secret>`. */
const secretOf = (credential: string) => credential.split(".")[2] ?? "";

describe("secrets are stored hashed and never logged", () => {
  let tc: TestControl;
  let operator = "";
  const secrets: string[] = [VIEWER_TOKEN];
  beforeAll(async () => {
    tc = await startTestControl({
      log: createLogger({ level: "trace", destination: memory }),
      // No operator token configured: Control generates one into the data dir.
      config: { adminToken: undefined },
    });
    operator = (await readFile(join(tc.dataDir, "admin-token"), "utf8")).trim();
    secrets.push(operator);
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const nodesAs = (token: string) => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    };
    return createClient(
      NodeService,
      createConnectTransport({ baseUrl: tc.adminUrl, httpVersion: "1.1", interceptors: [bearer] }),
    );
  };

  it("writes a generated operator token only to a 0600 file", async () => {
    expect(operator).toMatch(/^aat_/);
    expect((await stat(join(tc.dataDir, "admin-token"))).mode & 0o777).toBe(0o600);
  });

  it("goes through enrollment, reconnects, refusals and admin calls", async () => {
    const admin = nodesAs(operator);
    const created = await admin.createJoinToken({ description: "leak test" });
    secrets.push(created.secret);
    const { stream, welcome } = await connectAgent(tc.agentAddress, created.secret, "leak-1");
    const nodeToken = welcome.body.case === "welcome" ? welcome.body.value.nodeToken : "";
    expect(nodeToken).toMatch(/^ant\./);
    secrets.push(nodeToken);
    stream.close();
    await stream.ended;

    const again = await connectAgent(tc.agentAddress, nodeToken, "leak-1");
    expect(again.welcome.body.case).toBe("welcome");
    again.stream.close();
    await again.stream.ended;

    const forged = `${nodeToken.slice(0, -6)}AAAAAA`;
    secrets.push(forged);
    const refused = openRawStream(tc.agentAddress, forged);
    refused.send(hello("leak-1"));
    expect((await refused.ended).code).toBe(status.UNAUTHENTICATED);

    const impostor = openRawStream(tc.agentAddress, nodeToken);
    impostor.send(hello("leak-2"));
    expect((await impostor.ended).code).toBe(status.PERMISSION_DENIED);

    const revoked = await admin.createJoinToken({ description: "to revoke" });
    secrets.push(revoked.secret);
    await admin.revokeJoinToken({ id: revoked.token?.id ?? "" });
    const late = openRawStream(tc.agentAddress, revoked.secret);
    late.send(hello("leak-3"));
    expect((await late.ended).code).toBe(status.UNAUTHENTICATED);

    const wrongAdmin = "not-the-admin-token-0123456789abcdef";
    secrets.push(wrongAdmin);
    await expect(nodesAs(wrongAdmin).listNodes({})).rejects.toThrow(/unauthenticated|token/i);
    await expect(nodesAs(VIEWER_TOKEN).createJoinToken({})).rejects.toThrow(/permission/i);
    expect((await nodesAs(VIEWER_TOKEN).listNodes({})).totalSize).toBe(1);
    const listed = await admin.listJoinTokens({});
    expect(listed.tokens.length).toBe(2);
    expect(
      JSON.stringify(listed.tokens, (_, v) => (typeof v === "bigint" ? String(v) : v)),
    ).not.toContain(secretOf(created.secret));
  });

  it("stores join tokens and node tokens only as SHA-256 hashes", async () => {
    const join = secrets.find((s) => s.startsWith("ajt.")) ?? "";
    const node = secrets.find((s) => s.startsWith("ant.")) ?? "";
    const { rows: tokens } = await tc.control.db.pool.query<{ id: string; secret_hash: string }>(
      "select id, secret_hash from join_tokens where id = $1",
      [join.split(".")[1]],
    );
    expect(tokens[0]?.secret_hash).toBe(sha256OfText(secretOf(join)));
    const { rows: nodes } = await tc.control.db.pool.query<{ token_hash: string }>(
      "select token_hash from nodes where id = 'leak-1'",
    );
    expect(nodes[0]?.token_hash).toBe(sha256OfText(secretOf(node)));
  });

  it("holds no secret anywhere in the database", async () => {
    const { rows: tables } = await tc.control.db.pool.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = 'public'",
    );
    expect(tables.length).toBeGreaterThan(3);
    let dump = "";
    for (const { name } of tables) {
      const { rows } = await tc.control.db.pool.query<{ row: string }>(
        `select t::text as row from "${name}" t`,
      );
      dump += rows.map((r) => r.row).join("\n");
    }
    expect(dump).toContain("leak-1");
    for (const secret of secrets) {
      expect(dump).not.toContain(secret);
      if (secret.split(".").length === 3) expect(dump).not.toContain(secretOf(secret));
    }
  });

  it("logs no secret, at trace level, through all of the above", () => {
    const text = logText();
    expect(text).toMatch(/node enrolled/);
    expect(text).toMatch(/UNAUTHENTICATED|node token is not valid|agent stream closed/);
    if (process.env.SHOW_LOG) console.log(text);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      if (secret.split(".").length === 3) expect(text).not.toContain(secretOf(secret));
    }
  });

  it("redacts credential fields even if code passes them to the logger", () => {
    const captured: string[] = [];
    const log = createLogger({
      level: "trace",
      destination: { write: (l) => void captured.push(l) },
    });
    const secret = "ant.bGVhaw.super-secret-value-0123456789";
    log.info({ authorization: `Bearer ${secret}`, req: { token: secret, nodeToken: secret } }, "x");
    log.child({ joinToken: secret }).info({ headers: { authorization: secret } }, "y");
    expect(captured.join("")).not.toContain(secret);
    expect(captured.join("")).toContain("[redacted]");
  });
});
