/**
 * Fleet-wide counts, for the CLI status line, the benchmark and test assertions.
 */
import type { SimulatedAgent } from "./agent.js";

/** A snapshot of the fleet. */
export interface FleetStats {
  agents: number;
  /** Meant to be connected (not offline / gone). */
  online: number;
  /** With an open stream. */
  connected: number;
  /** With a welcomed stream. */
  welcomed: number;
  /** Handling an upgrade. */
  upgrading: number;
  /** Between RESTARTING and the next start. */
  restarting: number;
  /** Agents per version they run. */
  versions: Record<string, number>;
  /** Streams opened since start, over all agents. */
  connects: number;
  /** Heartbeats sent, over all agents. */
  heartbeats: number;
  /** Redeliveries answered from memory (at-least-once delivery working as intended). */
  duplicatesIgnored: number;
  /** Operations applied more than once: must stay 0. */
  duplicateApplications: number;
  /** Artifact downloads actually made (the rest came from the shared cache). */
  downloads: number;
}

/** Counts `agents` now. */
export function fleetStats(agents: readonly SimulatedAgent[], downloads: number): FleetStats {
  const stats: FleetStats = {
    agents: agents.length,
    online: 0,
    connected: 0,
    welcomed: 0,
    upgrading: 0,
    restarting: 0,
    versions: {},
    connects: 0,
    heartbeats: 0,
    duplicatesIgnored: 0,
    duplicateApplications: 0,
    downloads,
  };
  for (const agent of agents) {
    if (agent.online) stats.online++;
    if (agent.connected) stats.connected++;
    if (agent.welcomed) stats.welcomed++;
    if (agent.busy) stats.upgrading++;
    if (agent.restarting) stats.restarting++;
    stats.versions[agent.version] = (stats.versions[agent.version] ?? 0) + 1;
    stats.connects += agent.connects;
    stats.heartbeats += agent.heartbeats;
    stats.duplicatesIgnored += agent.duplicates;
    stats.duplicateApplications += agent.duplicateApplications();
  }
  return stats;
}

/** One status line: `agents 50 · connected 48 · welcomed 48 · upgrading 2 · …`. */
export function formatStatusLine(stats: FleetStats): string {
  const versions = Object.entries(stats.versions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([version, n]) => `${version}:${n}`)
    .join(" ");
  return [
    `agents ${stats.agents}`,
    `connected ${stats.connected}`,
    `welcomed ${stats.welcomed}`,
    `upgrading ${stats.upgrading}`,
    `restarting ${stats.restarting}`,
    `offline ${stats.agents - stats.online}`,
    `versions ${versions || "-"}`,
  ].join(" · ");
}
