/**
 * The dashboard's current page, following the address bar's fragment (`route.ts` names the
 * pages and reads and writes fragments; it imports nothing of the browser or Preact, so the
 * unit tests import it alone).
 */
import { useEffect, useState } from "preact/hooks";
import { parseRoute, type Route } from "./route.js";

export { hrefOf, parseRoute, type Route } from "./route.js";

/** The current route, following the address bar. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const follow = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  return route;
}
