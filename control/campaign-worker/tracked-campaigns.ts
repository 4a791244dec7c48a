/**
 * The campaigns the leading worker decides, and which of them holds each node: a report
 * for a node or a campaign outside this set costs nothing.
 *
 * A node may belong to two live campaigns at once: one that ended for it (an abort left other
 * nodes in flight, so the campaign is not finished) and a newer one that took it since. Facts
 * that name no operation (a failed ConfigStatus) follow the node's latest operation, which is
 * the newer campaign's: a node is held by the newest tracked campaign that includes it
 * (creation time, then the higher id, as the store's `liveCampaignOfNodes` orders them),
 * whatever order the campaigns were tracked in.
 */
export class TrackedCampaigns {
  private readonly campaigns = new Map<string, number>();
  private readonly campaignOfNode = new Map<string, string>();

  /** Whether `campaignId` is decided here. */
  has(campaignId: string): boolean {
    return this.campaigns.has(campaignId);
  }

  /** Whether any campaign is tracked. */
  get any(): boolean {
    return this.campaigns.size > 0;
  }

  /** The newest tracked campaign holding `nodeId`, if any. */
  campaignOf(nodeId: string): string | undefined {
    return this.campaignOfNode.get(nodeId);
  }

  /**
   * Tracks a live campaign created at `createdAt` (epoch ms) and its nodes; a campaign already
   * tracked keeps its nodes. Each node is held by this campaign unless a newer tracked one
   * holds it.
   */
  track(campaignId: string, nodeIds: Iterable<string>, createdAt: number): void {
    if (this.campaigns.has(campaignId)) return;
    this.campaigns.set(campaignId, createdAt);
    for (const nodeId of nodeIds) {
      const held = this.campaignOfNode.get(nodeId);
      if (held === undefined || this.newer(campaignId, createdAt, held))
        this.campaignOfNode.set(nodeId, campaignId);
    }
  }

  /**
   * Stops tracking a campaign and forgets its nodes (a node it held is held by no tracked
   * campaign until one tracks it again: the intake then asks the store).
   */
  untrack(campaignId: string): void {
    this.campaigns.delete(campaignId);
    for (const [nodeId, id] of this.campaignOfNode) {
      if (id === campaignId) this.campaignOfNode.delete(nodeId);
    }
  }

  /** The tracked campaign ids, as a copy. */
  ids(): string[] {
    return [...this.campaigns.keys()];
  }

  private newer(campaignId: string, createdAt: number, than: string): boolean {
    const other = this.campaigns.get(than) ?? Number.NEGATIVE_INFINITY;
    return createdAt > other || (createdAt === other && campaignId > than);
  }
}
