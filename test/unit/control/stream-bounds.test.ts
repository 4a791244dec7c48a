/**
 * The bounds on what one agent stream and one credential may cost Control: the byte budget per
 * stream beside the message rate, and the handshakes in progress per credential, with the
 * configuration keys that set them.
 */
import { describe, expect, it } from "vitest";
import type { StreamIdentity } from "../../../control/agents/authenticate.js";
import {
  CredentialSlots,
  credentialKey,
  joinTokenHandshakes,
} from "../../../control/agents/credential-slots.js";
import { InboundBudget, withWireBytes } from "../../../control/agents/inbound-budget.js";
import { ConfigError, loadConfig } from "../../../control/config.js";

const message = (bytes: number) => withWireBytes({}, bytes);

function problemsOf(limits: Record<string, unknown>): readonly string[] {
  try {
    loadConfig({ env: {}, overrides: { limits } });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe("the byte budget of an agent stream", () => {
  const bytes = { bytesPerSecond: 1000, burstBytes: 4000 };

  it("accepts a burst up to its size, then refuses the next byte over it, naming the keys", () => {
    const budget = new InboundBudget(1000, bytes, 0);
    expect(budget.admit(message(4000), 0)).toBeUndefined();
    const refusal = budget.admit(message(1), 0);
    expect(refusal).toMatch(/byte rate limit exceeded/);
    expect(refusal).toMatch(/limits\.agentStreamBytesPerSecond/);
  });

  it("refills at the byte rate on the clock it is given", () => {
    const budget = new InboundBudget(1000, bytes, 0);
    expect(budget.admit(message(4000), 0)).toBeUndefined();
    expect(budget.admit(message(500), 499)).toBeDefined();
    const later = new InboundBudget(1000, bytes, 0);
    expect(later.admit(message(4000), 0)).toBeUndefined();
    expect(later.admit(message(500), 500)).toBeUndefined();
    // A steady sender at the rate is never refused, however long it sends.
    for (let t = 1000; t < 60_000; t += 100) expect(later.admit(message(100), t)).toBeUndefined();
  });

  it("never grants a message larger than the burst", () => {
    const budget = new InboundBudget(1000, bytes, 0);
    expect(budget.admit(message(4001), 1_000_000)).toMatch(/byte rate limit/);
  });

  it("charges nothing for a message without a wire size, and keeps the message rate", () => {
    const budget = new InboundBudget(10, bytes, 0);
    for (let i = 0; i < 20; i += 1) expect(budget.admit({}, 0)).toBeUndefined();
    expect(budget.admit({}, 0)).toBe("message rate limit exceeded");
  });

  it("limits no bytes when it has no byte budget", () => {
    const budget = new InboundBudget(1000, undefined, 0);
    expect(budget.admit(message(10_000_000), 0)).toBeUndefined();
  });
});

describe("handshakes per credential", () => {
  it.each<[string, StreamIdentity, string]>([
    [
      "a join token by its id",
      { kind: "join", joinTokenId: "tok1", scope: { nodeIds: [], allowReenroll: false } },
      "ajt:tok1",
    ],
    ["a node token by its node", { kind: "node", nodeId: "node-1" }, "ant:node-1"],
    [
      "a client certificate by fingerprint",
      {
        kind: "certificate",
        nodeId: "node-1",
        certificate: { fingerprint: "AB:CD", expiresAt: new Date(0) },
      },
      "certificate:AB:CD",
    ],
  ])("counts %s, as authentication verified it", (_, identity, key) => {
    expect(credentialKey(identity)).toBe(key);
  });

  it("holds at most its limit per key, others unaffected, and forgets a key with none", () => {
    const slots = new CredentialSlots(2);
    expect(slots.tryAcquire("a")).toBe(true);
    expect(slots.tryAcquire("a")).toBe(true);
    expect(slots.tryAcquire("a")).toBe(false);
    expect(slots.tryAcquire("b")).toBe(true);
    expect(slots.held("a")).toBe(2);
    slots.release("a");
    expect(slots.tryAcquire("a")).toBe(true);
    slots.release("a");
    slots.release("a");
    slots.release("b");
    expect(slots.keys).toBe(0);
    slots.release("a");
    expect(slots.held("a")).toBe(0);
  });

  it("lets a join token hold more, up to half of the admission's floor, and never fewer", () => {
    expect(joinTokenHandshakes(4, 64)).toBe(32);
    expect(joinTokenHandshakes(4, 8)).toBe(4);
    expect(joinTokenHandshakes(2, 4)).toBe(2);
    expect(joinTokenHandshakes(1, 64)).toBe(8);
    const slots = new CredentialSlots(2, 5);
    for (let i = 0; i < 5; i++) expect(slots.tryAcquire("ajt:fleet")).toBe(true);
    expect(slots.tryAcquire("ajt:fleet")).toBe(false);
    expect(slots.tryAcquire("ant:node-1")).toBe(true);
    expect(slots.tryAcquire("ant:node-1")).toBe(true);
    expect(slots.tryAcquire("ant:node-1")).toBe(false);
  });

  it("refuses a limit below one", () => {
    expect(() => new CredentialSlots(0)).toThrow(RangeError);
  });
});

describe("the configuration of these bounds", () => {
  it("defaults to 16 KiB/s in bursts of 256 KiB, and four handshakes per credential", () => {
    const { limits } = loadConfig({ env: {} });
    expect(limits.agentStreamBytesPerSecond).toBe(16384);
    expect(limits.agentStreamBurstBytes).toBe(262144);
    expect(limits.handshakesPerCredential).toBe(4);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ agentStreamBytesPerSecond: 0 }, "limits.agentStreamBytesPerSecond"],
    [{ agentStreamBytesPerSecond: "fast" }, "limits.agentStreamBytesPerSecond"],
    [{ agentStreamBurstBytes: 1.5 }, "limits.agentStreamBurstBytes"],
    [
      { agentStreamBurstBytes: 32768, maxAgentMessageBytes: 65536 },
      "limits.agentStreamBurstBytes (32768) must be at least limits.maxAgentMessageBytes (65536)",
    ],
    [{ handshakesPerCredential: 0 }, "limits.handshakesPerCredential"],
  ])("refuses %j with one problem naming it", (limits, named) => {
    const problems = problemsOf(limits);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(named);
  });
});
