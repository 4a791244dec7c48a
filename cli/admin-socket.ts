/**
 * The admin Unix socket of a Control on this machine, the only place agentctl sends the
 * operator token it reads from a data directory (security review finding 6): a TCP port on
 * loopback may be bound by any local user while Control is down; the socket's directory only
 * Control's user may write. This module finds the socket and checks it before anything is sent.
 */
import { lstatSync } from "node:fs";
import { dirname } from "node:path";
import { adminSocketOf, readAdminEndpoint } from "../control/shared/local-endpoint.js";

/** What {@link checkAdminSocket} found. */
export type AdminSocketCheck =
  | { readonly kind: "ok" }
  | { readonly kind: "absent" }
  | { readonly kind: "untrusted"; readonly why: string };

/**
 * The admin socket of the Control whose data directory is `dataDir`: the one its note
 * (`admin-endpoint.json`) names, else the default `<dataDir>/control-run/admin.sock`.
 */
export function localAdminSocket(dataDir: string): string {
  return readAdminEndpoint(dataDir)?.socket ?? adminSocketOf(dataDir);
}

/**
 * Whether the socket at `path` may be sent the token of a file owned by `ownerUid`: a socket
 * of that user, in a directory of that user (or root) that no group or other user may write,
 * so no other local user can have put it there. Absent when nothing is at `path`.
 */
export function checkAdminSocket(path: string, ownerUid: number): AdminSocketCheck {
  let dir: ReturnType<typeof lstatSync>;
  let socket: ReturnType<typeof lstatSync>;
  try {
    dir = lstatSync(dirname(path));
    socket = lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "absent" };
    return { kind: "untrusted", why: `${path} cannot be checked (${code ?? String(error)})` };
  }
  if (!socket.isSocket()) return { kind: "untrusted", why: `${path} is not a socket` };
  if (!dir.isDirectory()) {
    return { kind: "untrusted", why: `${dirname(path)} is not a directory` };
  }
  if (dir.uid !== ownerUid && dir.uid !== 0) {
    return {
      kind: "untrusted",
      why: `${dirname(path)} belongs to uid ${dir.uid}, not to the token file's owner (uid ${ownerUid})`,
    };
  }
  if ((Number(dir.mode) & 0o022) !== 0) {
    return {
      kind: "untrusted",
      why: `${dirname(path)} may be written by other users (mode 0${(Number(dir.mode) & 0o777).toString(8)})`,
    };
  }
  if (socket.uid !== ownerUid) {
    return {
      kind: "untrusted",
      why: `${path} belongs to uid ${socket.uid}, not to the token file's owner (uid ${ownerUid})`,
    };
  }
  return { kind: "ok" };
}

/**
 * The line agentctl prints when nothing answers on the admin socket of `dataDir`: no Control
 * runs there, and the local token file goes nowhere else.
 */
export function noControlLine(dataDir: string, socketPath: string, tokenFile: string): string {
  return `no Control is running with the data directory ${dataDir}: nothing answers on its admin socket ${socketPath} (the token in ${tokenFile} is sent there only); for a Control elsewhere or over TCP, pass its token with --token or AGENTCTL_TOKEN`;
}
