/**
 * `agentcontrol.admin.v1.ReleaseService`: register, list, read, yank and prune signed
 * releases.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { ReleaseEntity, type ReleaseRecord } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import { DEFAULT_PRUNE_KEEP, pruneReleases, storedFiles } from "../releases/prune.js";
import { type ReleaseRegistryDeps, registerRelease } from "../releases/registry.js";
import { yankRelease } from "../releases/yank.js";
import { type Principal, principalKey } from "./auth.js";
import { releaseMessage } from "./convert.js";
import { decodePageToken, encodePageToken, pageSize } from "./paging.js";

/** Dependencies of the release service. */
export interface ReleaseServiceDeps extends ReleaseRegistryDeps {
  /** Base URL agents use for files Control serves. */
  readonly publicUrl: () => string;
}

/** The artifacts Control serves of `records` whose bytes it still stores. */
function storedOf(deps: ReleaseServiceDeps, records: readonly ReleaseRecord[]) {
  return storedFiles(
    deps.db,
    records.flatMap((r) => r.artifacts.filter((a) => a.url === "").map((a) => a.sha256)),
  );
}

/** The most releases one prune keeps for their age. */
const MAX_PRUNE_KEEP = 10_000;

/** Builds the ReleaseService implementation. */
export function createReleaseService(deps: ReleaseServiceDeps): ServiceImpl<typeof ReleaseService> {
  return {
    async pruneReleases(req, ctx) {
      const principal = ctx.values.get(principalKey) as Principal;
      const keep = req.keep ?? DEFAULT_PRUNE_KEEP;
      if (keep > MAX_PRUNE_KEEP) {
        throw new ControlError("invalid_argument", `keep must be at most ${MAX_PRUNE_KEEP}`, {
          field: "keep",
        });
      }
      const outcome = await pruneReleases(deps, { keep, dryRun: req.dryRun, actor: principal });
      return {
        pruned: outcome.pruned.map((p) => ({
          version: p.version,
          sequence: BigInt(p.sequence),
          yanked: p.yanked,
          freedBytes: BigInt(p.freedBytes),
        })),
        kept: outcome.kept.map((k) => ({ version: k.version, reason: k.reason })),
        freedBytes: BigInt(outcome.freedBytes),
        dryRun: req.dryRun,
      };
    },

    async registerRelease(req, ctx) {
      const principal = ctx.values.get(principalKey) as Principal;
      const files = new Map<string, Uint8Array>();
      for (const file of req.artifacts) {
        if (files.has(file.platform)) {
          throw new ControlError("invalid_argument", `two files uploaded for ${file.platform}`, {
            field: "artifacts",
          });
        }
        files.set(file.platform, file.content);
      }
      const { record, created } = await registerRelease(deps, {
        envelope: req.envelope,
        files,
        actor: principal,
      });
      return { release: releaseMessage(record, deps.publicUrl()), created };
    },

    async listReleases(req) {
      const limit = pageSize(req.pageSize);
      const after = decodePageToken(req.pageToken);
      const rows = await deps.db
        .em()
        .find(ReleaseEntity, after === undefined ? {} : { sequence: { $lt: Number(after) } }, {
          orderBy: { sequence: "desc" },
          limit: limit + 1,
        });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const stored = await storedOf(deps, page);
      return {
        releases: page.map((r) => releaseMessage(r, deps.publicUrl(), stored)),
        nextPageToken: rows.length > limit && last ? encodePageToken(String(last.sequence)) : "",
      };
    },

    async yankRelease(req, ctx) {
      const principal = ctx.values.get(principalKey) as Principal;
      const outcome = await yankRelease(deps, {
        version: req.version,
        reason: req.reason,
        actor: principal,
      });
      return {
        release: releaseMessage(outcome.record, deps.publicUrl()),
        yanked: outcome.yanked,
        campaignIds: [...outcome.campaignIds],
      };
    },

    async getRelease(req) {
      const record = await deps.db
        .em()
        .findOne(ReleaseEntity, { version: req.version }, { populate: ["envelope"] });
      if (!record)
        throw new ControlError("release_not_found", `no release with version "${req.version}"`);
      const stored = await storedOf(deps, [record]);
      return {
        release: releaseMessage(record, deps.publicUrl(), stored),
        envelope: record.envelope,
      };
    },
  };
}
