/**
 * The fields of the start form, named and explained as `agentctl campaign start`'s flags
 * (`--version`, `--selector`, `--batches`, …): the common ones first, the rest under "More".
 * Each field says which flag it is; an empty field leaves Control's default. The target
 * version is chosen among the registered releases that are not yanked.
 */
import { html } from "htm/preact";
import type { SpecFields } from "../spec-form.js";

/** Props of {@link StartFormFields}. */
export interface StartFormFieldsProps {
  readonly fields: SpecFields;
  readonly onChange: (name: keyof SpecFields, value: string) => void;
  /** The field named by the last refusal, marked as invalid. */
  readonly invalid: keyof SpecFields | undefined;
  /** The versions a campaign may target (undefined while the releases load). */
  readonly versions: readonly string[] | undefined;
}

/** The form's inputs. */
export function StartFormFields({ fields, onChange, invalid, versions }: StartFormFieldsProps) {
  const input = (name: keyof SpecFields, label: string, flag: string, placeholder = "") =>
    html`<label class="field">
      <span>${label} <code>--${flag}</code></span>
      <input
        name=${name}
        value=${fields[name]}
        placeholder=${placeholder}
        aria-invalid=${invalid === name ? "true" : "false"}
        onInput=${(e: Event) => onChange(name, (e.target as HTMLInputElement).value)}
      />
    </label>`;
  const area = (name: keyof SpecFields, label: string, flag: string, placeholder: string) =>
    html`<label class="field wide">
      <span>${label} <code>--${flag}</code>, one per line</span>
      <textarea
        name=${name}
        rows="2"
        placeholder=${placeholder}
        aria-invalid=${invalid === name ? "true" : "false"}
        onInput=${(e: Event) => onChange(name, (e.target as HTMLTextAreaElement).value)}
      >${fields[name]}</textarea>
    </label>`;
  return html`<fieldset class="start-fields">
      <legend>What and where</legend>
      <label class="field">
        <span>Target version <code>--version</code></span>
        <select
          name="version"
          value=${fields.version}
          aria-invalid=${invalid === "version" ? "true" : "false"}
          onChange=${(e: Event) => onChange("version", (e.target as HTMLSelectElement).value)}
        >
          <option value="">${versions === undefined ? "loading releases…" : versions.length === 0 ? "no release registered" : "choose a release"}</option>
          ${(versions ?? []).map((v) => html`<option key=${v} value=${v}>${v}</option>`)}
        </select>
      </label>
      ${input("reason", "Reason (audit log)", "reason", "CVE-2026-1234")}
      ${input("selector", "Only nodes with labels", "selector", "region=eu env=prod")}
      ${input("pools", "Only pools", "pool", "db web")}
      ${input("nodes", "Only nodes", "node", "node-1 node-2")}
      ${input("excludeNodes", "Leave out nodes", "exclude-node", "node-7")}
      ${input("excludeTags", "Leave out labels", "exclude-tag", "hold=true")}
    </fieldset>
    <fieldset class="start-fields">
      <legend>Pace and safety</legend>
      ${input("batches", "Batches", "batches", "5:30m,25:30m,100:30m")}
      ${input("threshold", "Failure threshold %", "threshold", "5")}
      <label class="field">
        <span>On breach <code>--on-breach</code></span>
        <select name="onBreach" value=${fields.onBreach} onChange=${(e: Event) => onChange("onBreach", (e.target as HTMLSelectElement).value)}>
          <option value="">rollback (default)</option>
          <option value="pause">pause</option>
          <option value="stop">stop</option>
        </select>
      </label>
      ${input("concurrency", "Concurrency", "concurrency", "0 = whole batch")}
      ${input("disruptionBudget", "Disruption budget % per pool", "disruption-budget", "5")}
      ${input("maxDownloads", "Nodes downloading at once", "max-downloads", "no limit")}
      ${area("windows", "Maintenance windows", "window", "Mon-Fri 02:00-04:00 Europe/Berlin")}
      ${area("gates", "Health gates", "gate", "prometheus http://prometheus:9090 error_rate < 0.01")}
    </fieldset>
    <details class="start-more">
      <summary>More settings</summary>
      <fieldset class="start-fields">
        ${input("ramp", "Ramp instead of batches", "ramp", "10/min×2")}
        ${input("rampMax", "Ramp maximum", "ramp-max", "200/min")}
        ${input("rampStep", "Ramp step", "ramp-step", "30m")}
        ${input("gateGrace", "Gate grace", "gate-grace", "1m")}
        ${input("reconnectTimeout", "Reconnect timeout", "reconnect-timeout", "10m")}
        ${input("configGrace", "Config grace", "config-grace", "1m")}
        ${input("soak", "Soak", "soak", "0s")}
        ${input("progressDeadline", "Progress deadline", "progress-deadline", "default")}
        ${input("maxDefer", "Max defer per node", "max-defer", "1h")}
      </fieldset>
    </details>`;
}
