/**
 * The dashboard: the sign-in form until a token is known (typed, or from `#token=…`), then
 * the pages, with the token's role deciding whether operators' buttons show.
 */
import { html } from "htm/preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { createApi, describeError, isUnauthenticated } from "../api.js";
import { type Role, roleOf } from "../role.js";
import { type Session, SessionContext } from "../session.js";
import { forgetToken, savedToken, saveToken, takeTokenFromFragment } from "../token.js";
import { Layout } from "./layout.js";
import { Login } from "./login.js";

/** The whole application. */
export function App() {
  const [token, setToken] = useState(() => takeTokenFromFragment() ?? savedToken());
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [role, setRole] = useState<Role | undefined>(undefined);
  const api = useMemo(() => (token ? createApi(token) : undefined), [token]);
  const signOut = (reason?: string) => {
    forgetToken();
    setRole(undefined);
    setToken(undefined);
    setNotice(reason);
  };
  useEffect(() => {
    if (!api) return;
    let current = true;
    roleOf(api).then(
      (found) => current && setRole(found),
      (error: unknown) => {
        if (!current) return;
        if (isUnauthenticated(error)) signOut(`Control refused the token: ${describeError(error)}`);
        else setNotice(`Could not reach Control: ${describeError(error)}`);
      },
    );
    return () => {
      current = false;
    };
  }, [api]);

  if (!api) {
    return html`<${Login}
      notice=${notice}
      onToken=${(typed: string) => {
        saveToken(typed);
        setNotice(undefined);
        setToken(typed);
      }}
    />`;
  }
  if (!role) {
    return html`<main class="centered"><p class="muted">${notice ?? "Checking the token…"}</p></main>`;
  }
  const session: Session = { api, role, signOut };
  return html`<${SessionContext.Provider} value=${session}><${Layout} /><//>`;
}
