/**
 * The fleet at a glance (`#/fleet`), what an operator of thousands of nodes asks first: which
 * versions run where (a chart, and per pool online, offline and revoked; nodes on a yanked release are
 * marked and counted), how far each desired version
 * is from being reached and why, the rollout plans with their groups, and the campaigns in
 * flight with what each waits for next. One summary read (GetFleetSummary), never a page
 * through the nodes; read again every few seconds.
 */
import { html } from "htm/preact";
import type { VersionCount } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { yankedVersions } from "../releases.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { useReleases } from "../use-releases.js";
import { DesiredTable } from "./desired-table.js";
import { ErrorLine } from "./error-line.js";
import { LIVE_PHASES, LiveCampaigns } from "./live-campaigns.js";
import { PlanList } from "./plan-list.js";
import { PoolTable } from "./pool-table.js";
import { VersionChart } from "./version-chart.js";

/** The warning that nodes run a yanked release; nothing when none does. */
function YankedRunning({
  versions,
  yanked,
}: {
  versions: readonly VersionCount[];
  yanked: ReadonlySet<string>;
}) {
  const bad = versions.filter((v) => yanked.has(v.version));
  if (bad.length === 0) return null;
  const nodes = bad.reduce((sum, v) => sum + v.nodes, 0);
  return html`<p class="yanked-running" role="status" data-nodes=${nodes}>
    ${nodes} node${nodes === 1 ? " runs" : "s run"} a yanked release: ${bad.map((v) => `${v.version} (${v.nodes})`).join(", ")}
  </p>`;
}

/** The fleet page. */
export function FleetPage() {
  const { api } = useSession();
  const summary = usePoll((signal) => api.fleet.getFleetSummary({}, { signal }), [api]);
  const plans = usePoll((signal) => api.plans.listPlans({}, { signal }), [api]);
  const live = usePoll(
    (signal) => api.campaigns.listCampaigns({ phases: LIVE_PHASES, pageSize: 50 }, { signal }),
    [api],
  );
  const releases = useReleases(api);
  const yanked = yankedVersions(releases.data ?? []);
  const s = summary.data;
  return html`<section class="fleet">
    <h2>Fleet</h2>
    <${ErrorLine} error=${summary.error} />
    ${!s && !summary.error && html`<p class="muted">Loading…</p>`}
    ${
      s &&
      html`<p class="fleet-total" data-nodes=${s.nodes} data-online=${s.online} data-revoked=${s.revoked}>
        <strong>${s.nodes}</strong> nodes, <strong>${s.online}</strong> online, ${s.nodes - s.online - s.revoked} offline${s.revoked > 0 && `, ${s.revoked} revoked`}
      </p>
      <div class="fleet-grid">
        <div>
          <h3>Nodes by version</h3>
          <${VersionChart} versions=${s.versions} yanked=${yanked} />
          <${YankedRunning} versions=${s.versions} yanked=${yanked} />
          <${ErrorLine} error=${releases.error} />
        </div>
        <div>
          <h3>Nodes by pool</h3>
          <${PoolTable} pools=${s.pools} />
        </div>
      </div>
      <h3>Desired versions</h3>
      <${DesiredTable} desired=${s.desired} />`
    }
    <h3>Campaigns in flight</h3>
    <${ErrorLine} error=${live.error} />
    ${live.data && html`<${LiveCampaigns} campaigns=${live.data.campaigns} />`}
    <h3>Rollout plans</h3>
    <${ErrorLine} error=${plans.error} />
    ${plans.data && html`<${PlanList} plans=${plans.data.plans} />`}
  </section>`;
}
