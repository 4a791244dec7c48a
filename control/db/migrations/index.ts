/**
 * Every migration, in order, each with the schema release that added it. Listed explicitly
 * (not discovered from disk) so Control runs the same schema from TypeScript sources or a
 * bundle. Never edit a migration that has landed: add the next one. The rules (expand, then
 * contract one release later) are in this folder's README.md.
 */
import type { MigrationObject } from "@mikro-orm/core";
import { Migration0001Foundation } from "./0001-foundation.js";
import { Migration0002Releases } from "./0002-releases.js";
import { Migration0003Campaigns } from "./0003-campaigns.js";
import { Migration0004ArtifactStorage } from "./0004-artifact-storage.js";
import { Migration0005EnrollmentScope } from "./0005-enrollment-scope.js";
import { Migration0006ActiveActive } from "./0006-active-active.js";
import { Migration0007ReportBootId } from "./0007-report-boot-id.js";
import { Migration0008GateResults } from "./0008-gate-results.js";
import { Migration0010DesiredVersions } from "./0010-desired-versions.js";
import { Migration0011RolloutPlans } from "./0011-rollout-plans.js";
import { Migration0012EnrollmentKey } from "./0012-enrollment-key.js";
import { Migration0013InFlightIndex } from "./0013-in-flight-index.js";
import { Migration0014EnrollmentTrust } from "./0014-enrollment-trust.js";
import { Migration0015CommandGate } from "./0015-command-gate.js";
import { Migration0016ReleaseYank } from "./0016-release-yank.js";
import { Migration0017FleetSettings } from "./0017-fleet-settings.js";
import { Migration0018SchemaRelease } from "./0018-schema-release.js";
import { Migration0019NodeTrust } from "./0019-node-trust.js";
import { Migration0020OperationsHeadroom } from "./0020-operations-headroom.js";
import { Migration0021ReportOrder } from "./0021-report-order.js";
import { Migration0022SlotIndex } from "./0022-slot-index.js";
import { Migration0023EngineFeatures } from "./0023-engine-features.js";
import { Migration0024LeaseFeatures } from "./0024-lease-features.js";
import { Migration0025RollbackSlotIndex } from "./0025-rollback-slot-index.js";
import { Migration0026LateRollbackSlot } from "./0026-late-rollback-slot.js";

/**
 * A migration and the schema release that added it. Every migration a release adds carries
 * the same number, one above the previous release's; the list never goes back in release.
 */
export interface ReleasedMigration extends MigrationObject {
  readonly release: number;
}

/** The migrations applied at start, oldest first. */
export const MIGRATIONS: ReleasedMigration[] = [
  { name: "0001-foundation", class: Migration0001Foundation, release: 1 },
  { name: "0002-releases", class: Migration0002Releases, release: 1 },
  { name: "0003-campaigns", class: Migration0003Campaigns, release: 1 },
  { name: "0004-artifact-storage", class: Migration0004ArtifactStorage, release: 1 },
  { name: "0005-enrollment-scope", class: Migration0005EnrollmentScope, release: 1 },
  { name: "0006-active-active", class: Migration0006ActiveActive, release: 1 },
  { name: "0007-report-boot-id", class: Migration0007ReportBootId, release: 1 },
  { name: "0008-gate-results", class: Migration0008GateResults, release: 1 },
  { name: "0010-desired-versions", class: Migration0010DesiredVersions, release: 1 },
  { name: "0011-rollout-plans", class: Migration0011RolloutPlans, release: 1 },
  { name: "0012-enrollment-key", class: Migration0012EnrollmentKey, release: 1 },
  { name: "0013-in-flight-index", class: Migration0013InFlightIndex, release: 1 },
  { name: "0014-enrollment-trust", class: Migration0014EnrollmentTrust, release: 1 },
  { name: "0015-command-gate", class: Migration0015CommandGate, release: 1 },
  { name: "0016-release-yank", class: Migration0016ReleaseYank, release: 1 },
  { name: "0017-fleet-settings", class: Migration0017FleetSettings, release: 1 },
  { name: "0018-schema-release", class: Migration0018SchemaRelease, release: 2 },
  { name: "0019-node-trust", class: Migration0019NodeTrust, release: 2 },
  { name: "0020-operations-headroom", class: Migration0020OperationsHeadroom, release: 2 },
  { name: "0021-report-order", class: Migration0021ReportOrder, release: 2 },
  { name: "0022-slot-index", class: Migration0022SlotIndex, release: 2 },
  { name: "0023-engine-features", class: Migration0023EngineFeatures, release: 2 },
  { name: "0024-lease-features", class: Migration0024LeaseFeatures, release: 2 },
  { name: "0025-rollback-slot-index", class: Migration0025RollbackSlotIndex, release: 2 },
  { name: "0026-late-rollback-slot", class: Migration0026LateRollbackSlot, release: 2 },
];
