/**
 * Attack (a flood of operations): the Agent queued every operation Control sent, without
 * bound: 468 MB of queued operations in about a second raised the Agent from 74 to 569 MB,
 * linearly.
 *
 * Expected: what the Agent holds from Control is bounded (operations queued, their bytes);
 * beyond the bound an operation is refused (not queued, not remembered, so a redelivery is
 * handled afresh) with one log line per interval, however many are refused. Judged by
 * count, never by wall time.
 */

import { rm } from "node:fs/promises";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { initialState } from "../../../agent/agent-state.js";
import type { DownloadResult } from "../../../agent/core/download.js";
import {
  OperationBudget,
  operationBytes,
  receiveOperation,
} from "../../../agent/operation-queue.js";
import {
  type Operation,
  OperationSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { ArtifactServer, makeRelease, newKey, upgradeOp } from "../sim/release-fixture.js";
import { testAgentHost } from "./agent-host.js";

let roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
  roots = [];
});

/** A rollback whose reason carries `bytes` bytes (what a hostile Control pads it with). */
function padded(id: string, bytes: number): Operation {
  return create(OperationSchema, {
    id,
    kind: { case: "agentRollback", value: { version: "9.9.9", reason: "x".repeat(bytes) } },
  });
}

/** An agent on 1.0.0 whose first operation, an upgrade, hangs in its download until released. */
async function busyAgent() {
  const key = await newKey();
  const server = new ArtifactServer();
  server.base = "http://127.0.0.1:9"; // never fetched: this agent's download hangs
  let release: (result: DownloadResult) => void = () => {};
  const hanging = new Promise<DownloadResult>((resolve) => {
    release = resolve;
  });
  const agent = await testAgentHost({
    state: initialState("n1", "1.0.0"),
    installed: ["1.0.0"],
    pins: [key.pin],
    fetch: () => hanging,
  });
  roots.push(agent.paths.root);
  const first = upgradeOp("up", await makeRelease(server, key, "1.1.0", 11));
  return { agent, first, release };
}

describe("the Agent's queue of operations from Control", () => {
  it("holds at most maxQueued operations; the rest of a flood of 10 000 is refused with one log line", async () => {
    const { agent, first, release } = await busyAgent();
    let now = 0;
    const budget = new OperationBudget({
      limits: { maxQueued: 16, maxQueuedBytes: 1 << 30 },
      log: agent.log,
      now: () => now,
    });
    const running = [receiveOperation(agent.host, budget, first)];
    for (let i = 0; i < 10_000; i++) {
      running.push(receiveOperation(agent.host, budget, padded(`flood-${i}`, 10)));
      now += 1; // 10 s of flood in all, within one log interval
    }
    expect(budget.queued).toBe(16);
    expect(budget.refused).toBe(10_000 - 15);
    // Only what was admitted is remembered (the refused ones are handled afresh if redelivered).
    expect(Object.keys(agent.state.handled)).toHaveLength(16);
    const lines = agent.log.lines.filter((l) => /refusing operations/.test(l.msg));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", fields: { maxQueued: 16 } });
    release({ ok: false, code: "download_failed", message: "released" });
    await Promise.all(running);
    expect(budget.queued).toBe(0);
    expect(budget.queuedBytes).toBe(0);
  });

  it("holds at most maxQueuedBytes of operations: a flood of 1 MiB operations keeps 8 of them", async () => {
    const { agent, first, release } = await busyAgent();
    const budget = new OperationBudget({
      limits: { maxQueued: 1000, maxQueuedBytes: 8 * 1024 * 1024 + 64 * 1024 },
      log: agent.log,
      now: () => 0,
    });
    const running = [receiveOperation(agent.host, budget, first)];
    for (let i = 0; i < 40; i++) {
      running.push(receiveOperation(agent.host, budget, padded(`big-${i}`, 1024 * 1024)));
    }
    expect(budget.queued).toBe(1 + 8);
    expect(budget.queuedBytes).toBeLessThanOrEqual(8 * 1024 * 1024 + 64 * 1024);
    expect(budget.refused).toBe(40 - 8);
    release({ ok: false, code: "download_failed", message: "released" });
    await Promise.all(running);
    expect(budget.queuedBytes).toBe(0);
  });

  it("logs again, once, in the next interval, with the count refused in between", async () => {
    const { agent, first, release } = await busyAgent();
    let now = 0;
    const budget = new OperationBudget({
      limits: { maxQueued: 1, maxQueuedBytes: 1 << 30 },
      log: agent.log,
      now: () => now,
      logEveryMs: 60_000,
    });
    const running = [receiveOperation(agent.host, budget, first)];
    for (let i = 0; i < 100; i++)
      running.push(receiveOperation(agent.host, budget, padded(`a${i}`, 1)));
    now = 60_000;
    for (let i = 0; i < 100; i++)
      running.push(receiveOperation(agent.host, budget, padded(`b${i}`, 1)));
    const lines = agent.log.lines.filter((l) => /refusing operations/.test(l.msg));
    expect(lines).toHaveLength(2);
    expect(lines[1]?.fields).toMatchObject({ refusedSinceLastLine: 100 });
    release({ ok: false, code: "download_failed", message: "released" });
    await Promise.all(running);
  });

  it("still answers a redelivered operation it already handled, even when full", async () => {
    const { agent, first, release } = await busyAgent();
    const budget = new OperationBudget({
      limits: { maxQueued: 1, maxQueuedBytes: 1 << 30 },
      log: agent.log,
      now: () => 0,
    });
    const running = [receiveOperation(agent.host, budget, first)];
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reportsBefore = agent.reports.length;
    running.push(receiveOperation(agent.host, budget, first));
    await running[1];
    expect(agent.reports.length).toBe(reportsBefore + 1);
    expect(budget.refused).toBe(0);
    release({ ok: false, code: "download_failed", message: "released" });
    await Promise.all(running);
  });

  it("counts an operation's bytes as its wire size", () => {
    expect(operationBytes(padded("x", 1000))).toBeGreaterThanOrEqual(1000);
    expect(operationBytes(padded("x", 1000))).toBeLessThan(1100);
  });
});
