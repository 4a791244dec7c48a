/**
 * A token whose role may not call an RPC (a viewer trying operator RPCs) leaves a trace, as a
 * failed authentication does: an `admin.permission_denied` audit event naming the token, its
 * address and the RPC, and a warning in Control's log. Both at most once per token per minute,
 * each counting the refusals suppressed since the previous one, so a token probing every RPC
 * in a loop cannot grow the audit table or the log without limit.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../control/log.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl, VIEWER_TOKEN } from "../helpers/control.js";
import { eventually } from "../helpers/raw-agent.js";

describe("admin calls refused for their role", { timeout: 60_000 }, () => {
  let tc: TestControl;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    tc = await startTestControl({ log: createLogger({ level: "info", destination }) });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("are audited and logged once per token per minute", async () => {
    const viewer = tc.client(NodeService, VIEWER_TOKEN);
    for (let i = 0; i < 5; i++) {
      await expect(viewer.createJoinToken({})).rejects.toThrow(/role viewer may not call/);
    }
    await expect(viewer.resetNode({ nodeId: "x" })).rejects.toThrow(/role viewer may not call/);
    const audit = tc.client(AuditService);
    await eventually(async () => {
      const { events } = await audit.listAuditEvents({ action: "admin.permission_denied" });
      return events.length > 0;
    }, 10_000);
    const { events } = await audit.listAuditEvents({ action: "admin.permission_denied" });
    expect(events).toHaveLength(1);
    expect(events[0]?.actor).toBe("viewer");
    expect(events[0]?.actorIp).toMatch(/127\.0\.0\.1/);
    expect(events[0]?.message).toMatch(/CreateJoinToken/);
    const logged = lines.filter(
      (l) => l.msg === "admin call refused: the token's role may not call it",
    );
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      tokenName: "viewer",
      method: expect.stringMatching(/CreateJoinToken/),
    });
    // The viewer's own reads are not refused, and leave no such event.
    await viewer.listNodes({});
  });
});
