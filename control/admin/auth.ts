/**
 * Admin API authentication and authorisation: bearer tokens with roles (and optionally an
 * expiry), the table of tokens in force (replaceable while Control runs), and one table that
 * decides, for every RPC, the least role allowed to call it.
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createContextKey, type Interceptor } from "@connectrpc/connect";
import { OPERATOR_TOKEN_NAME } from "../admin-token-list.js";
import { bearerToken, digestsEqual, newSecret, sha256OfText } from "../auth/secrets.js";
import type { Clock } from "../clock.js";
import type { AdminRole, ConfiguredAdminToken } from "../config-reader.js";
import { ControlError, toConnectError } from "../errors.js";

/** Who called: the token's name and role, and the client's address. */
export interface Principal {
  readonly name: string;
  readonly role: AdminRole;
  readonly ip: string;
}

/** Carries the authenticated {@link Principal} from the interceptor to the handlers. */
export const principalKey = createContextKey<Principal | undefined>(undefined, {
  description: "authenticated admin principal",
});

const RANK: Record<AdminRole, number> = { viewer: 1, operator: 2 };

/**
 * The least role allowed to call each RPC, by `Service/Method`. An RPC missing here is
 * refused to everyone, so a new RPC cannot ship unguarded.
 */
export const METHOD_ROLES: Readonly<Record<string, AdminRole>> = {
  "agentcontrol.admin.v1.NodeService/ListNodes": "viewer",
  "agentcontrol.admin.v1.NodeService/GetNode": "viewer",
  "agentcontrol.admin.v1.NodeService/DisableNode": "operator",
  "agentcontrol.admin.v1.NodeService/EnableNode": "operator",
  "agentcontrol.admin.v1.NodeService/ResetNode": "operator",
  "agentcontrol.admin.v1.NodeService/LabelNode": "operator",
  "agentcontrol.admin.v1.NodeService/LabelNodes": "operator",
  "agentcontrol.admin.v1.NodeService/RevokeNode": "operator",
  "agentcontrol.admin.v1.NodeService/ApproveNode": "operator",
  "agentcontrol.admin.v1.NodeService/CreateJoinToken": "operator",
  "agentcontrol.admin.v1.NodeService/ListJoinTokens": "operator",
  "agentcontrol.admin.v1.NodeService/RevokeJoinToken": "operator",
  "agentcontrol.admin.v1.ReleaseService/RegisterRelease": "operator",
  "agentcontrol.admin.v1.ReleaseService/PruneReleases": "operator",
  "agentcontrol.admin.v1.ReleaseService/ListReleases": "viewer",
  "agentcontrol.admin.v1.ReleaseService/GetRelease": "viewer",
  "agentcontrol.admin.v1.ReleaseService/YankRelease": "operator",
  "agentcontrol.admin.v1.CampaignService/PlanCampaign": "viewer",
  "agentcontrol.admin.v1.CampaignService/StartCampaign": "operator",
  "agentcontrol.admin.v1.CampaignService/ListCampaigns": "viewer",
  "agentcontrol.admin.v1.CampaignService/GetCampaign": "viewer",
  "agentcontrol.admin.v1.CampaignService/ListCampaignNodes": "viewer",
  "agentcontrol.admin.v1.CampaignService/PauseCampaign": "operator",
  "agentcontrol.admin.v1.CampaignService/ResumeCampaign": "operator",
  "agentcontrol.admin.v1.CampaignService/AbortCampaign": "operator",
  "agentcontrol.admin.v1.CampaignService/RetryCampaign": "operator",
  "agentcontrol.admin.v1.CampaignService/WatchCampaign": "viewer",
  "agentcontrol.admin.v1.CampaignService/SkipGate": "operator",
  "agentcontrol.admin.v1.CampaignWaitsService/GetCampaignWaits": "viewer",
  "agentcontrol.admin.v1.AuditService/ListAuditEvents": "viewer",
  "agentcontrol.admin.v1.VersionService/GetVersion": "viewer",
  "agentcontrol.admin.v1.DesiredVersionService/ListDesiredVersions": "viewer",
  "agentcontrol.admin.v1.DesiredVersionService/SetDesiredVersion": "operator",
  "agentcontrol.admin.v1.DesiredVersionService/ClearDesiredVersion": "operator",
  "agentcontrol.admin.v1.PlanService/StartPlan": "operator",
  "agentcontrol.admin.v1.PlanService/GetPlan": "viewer",
  "agentcontrol.admin.v1.PlanService/ListPlans": "viewer",
  "agentcontrol.admin.v1.PlanService/AbortPlan": "operator",
  "agentcontrol.admin.v1.FleetService/GetFleetSummary": "viewer",
};

/** A known admin token: its hash, the principal it stands for, and when it stops working. */
export interface TokenEntry {
  readonly sha256: string;
  /** The token's configured name: the actor of what it does in the audit log. */
  readonly name: string;
  readonly role: AdminRole;
  /** Refused from this instant on ("token expired"); undefined or absent: never. */
  readonly expires?: Date | undefined;
}

/** Finds the entry whose hash matches `token`, comparing every entry in constant time. */
export function matchToken(token: string, entries: readonly TokenEntry[]): TokenEntry | undefined {
  const digest = sha256OfText(token);
  let found: TokenEntry | undefined;
  for (const entry of entries) {
    if (digestsEqual(digest, entry.sha256) && !found) found = entry;
  }
  return found;
}

/** The client's address, set per request by the HTTP adapter. */
export const peerKey = createContextKey<string>("", { description: "client address" });

/**
 * Who the bearer token in `authorization` (an `authorization` header value) is: the one
 * token check of the admin API, behind {@link authorizeCall}. `entries` is read now, so a
 * table replaced in place ({@link AdminTokenTable}) applies from the next call on.
 * @returns the matching entry (its `name` is the actor the audit log records)
 * @throws ConnectError `unauthenticated`: no bearer token, an unknown token, or one whose
 *   `expires` is at or before `now` ("token expired at …")
 */
export function authenticate(
  authorization: string | undefined,
  entries: readonly TokenEntry[],
  now: Date,
): TokenEntry {
  const token = bearerToken(authorization);
  if (!token) {
    throw toConnectError(
      new ControlError(
        "unauthenticated",
        "missing bearer token: send 'authorization: Bearer <admin token>'",
      ),
    );
  }
  const entry = matchToken(token, entries);
  if (!entry) throw toConnectError(new ControlError("unauthenticated", "unknown admin token"));
  if (entry.expires !== undefined && entry.expires.getTime() <= now.getTime()) {
    throw toConnectError(
      new ControlError(
        "unauthenticated",
        `token expired at ${entry.expires.toISOString()}: ask for a new admin token`,
      ),
    );
  }
  return entry;
}

/**
 * Decides whether the bearer token in `authorization` may call `method` (`Service/Method`):
 * the one check behind both the interceptor and the admin server's header-time guard
 * (control/admin/request-guard.ts), which runs it before a byte of the body is read.
 * {@link authenticate} says who the token is, then {@link METHOD_ROLES} whether its role may.
 * @returns the token's entry
 * @throws ConnectError `unauthenticated` (no, unknown or expired token) or `permission_denied`
 */
export function authorizeCall(
  method: string,
  authorization: string | undefined,
  entries: readonly TokenEntry[],
  now: Date,
): TokenEntry {
  const required = METHOD_ROLES[method];
  const entry = authenticate(authorization, entries, now);
  if (!required || RANK[entry.role] < RANK[required]) {
    const name = method.split("/").at(-1) ?? method;
    throw toConnectError(
      new ControlError(
        "permission_denied",
        `role ${entry.role} may not call ${name}${required ? ` (needs ${required})` : ""}`,
        { method: name, role: entry.role, ...(required ? { requiredRole: required } : {}) },
      ),
    );
  }
  return entry;
}

/**
 * The admin tokens in force while Control runs. {@link AdminTokenTable.entries} is a live,
 * read-only view that the admin server's guard and interceptor read on every call;
 * {@link AdminTokenTable.replace} swaps its contents in one step (SIGHUP re-reading the
 * tokens file), so the next call is judged by the new tokens while calls and streams
 * already authenticated go on.
 */
export class AdminTokenTable {
  readonly #entries: TokenEntry[];

  constructor(entries: readonly TokenEntry[]) {
    this.#entries = [...entries];
  }

  /** The tokens in force now; the same array for the table's whole life. */
  get entries(): readonly TokenEntry[] {
    return this.#entries;
  }

  /** Puts `entries` in force, all at once. */
  replace(entries: readonly TokenEntry[]): void {
    this.#entries.splice(0, this.#entries.length, ...entries);
  }
}

/**
 * Builds the Connect interceptor that authenticates and authorises every call, judging a
 * token's expiry at `clock`'s time.
 */
export function authInterceptor(entries: readonly TokenEntry[], clock: Clock): Interceptor {
  return (next) => async (req) => {
    const entry = authorizeCall(
      `${req.service.typeName}/${req.method.name}`,
      req.header.get("authorization") ?? undefined,
      entries,
      clock.now(),
    );
    req.contextValues.set(principalKey, {
      name: entry.name,
      role: entry.role,
      ip: req.contextValues.get(peerKey),
    });
    return await next(req);
  };
}

/**
 * The operator token: `AGENT_CONTROL_ADMIN_TOKEN` when set, otherwise the one generated on
 * first start into `<dataDir>/admin-token` (mode 0600), which agentctl on the same machine
 * reads.
 */
export async function resolveOperatorToken(
  configured: string | undefined,
  dataDir: string,
): Promise<{ token: string; source: "env" | "file" | "generated"; path: string }> {
  const path = join(dataDir, "admin-token");
  if (configured) return { token: configured, source: "env", path };
  try {
    const existing = (await readFile(path, "utf8")).trim();
    if (existing.length >= 16) return { token: existing, source: "file", path };
  } catch {
    // Not there yet: generate below.
  }
  await mkdir(dataDir, { recursive: true });
  const token = `aat_${newSecret()}`;
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return { token, source: "generated", path };
}

/** The token table: the operator token (named "admin", never expiring) plus those configured. */
export function tokenEntries(
  operatorToken: string,
  configured: readonly ConfiguredAdminToken[],
): TokenEntry[] {
  return [
    { sha256: sha256OfText(operatorToken), name: OPERATOR_TOKEN_NAME, role: "operator" },
    ...configured.map((t) => ({
      sha256: t.sha256,
      name: t.name,
      role: t.role,
      expires: t.expires,
    })),
  ];
}
