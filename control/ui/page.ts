/**
 * The dashboard's one HTML page and the headers every dashboard response carries. The page
 * holds no token and no data: the script asks the admin API for everything, with the token
 * the operator gives it.
 */
import type { DashboardBundle } from "./bundle.js";

/**
 * What the browser may do on a dashboard page: load the script and stylesheet served next to
 * it and call the admin API of the same origin, nothing else (no inline script or style, no
 * frames, no forms posted elsewhere, no plugins).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every dashboard response, whatever its body. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** The HTML page of the dashboard, naming the bundle's assets (relative to `/ui/`). */
export function dashboardPage(bundle: DashboardBundle): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Agent Control</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/${bundle.style.name}">
<script type="module" src="assets/${bundle.script.name}"></script>
</head>
<body>
<noscript>The Agent Control dashboard needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;
}
