/**
 * The campaigns the leading worker decides, and which of them holds each node: a report
 * for a node or a campaign outside this set costs nothing.
 */
export class TrackedCampaigns {
  private readonly campaigns = new Set<string>();
  private readonly campaignOfNode = new Map<string, string>();

  /** Whether `campaignId` is decided here. */
  has(campaignId: string): boolean {
    return this.campaigns.has(campaignId);
  }

  /** The tracked campaign holding `nodeId`, if any. */
  campaignOf(nodeId: string): string | undefined {
    return this.campaignOfNode.get(nodeId);
  }

  /** Tracks a live campaign and its nodes; a campaign already tracked keeps its nodes. */
  track(campaignId: string, nodeIds: Iterable<string>): void {
    if (this.campaigns.has(campaignId)) return;
    this.campaigns.add(campaignId);
    for (const nodeId of nodeIds) this.campaignOfNode.set(nodeId, campaignId);
  }

  /** Stops tracking a campaign and forgets its nodes. */
  untrack(campaignId: string): void {
    this.campaigns.delete(campaignId);
    for (const [nodeId, id] of this.campaignOfNode) {
      if (id === campaignId) this.campaignOfNode.delete(nodeId);
    }
  }

  /** The tracked campaign ids, as a copy. */
  ids(): string[] {
    return [...this.campaigns];
  }
}
