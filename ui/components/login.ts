/**
 * The sign-in form: an admin token typed or pasted, kept in this tab only. `agentctl ui`
 * prints a link that signs in without it.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";

/** Props of {@link Login}. */
export interface LoginProps {
  /** Why the form is shown again (a refused token), if it is. */
  readonly notice: string | undefined;
  readonly onToken: (token: string) => void;
}

/** The sign-in form. */
export function Login({ notice, onToken }: LoginProps) {
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    const token = value.trim();
    if (token === "" || /\s/.test(token)) {
      setProblem("An admin token is one word of printable characters.");
      return;
    }
    onToken(token);
  };
  return html`<main class="centered">
    <form class="login" onSubmit=${submit}>
      <h1>Agent Control</h1>
      <label for="token">Admin token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="off"
        spellcheck=${false}
        value=${value}
        onInput=${(e: Event) => setValue((e.currentTarget as HTMLInputElement).value)}
      />
      <button type="submit">Sign in</button>
      ${(problem ?? notice) && html`<p class="error" role="alert">${problem ?? notice}</p>`}
      <p class="muted">
        The token stays in this browser tab. <code>agentctl ui</code> prints a link that signs in
        the local operator.
      </p>
    </form>
  </main>`;
}
