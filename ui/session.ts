/**
 * The signed-in session every page reads: the admin API bound to the token, the token's
 * role, and how to sign out (also when Control stops accepting the token).
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Api } from "./api.js";
import type { Role } from "./role.js";

/** The signed-in session. */
export interface Session {
  readonly api: Api;
  readonly role: Role;
  /** Forgets the token and shows the sign-in form, with `reason` when there is one. */
  readonly signOut: (reason?: string) => void;
}

/** Provided by the application once the token's role is known. */
export const SessionContext = createContext<Session | undefined>(undefined);

/** The session of a signed-in page. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in page");
  return session;
}
