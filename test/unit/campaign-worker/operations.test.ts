import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { OfferRelease } from "../../../control/campaign-store/index.js";
import { buildOperation } from "../../../control/campaign-worker/operations.js";
import { OperationSchema } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const release: OfferRelease = {
  version: "2.0.0",
  sequence: 20,
  envelope: {
    payloadType: "application/vnd.agentcontrol.release.v1+json",
    payload: new TextEncoder().encode("{}"),
    signatures: [{ keyid: "abcd", sig: new Uint8Array([1, 2, 3]) }],
  },
  artifacts: [
    { platform: "linux-amd64", sha256: "a".repeat(64), size: 10, url: "" },
    { platform: "linux-arm64", sha256: "b".repeat(64), size: 11, url: "https://cdn/x" },
  ],
};
const upgrade = {
  kind: "upgrade" as const,
  nodeId: "n1",
  operationId: "c1/n1/upgrade",
  version: "2.0.0",
  sequence: 20,
};

const decoded = (payload: Uint8Array) => fromBinary(OperationSchema, payload);

describe("building operations", () => {
  it("offers the node's platform artifact, served by Control when it has no url, with the envelope as registered", () => {
    const built = buildOperation(upgrade, {
      release,
      platform: "linux-amd64",
      publicUrl: "http://control:7080",
    });
    if (!built.ok) throw new Error(built.failure);
    const op = fromBinary(OperationSchema, built.payload);
    expect(op.id).toBe("c1/n1/upgrade");
    if (op.kind.case !== "agentUpgrade") throw new Error("not an upgrade");
    expect(op.kind.value.sequence).toBe(20n);
    expect(op.kind.value.artifact?.url).toBe(
      "http://control:7080/downloads/agent/2.0.0/linux-amd64",
    );
    expect(op.kind.value.artifact?.size).toBe(10n);
    expect(op.kind.value.envelope?.signatures[0]?.sig).toEqual(new Uint8Array([1, 2, 3]));
    expect(op.kind.value.envelope?.payload).toEqual(release.envelope.payload);
  });

  it("uses the manifest's url when it has one", () => {
    const built = buildOperation(upgrade, { release, platform: "linux-arm64", publicUrl: "x" });
    const op = built.ok ? decoded(built.payload) : undefined;
    expect(op?.kind.case === "agentUpgrade" && op.kind.value.artifact?.url).toBe("https://cdn/x");
  });

  it("cannot build an upgrade for a platform the release lacks, or without the release", () => {
    const other = buildOperation(upgrade, { release, platform: "darwin-arm64", publicUrl: "" });
    expect(other).toEqual({
      ok: false,
      failure: expect.stringMatching(/no artifact for platform darwin-arm64/),
    });
    const gone = buildOperation(upgrade, {
      release: undefined,
      platform: "linux-amd64",
      publicUrl: "",
    });
    expect(gone).toEqual({ ok: false, failure: expect.stringMatching(/not registered/) });
  });

  it("frames the shared upgrade body with each id exactly as a full encoding would", () => {
    const ctx = { release, platform: "linux-amd64", publicUrl: "http://control:7080" };
    const a = buildOperation(upgrade, ctx);
    const b = buildOperation({ ...upgrade, nodeId: "n2", operationId: "c1/n2/upgrade" }, ctx);
    if (!a.ok || !b.ok) throw new Error("not built");
    expect(a.operation).toEqual({ id: "c1/n1/upgrade", bytes: a.payload });
    const other = decoded(b.payload);
    expect(other.id).toBe("c1/n2/upgrade");
    expect(toBinary(OperationSchema, other)).toEqual(b.payload);
    expect(toBinary(OperationSchema, { ...decoded(a.payload), id: "c1/n2/upgrade" })).toEqual(
      b.payload,
    );
  });

  it("builds rollbacks and confirms", () => {
    const rollback = buildOperation(
      {
        kind: "rollback",
        nodeId: "n1",
        operationId: "c1/n1/rollback",
        version: "1.0.0",
        reason: "batch failed",
      },
      { release: undefined, platform: undefined, publicUrl: "" },
    );
    expect(rollback.ok && decoded(rollback.payload).kind).toEqual({
      case: "agentRollback",
      value: expect.objectContaining({ version: "1.0.0", reason: "batch failed" }),
    });
    const confirm = buildOperation(
      {
        kind: "confirm",
        nodeId: "n1",
        operationId: "c1/n1/confirm",
        version: "2.0.0",
        sequence: 20,
      },
      { release: undefined, platform: undefined, publicUrl: "" },
    );
    expect(confirm.ok && decoded(confirm.payload).kind).toEqual({
      case: "agentConfirm",
      value: expect.objectContaining({ version: "2.0.0", sequence: 20n }),
    });
  });
});
