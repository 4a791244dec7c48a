/**
 * Reference model of deferral's two durations, as the operator guide states them and written
 * apart from `control/campaign/deferral.ts`: a campaign's max defer is its `--max-defer`, or one
 * hour; a deferred node is offered again no sooner than a minute after its answer, or a quarter
 * of the max defer when that is shorter, and never sooner than a second.
 */

/** One hour, the max defer of a campaign that names none. */
const ONE_HOUR_MS = 60 * 60 * 1000;

/** The campaign's max defer. */
export function refMaxDeferMs(spec: { readonly maxDeferMs?: number | undefined }): number {
  if (spec.maxDeferMs === undefined) return ONE_HOUR_MS;
  return spec.maxDeferMs;
}

/** The least time from a DEFERRED answer to the next offer of the same operation. */
export function refRetryMs(spec: { readonly maxDeferMs?: number | undefined }): number {
  let retry = 60 * 1000;
  const quarter = Math.floor(refMaxDeferMs(spec) / 4);
  if (quarter < retry) retry = quarter;
  if (retry < 1000) retry = 1000;
  return retry;
}
