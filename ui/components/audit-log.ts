/** The audit log page: every administrative and campaign action, filterable. */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { useDebounced } from "../use-debounced.js";
import { AuditTable } from "./audit-table.js";
import { FilterField } from "./filter-field.js";

/** The audit log page. */
export function AuditLog() {
  const [campaignId, setCampaignId] = useState("");
  const [action, setAction] = useState("");
  const [actor, setActor] = useState("");
  const filters = useDebounced({
    campaignId: campaignId.trim(),
    action: action.trim(),
    actor: actor.trim(),
  });
  return html`<section>
    <h2>Audit log</h2>
    <form class="filters" onSubmit=${(e: Event) => e.preventDefault()}>
      <${FilterField} label="Campaign" name="campaign" value=${campaignId} onChange=${setCampaignId} />
      <${FilterField} label="Action" name="action" value=${action} onChange=${setAction} placeholder="start, pause, node.disable…" />
      <${FilterField} label="Actor" name="actor" value=${actor} onChange=${setActor} />
    </form>
    <${AuditTable} key=${JSON.stringify(filters)} ...${filters} pageSize=${50} />
  </section>`;
}
