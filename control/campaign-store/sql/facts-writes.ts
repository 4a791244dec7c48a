/**
 * The intake's writes: reports onto their outbox rows (a CONFIRMED report on a confirm
 * operation also raises the node's confirmed sequence to the campaign's target), and config
 * failures.
 */
import type { ConfigFailureWrite, ReportWrite } from "../port.js";
import { sqlReportPlace } from "../report-order.js";
import type { Queryable } from "./reads.js";

/**
 * See {@link CampaignStore.recordFacts}. Reports are kept in the database's order, numbered from
 * `campaign_report_seq`, and never behind the stored one along the operation
 * (`../report-order.ts`); the stamps (`x.at`, the receiving Control's clock) only say when.
 */
export async function recordFacts(
  db: Queryable,
  reports: readonly ReportWrite[],
  failures: readonly ConfigFailureWrite[],
): Promise<void> {
  if (reports.length > 0) {
    await db.query(
      `update campaign_operations o set report_phase = x.phase, report_code = x.code,
          report_message = x.message, report_version = x.version, report_at = x.at,
          report_boot_id = x.boot_id, acked_at = coalesce(o.acked_at, x.at),
          report_seq = nextval('campaign_report_seq')
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
              $7::timestamptz[], $8::text[]) as x(id, node_id, phase, code, message, version, at,
              boot_id)
        where o.id = x.id and o.node_id = x.node_id
          and (o.report_phase is null
               or ${sqlReportPlace("x.phase")} >= ${sqlReportPlace("o.report_phase")})`,
      [
        reports.map((r) => r.id),
        reports.map((r) => r.nodeId),
        reports.map((r) => r.phase),
        reports.map((r) => r.code),
        reports.map((r) => r.message),
        reports.map((r) => r.version),
        reports.map((r) => r.at),
        reports.map((r) => r.bootId),
      ],
    );
    const confirmed = reports.filter((r) => r.phase === "CONFIRMED");
    if (confirmed.length > 0) {
      // The Agent confirmed the release of a confirm operation: Control's record of its
      // confirmed sequence rises to it now, not at its next Hello (which carries it too).
      await db.query(
        `update nodes n set confirmed_sequence = greatest(n.confirmed_sequence, c.target_sequence)
           from campaign_operations o
           join campaigns c on c.id = o.campaign_id
           join unnest($1::text[], $2::text[]) as x(id, node_id)
             on o.id = x.id and o.node_id = x.node_id
          where o.kind = 'confirm' and n.id = o.node_id`,
        [confirmed.map((r) => r.id), confirmed.map((r) => r.nodeId)],
      );
    }
  }
  if (failures.length > 0) {
    await db.query(
      `insert into campaign_config_failures (campaign_id, node_id, at, boot_id, message)
       select x.campaign_id, x.node_id, x.at, x.boot_id, x.message
         from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[])
              as x(campaign_id, node_id, at, boot_id, message)
        where exists (select 1 from campaigns c where c.id = x.campaign_id)`,
      [
        failures.map((f) => f.campaignId),
        failures.map((f) => f.nodeId),
        failures.map((f) => f.at),
        failures.map((f) => f.bootId),
        failures.map((f) => f.message),
      ],
    );
  }
}
