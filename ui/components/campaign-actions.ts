/**
 * An operator's buttons on a campaign: pause and resume, abort (with or without rolling the
 * current batch back), and "Retry N nodes" of a finished campaign, offered only when it has
 * nodes a retry would take ({@link retryLabel}). Shown to operators only; each button appears
 * only in the phases where Control accepts it.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { type Campaign, CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { FINAL_PHASES } from "../format.js";
import { hrefOf } from "../hash-route.js";
import { retryLabel } from "../retry-offer.js";
import { useSession } from "../session.js";
import { ErrorLine } from "./error-line.js";

const REASON = "from the dashboard";

/** The buttons of `campaign`; nothing for a viewer. */
export function CampaignActions({ campaign }: { campaign: Campaign }) {
  const { api, role } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  if (role !== "operator") return null;
  const { id, phase } = campaign;
  const act = async (call: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await call();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const abort = (rollback: boolean) => {
    const what = rollback ? "abort it and roll its current batch back" : "abort it";
    if (!window.confirm(`Campaign ${id}: ${what}? This cannot be undone.`)) return;
    void act(() => api.campaigns.abortCampaign({ id, rollback, reason: REASON }));
  };
  const retry = () =>
    act(async () => {
      const { campaign: next } = await api.campaigns.retryCampaign({ id, reason: REASON });
      if (next) window.location.hash = hrefOf({ page: "campaign", id: next.id });
    });
  const final = FINAL_PHASES.has(phase);
  const retryText = retryLabel(campaign);
  const button = (label: string, onClick: () => void, kind = "") =>
    html`<button class=${kind} disabled=${busy} onClick=${onClick}>${label}</button>`;
  return html`<div class="actions" data-actions="operator">
    ${phase === CampaignPhase.RUNNING && button("Pause", () => void act(() => api.campaigns.pauseCampaign({ id, reason: REASON })))}
    ${phase === CampaignPhase.PAUSED && button("Resume", () => void act(() => api.campaigns.resumeCampaign({ id, reason: REASON })))}
    ${!final && button("Abort", () => abort(false), "danger")}
    ${!final && phase !== CampaignPhase.ROLLING_BACK && button("Abort and roll back", () => abort(true), "danger")}
    ${retryText && button(retryText, () => void retry())}
    <${ErrorLine} error=${error} />
  </div>`;
}
