/**
 * What the running Agent tells Control of its trust state (TrustStatus, under trust.v1) and
 * its log: one log line per change between frozen and not frozen; a TrustStatus on every
 * change, and after a Welcome while frozen or while Control may not have the state (a change
 * not sent yet, or nothing sent since this process started).
 */
import type { AgentMessage } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentLog } from "./core/log.js";
import { CAP_TRUST, trustStatusMessage } from "./core/messages.js";
import type { TrustState } from "./core/trust-state.js";

/** The trust side of one Agent process's streams. */
export class TrustReport {
  #write: ((message: AgentMessage) => void) | undefined;
  /** The state may differ from what Control has (see the file's TSDoc). */
  #unsent = true;

  constructor(private readonly log: AgentLog) {}

  /** A Welcome arrived: `write` sends on its stream when it negotiated trust.v1. */
  welcomed(
    capabilities: readonly string[],
    write: ((message: AgentMessage) => void) | undefined,
    state: TrustState | undefined,
  ): void {
    this.#write = capabilities.includes(CAP_TRUST) ? write : undefined;
    if (state !== undefined && (state.frozen || this.#unsent)) this.#send(state);
  }

  /** The stream ended: nothing is sent until the next Welcome. */
  closed(): void {
    this.#write = undefined;
  }

  /** The state crossed between frozen and not frozen: logged once, sent when it can be. */
  changed(state: TrustState): void {
    if (state.frozen) {
      this.log.warn(
        { since: state.since, code: state.code, reason: state.message },
        "TUF metadata frozen: new releases are refused until fresh metadata is fetched",
      );
    } else {
      this.log.info({ checkedAt: state.checkedAt }, "TUF metadata current again: no longer frozen");
    }
    this.#unsent = true;
    this.#send(state);
  }

  #send(state: TrustState): void {
    if (this.#write === undefined) return;
    this.#write(trustStatusMessage(state));
    this.#unsent = false;
  }
}
