/**
 * Which Control holds each node, on a real PostgreSQL: the Hello write records the holder and
 * a stream end clears it (each notifying the node's id), and the sweep over `control_instances`
 * marks offline only the nodes of Controls that are gone (backend ended, or not seen for too
 * long), never those of a live one; a Control whose row was swept claims its streams back.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ControlInstances, type HeldStream } from "../../control/db/control-instances.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { type NodeHello, NodeStore } from "../../control/db/node-store.js";
import { createLogger } from "../../control/log.js";
import { NODES_CHANNEL } from "../../control/shared/notify-channels.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

const log = createLogger({ level: "silent" });

const hello = (nodeId: string): NodeHello => ({
  nodeId,
  labels: {},
  pool: "default",
  platform: "linux-amd64",
  agentVersion: "1.0.0",
  previousVersion: "",
  bootId: `boot-${nodeId}`,
  capabilities: ["upgrade.v1"],
  confirmedSequence: 1,
});

describe("node holders across Controls", () => {
  let testDb: TestDatabase;
  let db: Database;
  let listener: pg.Client;
  const heard: string[] = [];
  const instances: ControlInstances[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase("node_holders");
    db = await openDatabase({ url: testDb.url, log });
    listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    listener.on("notification", (m) => heard.push(...(m.payload ?? "").split("\n")));
    await listener.query(`listen ${NODES_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await db?.close();
    await testDb?.drop();
  });
  beforeEach(async () => {
    await db.pool.query("truncate nodes, control_instances cascade");
    heard.length = 0;
  });
  afterEach(async () => {
    for (const i of instances.splice(0)) await i.stop();
  });

  const seed = (...ids: string[]) =>
    db.pool.query("insert into nodes (id) select unnest($1::text[])", [ids]);
  const row = async (id: string) =>
    (
      await db.pool.query<{ online: boolean; held_by: string | null }>(
        "select online, held_by from nodes where id = $1",
        [id],
      )
    ).rows[0];
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 300 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  const control = async (id: string, held: HeldStream[] = []) => {
    const instance = new ControlInstances({
      pool: db.pool,
      instanceId: id,
      name: `test ${id}`,
      log,
      heartbeatMs: 60_000,
      staleAfterMs: 30_000,
      heldStreams: () => held,
    });
    await instance.start();
    instances.push(instance);
    return instance;
  };
  const backendOf = async (id: string) =>
    (
      await db.pool.query<{ backend_pid: number }>(
        "select backend_pid from control_instances where id = $1",
        [id],
      )
    ).rows[0]?.backend_pid;

  it("records the holder with a Hello and clears it at the stream's end, notifying the node each time", async () => {
    await seed("n1");
    const nodes = new NodeStore(db.pool, { holder: "control-a" });
    await nodes.recordHello(hello("n1"), "s1", new Date());
    expect(await row("n1")).toEqual({ online: true, held_by: "control-a" });
    await until(() => heard.length >= 1);
    expect(heard).toEqual(["n1"]);

    // A stream end of an older session changes nothing (the node moved on).
    await nodes.flushStreamEnds([{ nodeId: "n1", sessionId: "s0", lastSeen: new Date() }]);
    expect(await row("n1")).toEqual({ online: true, held_by: "control-a" });
    await nodes.flushStreamEnds([{ nodeId: "n1", sessionId: "s1", lastSeen: new Date() }]);
    expect(await row("n1")).toEqual({ online: false, held_by: null });
    await until(() => heard.length >= 2);
    expect(heard).toEqual(["n1", "n1"]);
  });

  it("moves a node to the Control of its newest stream; the old Control's late stream end changes nothing", async () => {
    await seed("n1");
    const a = new NodeStore(db.pool, { holder: "control-a" });
    const b = new NodeStore(db.pool, { holder: "control-b" });
    await a.recordHello(hello("n1"), "s1", new Date());
    await b.recordHello(hello("n1"), "s2", new Date());
    await a.flushStreamEnds([{ nodeId: "n1", sessionId: "s1", lastSeen: new Date() }]);
    expect(await row("n1")).toEqual({ online: true, held_by: "control-b" });
  });

  it("sweeps the nodes of a Control whose connection is gone, and only those", async () => {
    await seed("a1", "b1", "legacy");
    await control("control-a");
    const b = await control("control-b");
    await new NodeStore(db.pool, { holder: "control-a" }).recordHello(hello("a1"), "s", new Date());
    await new NodeStore(db.pool, { holder: "control-b" }).recordHello(hello("b1"), "s", new Date());
    // Online and held by nobody (written before Controls recorded holders): gone too.
    await db.pool.query("update nodes set online = true where id = 'legacy'");
    const pid = await backendOf("control-b");
    await db.pool.query("select pg_terminate_backend($1, 5000)", [pid]);
    instances.splice(instances.indexOf(b), 1);
    heard.length = 0;

    const c = await control("control-c");
    expect(await row("a1")).toEqual({ online: true, held_by: "control-a" });
    expect(await row("b1")).toEqual({ online: false, held_by: null });
    expect(await row("legacy")).toEqual({ online: false, held_by: null });
    expect(await backendOf("control-b")).toBeUndefined();
    await until(() => heard.length >= 2);
    expect(heard.sort()).toEqual(["b1", "legacy"]);
    expect(await c.sweep()).toBe(0);
    await b.stop();
  });

  it("counts a Control not seen for staleAfterMs as gone, even with its connection open", async () => {
    await seed("b1");
    const a = await control("control-a");
    await control("control-b");
    await new NodeStore(db.pool, { holder: "control-b" }).recordHello(hello("b1"), "s", new Date());
    await db.pool.query(
      "update control_instances set seen_at = now() - interval '1 hour' where id = 'control-b'",
    );
    expect(await a.sweep()).toBe(1);
    expect(await row("b1")).toEqual({ online: false, held_by: null });
  });

  it("claims back the streams it still holds once its own row was swept", async () => {
    await seed("a1", "a2");
    const held: HeldStream[] = [{ nodeId: "a1", sessionId: "s-a1" }];
    const a = await control("control-a", held);
    const nodes = new NodeStore(db.pool, { holder: "control-a" });
    await nodes.recordHello(hello("a1"), "s-a1", new Date());
    await nodes.recordHello(hello("a2"), "s-a2", new Date());
    await db.pool.query(
      "update control_instances set seen_at = now() - interval '1 hour' where id = 'control-a'",
    );
    await (await control("control-b")).sweep();
    expect(await row("a1")).toEqual({ online: false, held_by: null });
    await a.beat();
    expect(await row("a1")).toEqual({ online: true, held_by: "control-a" });
    // a2's stream is not held any more: it stays offline.
    expect(await row("a2")).toEqual({ online: false, held_by: null });
  });
});
