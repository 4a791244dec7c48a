/** The facts of a Hello that the node registry stores. */

/** What a node said in its Hello, after validation, plus what Control decided. */
export interface NodeHello {
  readonly nodeId: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly pool: string;
  readonly platform: string;
  readonly agentVersion: string;
  readonly previousVersion: string;
  readonly bootId: string;
  /** The negotiated capabilities. */
  readonly capabilities: readonly string[];
  readonly confirmedSequence: number;
}
