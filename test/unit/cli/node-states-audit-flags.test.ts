import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { parseInstant, UsageError } from "../../../cli/args.js";
import { MAX_ACTOR_WIDTH, truncate } from "../../../cli/commands/audit.js";
import { nodeStatus, nodeVersion, resetText } from "../../../cli/commands/node.js";
import { NodeSchema } from "../../../proto/gen/agentcontrol/admin/v1/node_pb.js";

const NOW = new Date("2026-12-07T12:00:00Z");

describe("audit list's --since and --until", () => {
  it.each([
    ["2026-12-07T09:30:00Z", "2026-12-07T09:30:00.000Z"],
    ["2026-12-07T09:30:00.250Z", "2026-12-07T09:30:00.250Z"],
    ["2026-12-07T09:30:00.123456789Z", "2026-12-07T09:30:00.123Z"],
    ["2026-12-07T10:30:00+01:00", "2026-12-07T09:30:00.000Z"],
    ["2026-12-07t09:30:00z", "2026-12-07T09:30:00.000Z"],
    ["2026-12-07 09:30:00Z", "2026-12-07T09:30:00.000Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
    ["2h", "2026-12-07T10:00:00.000Z"],
    ["1h30m", "2026-12-07T10:30:00.000Z"],
    ["0s", "2026-12-07T12:00:00.000Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseInstant(text, "since", NOW).toISOString()).toBe(iso);
  });

  it.each([
    "",
    "yesterday",
    "2026-12-07",
    "2026-12-07T09:30:00",
    "2026-02-29T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-12-07T24:00:00Z",
    "2026-12-07T09:60:00Z",
    "1d",
    "-2h",
    "1.5h",
  ])("refuses %j, naming the flag and the forms it takes", (text) => {
    expect(() => parseInstant(text, "until", NOW)).toThrow(UsageError);
    expect(() => parseInstant(text, "until", NOW)).toThrow(
      `invalid time "${text}" for --until: use an RFC 3339 time such as 2026-12-07T09:00:00Z or a duration ago such as 2h or 30m`,
    );
  });
});

describe("audit list's ACTOR column", () => {
  it("keeps an actor of up to 32 characters and cuts a longer one to 32 with an ellipsis", () => {
    const fingerprint = `certificate:${Array.from({ length: 32 }, () => "AB").join(":")}`;
    expect(truncate("admin", MAX_ACTOR_WIDTH)).toBe("admin");
    expect(truncate("x".repeat(32), MAX_ACTOR_WIDTH)).toBe("x".repeat(32));
    const cut = truncate(fingerprint, MAX_ACTOR_WIDTH);
    expect([...cut]).toHaveLength(32);
    expect(cut).toBe(`${fingerprint.slice(0, 31)}…`);
  });
});

describe("node list and node show", () => {
  const node = (fields: MessageInitShape<typeof NodeSchema>) =>
    create(NodeSchema, { nodeId: "web-1", enabled: true, ...fields });

  it.each([
    [{ online: true }, "online"],
    [{ online: false }, "offline"],
    [{ online: false, revoked: true }, "revoked"],
    [{ online: false, revoked: true, enabled: false }, "revoked,disabled"],
    [{ online: true, trustFrozen: true }, "online,frozen"],
  ])("says the status of %j as %s", (fields, status) => {
    expect(nodeStatus(node(fields))).toBe(status);
  });

  it("marks a version whose release is yanked", () => {
    expect(nodeVersion(node({ agentVersion: "1.3.0", agentVersionYanked: true }))).toBe(
      "1.3.0 (yanked)",
    );
    expect(nodeVersion(node({ agentVersion: "1.3.0" }))).toBe("1.3.0");
    expect(nodeVersion(node({}))).toBe("-");
  });

  it("says a reset node that enrolled by certificate needs a new certificate, and how", () => {
    expect(resetText(node({}), "web-1")).toBe(
      "node web-1 reset: its node token no longer works; its next join-token enrollment is accepted once\n",
    );
    expect(resetText(node({ certificateEnrolled: true }), "web-1")).toMatch(
      /^node web-1 reset: it enrolled by client certificate, not a join token; if it lost its key, it needs a new certificate: agentctl tls issue-node web-1 --out DIR, /,
    );
    expect(resetText(node({ certificateEnrolled: true, revoked: true }), "web-1")).toContain(
      "its certificate stays refused since the node was revoked, so it needs a new certificate: agentctl tls issue-node web-1",
    );
  });
});
