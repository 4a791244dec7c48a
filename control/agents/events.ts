/**
 * What the agent hub tells the rest of Control. The campaign worker subscribes to these;
 * the hub knows nothing about campaigns.
 */
import type { ObservedState } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { EncodedOperation } from "./operation-frame.js";

/** A node whose stream completed its Hello/Welcome exchange. */
export interface ConnectedNode {
  readonly nodeId: string;
  readonly sessionId: string;
  readonly bootId: string;
  readonly agentVersion: string;
  readonly previousVersion: string;
  readonly platform: string;
  readonly pool: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The negotiated capabilities. */
  readonly capabilities: readonly string[];
  readonly confirmedSequence: number;
  readonly connectedAt: Date;
}

/** Events of the agent hub, delivered synchronously; listeners must not throw or block. */
export type AgentEvent =
  | { readonly kind: "connected"; readonly node: ConnectedNode }
  | {
      readonly kind: "disconnected";
      readonly nodeId: string;
      readonly sessionId: string;
      readonly reason: string;
    }
  | {
      readonly kind: "observed";
      readonly nodeId: string;
      readonly observed: ObservedState;
      readonly at: Date;
    }
  | {
      readonly kind: "config_status";
      readonly nodeId: string;
      readonly ok: boolean;
      readonly message: string;
      readonly at: Date;
    }
  | {
      /** The Agent's TUF metadata became frozen or current (TrustStatus, trust.v1). */
      readonly kind: "trust_status";
      readonly nodeId: string;
      readonly frozen: boolean;
      /** Why it is frozen (at most 1024 characters); empty when not frozen. */
      readonly reason: string;
      /** When the Agent first found itself frozen; null when not frozen. */
      readonly since: Date | null;
      readonly at: Date;
    };

/** Receives hub events. */
export type AgentEventListener = (event: AgentEvent) => void;

/**
 * The port through which Control sends operations to Agents. `send` is fire-and-forget
 * over the stream: durability comes from the caller's outbox, which re-sends on reconnect.
 */
export interface AgentGateway {
  /** True when the operation (in wire form, as the outbox holds it) was queued on the node's open stream. */
  send(nodeId: string, operation: EncodedOperation): boolean;
  /** The node's current stream, if it has one here. */
  connected(nodeId: string): ConnectedNode | undefined;
  /** Subscribes to hub events; returns the unsubscribe function. */
  subscribe(listener: AgentEventListener): () => void;
}
