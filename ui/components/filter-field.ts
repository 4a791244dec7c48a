/** A labelled text or select field of a filter bar. */
import { html } from "htm/preact";

/** Props of {@link FilterField}. */
export interface FilterFieldProps {
  readonly label: string;
  readonly name: string;
  readonly value: string;
  readonly onChange: (value: string) => void;
  /** Choices as `[value, label]`; a text field when absent. */
  readonly options?: readonly (readonly [string, string])[];
  readonly placeholder?: string;
}

/** One field; `onChange` runs as the user types or picks. */
export function FilterField({
  label,
  name,
  value,
  onChange,
  options,
  placeholder = "",
}: FilterFieldProps) {
  const changed = (e: Event) => onChange((e.currentTarget as HTMLInputElement).value);
  const input = options
    ? html`<select name=${name} value=${value} onChange=${changed}>
        ${options.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
      </select>`
    : html`<input name=${name} value=${value} placeholder=${placeholder} onInput=${changed} />`;
  return html`<label class="field"><span>${label}</span>${input}</label>`;
}
