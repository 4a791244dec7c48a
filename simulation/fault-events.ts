/**
 * The scenario's faults, as events on the world's queue: a Control crash (the leader dies, its
 * database session and every agent stream with it, and a new process starts after a while), a
 * lost lease, and a database outage for a while.
 */
import { WORKER_LEASE } from "../control/campaign-store/index.js";
import type { SimWorld } from "./sim-world.js";

/**
 * Kills the leading Control (its database session and every agent stream go with it) and
 * starts a new process `downMs` later; nothing when no Control leads.
 */
export function crashLeader(world: SimWorld, downMs: number): void {
  const { clock, store, queue, fleet, controls, startControl, say } = world;
  const leader = controls.killLeader();
  if (leader === undefined) return;
  store.endSession(leader.holder);
  fleet.dropAll();
  say(`FAULT ${leader.holder} killed; a new process starts in ${downMs} ms`);
  queue.at(clock.ms + downMs, startControl);
}

/** The leader loses its lease (another holder took it and let it expire). */
export function loseLease(world: SimWorld): void {
  const { clock, store, controls, say } = world;
  const row = store.tables.leases.get(WORKER_LEASE);
  if (row === undefined) return;
  row.holder = "someone-else";
  row.expiresAt = clock.ms - 1;
  say("FAULT the lease is lost");
  controls.kick();
}

/** Schedules each of the scenario's faults on `world`'s queue at its time. */
export function scheduleFaults(world: SimWorld): void {
  const { scenario, clock, store, queue, controls, say } = world;
  for (const fault of scenario.faults) {
    queue.at(fault.at, () => {
      switch (fault.kind) {
        case "crash":
          crashLeader(world, fault.downMs);
          return;
        case "lease_loss":
          loseLease(world);
          return;
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

/**
 * Kills every running Control (Control is down: no process stands by), each with its database
 * session, and every agent stream; as many new processes start `downMs` later.
 */
export function crashAll(world: SimWorld, downMs: number): void {
  const { clock, store, queue, fleet, controls, startControl, say } = world;
  const killed: string[] = [];
  for (let c = controls.killLeader(); c !== undefined; c = controls.killLeader()) {
    store.endSession(c.holder);
    killed.push(c.holder);
  }
  if (killed.length === 0) return;
  fleet.dropAll();
  say(`FAULT ${killed.join(", ")} killed (Control down); new processes start in ${downMs} ms`);
  queue.at(clock.ms + downMs, () => {
    for (let k = 0; k < killed.length; k++) startControl();
  });
}

/**
 * Schedules each of the scenario's gate faults `afterMs` after its gate's first evaluation in
 * its batch (nothing when that gate is never evaluated there).
 */
export function scheduleGateFaults(world: SimWorld): void {
  for (const fault of world.scenario.gateFaults ?? []) {
    world.gates.onFirstAsk(fault.campaignId, fault.batch, fault.gate, (at) =>
      world.queue.at(at + fault.afterMs, () => {
        if (fault.kind === "down") crashAll(world, fault.downMs);
        else loseLease(world);
      }),
    );
  }
}
