/**
 * The order in which a store keeps an operation's reports: the database's, never the stamps of
 * the Controls that received them (docs/decisions.md, "One clock for ordering across Controls").
 *
 * A report replaces the stored one of its operation when it was written later AND is not behind
 * it along the operation: an Agent moves one delivery of an operation forward only (ACCEPTED,
 * DOWNLOADING, VERIFYING, APPLYING, RESTARTING, then one final phase) and answers a redelivery
 * with its last report, so a report behind the stored one reached the database late through a
 * Control that held it back (a write tried again, a slower Control), and is dropped. DEFERRED
 * comes first: the Agent forgets an operation it deferred, so a later delivery's progress
 * replaces it, while a DEFERRED never replaces that progress. Each report a store keeps is
 * numbered from one sequence (`campaign_report_seq`), above every report kept before it.
 */

/** Each phase's place along one operation; a report never replaces one with a higher place. */
export const REPORT_PLACE: Readonly<Record<string, number>> = {
  DEFERRED: 0,
  ACCEPTED: 1,
  DOWNLOADING: 2,
  VERIFYING: 3,
  APPLYING: 4,
  RESTARTING: 5,
  REFUSED: 6,
  FAILED: 6,
  REINSTATED: 6,
  CONFIRMED: 6,
};

/** A phase's place along its operation (an unknown phase counts as the first). */
export function reportPlace(phase: string): number {
  return REPORT_PLACE[phase] ?? 0;
}

/**
 * True when a report of `phase` written now may replace the stored one of `stored` phase (null:
 * none stored): whenever it is not behind it along the operation.
 */
export function replacesReport(stored: string | null, phase: string): boolean {
  return stored === null || reportPlace(phase) >= reportPlace(stored);
}

/** The SQL expression of {@link reportPlace} for a text column or expression `phase`. */
export function sqlReportPlace(phase: string): string {
  const arms = Object.entries(REPORT_PLACE)
    .map(([name, place]) => `when '${name}' then ${place}`)
    .join(" ");
  return `(case ${phase} ${arms} else 0 end)`;
}
