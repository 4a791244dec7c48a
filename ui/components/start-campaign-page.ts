/**
 * Starting a campaign from the dashboard (`#/campaigns/new`, operators only): the fields of
 * `agentctl campaign start` (the target version chosen among the registered releases that are
 * not yanked), then the plan Control answers (PlanCampaign: batches, skipped
 * nodes, the estimate) with nothing started yet, then an explicit confirmation that starts
 * exactly the planned spec. Changing a field after planning withdraws the plan. Every refusal
 * is shown as Control words it. A viewer sees no form.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { PlanCampaignResponse } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { hrefOf } from "../hash-route.js";
import { startableVersions } from "../releases.js";
import { useSession } from "../session.js";
import { EMPTY_FIELDS, type SpecFields, type SpecInit, specFromFields } from "../spec-form.js";
import { useReleases } from "../use-releases.js";
import { CampaignPlanPreview } from "./campaign-plan-preview.js";
import { ErrorLine } from "./error-line.js";
import { StartFormFields } from "./start-form-fields.js";

interface Planned {
  readonly spec: SpecInit;
  readonly plan: PlanCampaignResponse;
}

/** The start page. */
export function StartCampaignPage() {
  const { api, role } = useSession();
  const [fields, setFields] = useState<SpecFields>(EMPTY_FIELDS);
  const [invalid, setInvalid] = useState<{ field: keyof SpecFields; message: string }>();
  const [planned, setPlanned] = useState<Planned>();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const releases = useReleases(api);
  if (role !== "operator") {
    return html`<section>
      <h2>Start a campaign</h2>
      <p class="muted" role="status">Starting a campaign needs an operator's token; this one is a viewer's.</p>
    </section>`;
  }
  const change = (name: keyof SpecFields, value: string) => {
    setFields((f) => ({ ...f, [name]: value }));
    setPlanned(undefined);
    setConfirming(false);
  };
  const call = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const plan = (e: Event) => {
    e.preventDefault();
    const parsed = specFromFields(fields);
    if (!parsed.ok) {
      setInvalid({ field: parsed.field, message: parsed.message });
      return;
    }
    setInvalid(undefined);
    void call(async () => {
      const answer = await api.campaigns.planCampaign({ spec: parsed.spec });
      setPlanned({ spec: parsed.spec, plan: answer });
    });
  };
  const start = () =>
    call(async () => {
      if (!planned) return;
      const { campaign } = await api.campaigns.startCampaign({ spec: planned.spec });
      if (campaign) window.location.hash = hrefOf({ page: "campaign", id: campaign.id });
    });
  return html`<section class="start-campaign">
    <h2>Start a campaign</h2>
    <form class="start-form" onSubmit=${plan}>
      <${StartFormFields}
        fields=${fields}
        onChange=${change}
        invalid=${invalid?.field}
        versions=${releases.data && startableVersions(releases.data)}
      />
      <${ErrorLine} error=${releases.error} />
      ${invalid && html`<p class="error" role="alert" data-field=${invalid.field}>${invalid.message}</p>`}
      <button type="submit" disabled=${busy}>Plan</button>
      <span class="muted"> Plans only: nothing starts before the confirmation below.</span>
    </form>
    <${ErrorLine} error=${error} />
    ${planned && html`<${CampaignPlanPreview} plan=${planned.plan} />`}
    ${
      planned &&
      !confirming &&
      html`<button class="start" disabled=${busy} onClick=${() => setConfirming(true)}>Start this campaign…</button>`
    }
    ${
      planned &&
      confirming &&
      html`<div class="confirm" role="dialog" aria-label="Confirm the start">
        <p>
          Start the campaign of <strong>${planned.spec.targetVersion}</strong> on <strong>${planned.plan.totalNodes}</strong> nodes now? Its first batch is offered at once.
        </p>
        <button class="danger" disabled=${busy} onClick=${() => void start()}>Confirm and start</button>
        <button class="link" disabled=${busy} onClick=${() => setConfirming(false)}>Cancel</button>
      </div>`
    }
  </section>`;
}
