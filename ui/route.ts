/**
 * The dashboard's pages, addressed by the URL fragment (`#/campaigns/ID`) so the server serves
 * one page and a reload or a shared link lands on the same view (`#/campaigns/new` is the
 * start form, `#/fleet` the fleet overview, `#/nodes/ID` one node). A fragment that names no
 * page shows the campaigns.
 */
/** One page of the dashboard. */
export type Route =
  | { readonly page: "campaigns" }
  | { readonly page: "start" }
  | { readonly page: "campaign"; readonly id: string }
  | { readonly page: "fleet" }
  | { readonly page: "nodes" }
  | { readonly page: "node"; readonly id: string }
  | { readonly page: "audit" };

/** The route a fragment names. */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "campaigns" && parts[1] === "new") return { page: "start" };
  if (parts[0] === "campaigns" && parts[1]) return { page: "campaign", id: parts[1] };
  if (parts[0] === "fleet") return { page: "fleet" };
  if (parts[0] === "nodes" && parts[1]) return { page: "node", id: parts[1] };
  if (parts[0] === "nodes") return { page: "nodes" };
  if (parts[0] === "audit") return { page: "audit" };
  return { page: "campaigns" };
}

/** The fragment of a route, for links. */
export function hrefOf(route: Route): string {
  switch (route.page) {
    case "campaign":
      return `#/campaigns/${encodeURIComponent(route.id)}`;
    case "start":
      return "#/campaigns/new";
    case "node":
      return `#/nodes/${encodeURIComponent(route.id)}`;
    case "campaigns":
    case "fleet":
    case "nodes":
    case "audit":
      return `#/${route.page}`;
  }
}
