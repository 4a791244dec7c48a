/**
 * What the token may do, so the dashboard shows an operator's buttons only to operators. The
 * admin API's role table is the only authority (a viewer who forged a button would still be
 * refused); this asks it through a read-only RPC that needs the operator role.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { Api } from "./api.js";

/** The roles of admin tokens, least first. */
export type Role = "viewer" | "operator";

/**
 * The token's role: `operator` when it may list join tokens (an operator-only read that
 * changes nothing), `viewer` when Control answers permission denied.
 * @throws the call's error when it fails for another reason (unknown token, network)
 */
export async function roleOf(api: Api): Promise<Role> {
  try {
    await api.nodes.listJoinTokens({});
    return "operator";
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.PermissionDenied) return "viewer";
    throw error;
  }
}
