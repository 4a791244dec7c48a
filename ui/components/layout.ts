/**
 * The frame of every signed-in page: the navigation, who is signed in, and the page the
 * address names.
 */
import { html } from "htm/preact";
import { hrefOf, type Route, useRoute } from "../hash-route.js";
import { useSession } from "../session.js";
import { AuditLog } from "./audit-log.js";
import { CampaignList } from "./campaign-list.js";
import { CampaignPage } from "./campaign-page.js";
import { FleetPage } from "./fleet-page.js";
import { NodeList } from "./node-list.js";
import { NodePage } from "./node-page.js";
import { StartCampaignPage } from "./start-campaign-page.js";

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "campaigns":
      return html`<${CampaignList} />`;
    case "campaign":
      return html`<${CampaignPage} id=${route.id} />`;
    case "start":
      return html`<${StartCampaignPage} />`;
    case "fleet":
      return html`<${FleetPage} />`;
    case "nodes":
      return html`<${NodeList} />`;
    case "node":
      return html`<${NodePage} id=${route.id} />`;
    case "audit":
      return html`<${AuditLog} />`;
  }
}

/** The signed-in frame. */
export function Layout() {
  const route = useRoute();
  const { role, signOut } = useSession();
  const section =
    route.page === "campaign" || route.page === "start"
      ? "campaigns"
      : route.page === "node"
        ? "nodes"
        : route.page;
  const link = (page: "fleet" | "campaigns" | "nodes" | "audit", label: string) =>
    html`<a href=${hrefOf({ page })} class=${section === page ? "active" : ""}>${label}</a>`;
  return html`<header class="top">
      <span class="brand">Agent Control</span>
      <nav>${link("fleet", "Fleet")}${link("campaigns", "Campaigns")}${link("nodes", "Nodes")}${link("audit", "Audit log")}</nav>
      <span class="who">
        <span class="badge" data-role=${role}>${role}</span>
        <button class="link" onClick=${() => signOut()}>Sign out</button>
      </span>
    </header>
    <main><${Page} route=${route} /></main>`;
}
