/**
 * The agent streams of nodes awaiting an administrator's approval
 * (`enrollment.requireApproval`). Such a node is offered nothing, so its stream serves only to
 * say it is there; yet every one holds a slot of `limits.maxStreams`. One leaked join token
 * enrolls as many invented node ids as it likes, so without a bound of their own the pending
 * nodes of one host could hold every slot and refuse the approved fleet. They hold at most
 * {@link pendingStreamLimit} slots; beyond that a pending node is refused RESOURCE_EXHAUSTED
 * (for a join-token enrollment before anything is written) and retries with backoff.
 */

/**
 * Streams nodes awaiting approval hold at once on a Control holding `maxStreams`: a tenth,
 * at least 1. The other nine tenths stay for nodes an administrator approved.
 */
export function pendingStreamLimit(maxStreams: number): number {
  return Math.max(1, Math.floor(maxStreams / 10));
}

/** What a pending node refused for {@link pendingStreamLimit} is told. */
export function pendingStreamsRefusal(limit: number): string {
  return `this Control holds as many streams of nodes awaiting approval as it allows (${limit}, a tenth of limits.maxStreams): retry with backoff; an administrator approves a node with agentctl node approve ID`;
}
