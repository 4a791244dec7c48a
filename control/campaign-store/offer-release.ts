/** What an upgrade offer needs of the target release. */
import type { StoredArtifact } from "../db/entities/index.js";
import type { Envelope } from "../shared/release/index.js";

/** A registered release as an upgrade offer carries it. */
export interface OfferRelease {
  readonly version: string;
  readonly sequence: number;
  readonly envelope: Envelope;
  readonly artifacts: readonly StoredArtifact[];
  /** When it expires (epoch ms); absent: not known to this store (never judged expired). */
  readonly expiresAt?: number | undefined;
}

/** An operator's yank of a registered release: it is never offered again. */
export interface ReleaseYank {
  readonly version: string;
  /** Epoch ms. */
  readonly at: number;
  readonly by: string;
  readonly reason: string;
}
