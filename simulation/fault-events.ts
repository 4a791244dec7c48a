/**
 * The scenario's faults, as events on the world's queue: a Control crash (the leader dies, its
 * database session and every agent stream with it, and a new process starts after a while), a
 * lost lease, and a database outage for a while.
 */
import { WORKER_LEASE } from "../control/campaign-store/index.js";
import type { SimWorld } from "./sim-world.js";

/** Schedules each of the scenario's faults on `world`'s queue at its time. */
export function scheduleFaults(world: SimWorld): void {
  const { scenario, clock, store, queue, fleet, controls, startControl, say } = world;
  for (const fault of scenario.faults) {
    queue.at(fault.at, () => {
      switch (fault.kind) {
        case "crash": {
          const leader = controls.killLeader();
          if (leader === undefined) return;
          store.endSession(leader.holder);
          fleet.dropAll();
          say(`FAULT ${leader.holder} killed; a new process starts in ${fault.downMs} ms`);
          queue.at(clock.ms + fault.downMs, startControl);
          return;
        }
        case "lease_loss": {
          const row = store.tables.leases.get(WORKER_LEASE);
          if (row === undefined) return;
          row.holder = "someone-else";
          row.expiresAt = clock.ms - 1;
          say("FAULT the lease is lost");
          controls.kick();
          return;
        }
        case "outage":
          store.outage(true);
          say(`FAULT the database is unreachable for ${fault.durationMs} ms`);
          queue.at(clock.ms + fault.durationMs, () => {
            store.outage(false);
            say("the database is back");
            controls.kick();
          });
          return;
      }
    });
  }
}
