/**
 * Every migration, in order. Listed explicitly (not discovered from disk) so Control runs
 * the same schema from TypeScript sources or a bundle. Never edit a migration that has
 * landed: add the next one.
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
import { Migration0019NodeTrust } from "./0019-node-trust.js";

/** The migrations applied at start, oldest first. */
export const MIGRATIONS: MigrationObject[] = [
  { name: "0001-foundation", class: Migration0001Foundation },
  { name: "0002-releases", class: Migration0002Releases },
  { name: "0003-campaigns", class: Migration0003Campaigns },
  { name: "0004-artifact-storage", class: Migration0004ArtifactStorage },
  { name: "0005-enrollment-scope", class: Migration0005EnrollmentScope },
  { name: "0006-active-active", class: Migration0006ActiveActive },
  { name: "0007-report-boot-id", class: Migration0007ReportBootId },
  { name: "0008-gate-results", class: Migration0008GateResults },
  { name: "0010-desired-versions", class: Migration0010DesiredVersions },
  { name: "0011-rollout-plans", class: Migration0011RolloutPlans },
  { name: "0012-enrollment-key", class: Migration0012EnrollmentKey },
  { name: "0013-in-flight-index", class: Migration0013InFlightIndex },
  { name: "0014-enrollment-trust", class: Migration0014EnrollmentTrust },
  { name: "0015-command-gate", class: Migration0015CommandGate },
  { name: "0016-release-yank", class: Migration0016ReleaseYank },
  { name: "0017-fleet-settings", class: Migration0017FleetSettings },
  { name: "0019-node-trust", class: Migration0019NodeTrust },
];
