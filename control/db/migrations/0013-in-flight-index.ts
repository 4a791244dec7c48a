import { Migration } from "@mikro-orm/migrations";

/**
 * A partial index of the campaign nodes in flight (offered, applying, restarting,
 * verifying). Every decision counts the nodes in flight per pool in other unfinished
 * campaigns (the cross-campaign pool budget); without it that count read every campaign
 * node ever written, finished campaigns included, so a decision slowed as history grew.
 */
export class Migration0013InFlightIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index campaign_nodes_in_flight_idx on campaign_nodes (pool)
      where state in ('offered', 'applying', 'restarting', 'verifying')`);
  }

  override async down(): Promise<void> {
    this.addSql("drop index campaign_nodes_in_flight_idx");
  }
}
