/**
 * The memory adapter of the campaign store contract: the store unit tests and the
 * deterministic simulation run on, a new one per test on a manual clock at T0.
 */
import { MemoryCampaignStore } from "../../../control/campaign-store/index.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { parseEnvelope } from "../../../control/shared/release/index.js";
import { T0 } from "./builders.js";
import type { Adapter } from "./fixture.js";

/** The memory store; `fresh` makes a new, empty one on a manual clock at T0. */
export function memoryAdapter(): Adapter {
  return {
    name: "memory",
    async open() {},
    async close() {},
    async fresh() {
      const store = new MemoryCampaignStore(new ManualClock(T0));
      const t = store.tables;
      return {
        store,
        async putNode(row) {
          store.putNode(row);
        },
        async helloOn(nodeId, version) {
          const row = t.registry.get(nodeId);
          if (row !== undefined) t.registry.set(nodeId, { ...row, agent_version: version });
        },
        async confirmedSequence(nodeId) {
          const row = t.registry.get(nodeId);
          return row === undefined ? undefined : (row.confirmed_sequence ?? 0);
        },
        async putRelease(r) {
          t.releases.set(r.version, {
            version: r.version,
            sequence: r.sequence,
            envelope: parseEnvelope(r.envelope),
            artifacts: r.artifacts,
            expiresAt: r.expiresAt,
          });
        },
        async yankRelease(version, reason, when, by) {
          store.yankRelease({ version, reason, at: when.getTime(), by });
        },
        async addCommand(campaignId, kind, rollback) {
          return t.addCommand({
            campaignId,
            kind,
            rollback,
            reason: `${kind} please`,
            actor: "operator",
            actor_ip: "10.0.0.1",
          });
        },
        async endSession(holder) {
          store.endSession(holder);
        },
        async untilLeaseWaits() {
          for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
        },
        async operation(id) {
          const o = t.operations.get(id);
          return o === undefined
            ? undefined
            : { acked_at: o.ackedAt, last_sent_at: o.lastSentAt, send_count: o.sendCount };
        },
        async command(id) {
          const c = t.commands.find((x) => x.id === id);
          return c === undefined ? undefined : { applied_at: c.appliedAt, outcome: c.outcome };
        },
        async audits(campaignId) {
          return t.audits
            .filter((a) => a.campaignId === campaignId)
            .map((a) => ({ action: a.action, actor: a.actor, message: a.message, time: a.time }));
        },
      };
    },
  };
}
