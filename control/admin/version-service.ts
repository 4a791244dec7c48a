/**
 * `agentcontrol.admin.v1.VersionService`: which Control answers, and on what runtime. Read
 * once at start (the build does not change while Control runs).
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { VersionService } from "../../proto/gen/agentcontrol/admin/v1/version_pb.js";
import { buildInfo } from "../metrics/build-info.js";

/** Dependencies of the version service. */
export interface VersionServiceDeps {
  /** This Control's instance id (as in node list -o wide's CONTROL column). */
  readonly instanceId: string;
}

/** Builds the VersionService implementation; every answer is the same for this process. */
export function createVersionService(deps: VersionServiceDeps): ServiceImpl<typeof VersionService> {
  const info = buildInfo();
  const answer = {
    version: info.version,
    nodeVersion: info.nodeVersion,
    platform: `${process.platform}-${process.arch}`,
    instanceId: deps.instanceId,
  };
  return {
    getVersion() {
      return answer;
    },
  };
}
