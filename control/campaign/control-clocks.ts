/**
 * How far two Controls' clocks may disagree. Several Controls share one database and each
 * stamps what it does with its own clock; NTP keeps them close, not equal (docs/decisions.md,
 * "One clock for ordering across Controls"). Order never comes from comparing two Controls'
 * stamps (the database numbers reports). Where a rule must read a span that one Control started
 * and another may end (a late rollback's slot, stamped by the Control that delivered it and read
 * by any), the span is lengthened by this much, so a reader whose clock is ahead never ends it
 * before the stamping Control's own clock would: disagreement only ever delays.
 */
export const CONTROL_CLOCK_DISAGREEMENT_MS = 5_000;
