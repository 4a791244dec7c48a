/**
 * A TUF repository for tests, built with the shared repository module and real ed25519
 * keys, served as static files over HTTP on loopback. Each method publishes new metadata
 * the way Control and `agentctl tuf` do; tests tamper with `files` directly to attack.
 */
import type { Metadata, Root, Targets } from "@tufjs/models";
import { generateKeyPair, type ReleaseKeyPair } from "../../control/shared/release/index.js";
import { tufKey, tufSigner } from "../../control/shared/tuf/keys.js";
import {
  buildRoot,
  buildSnapshot,
  buildTargets,
  buildTimestamp,
  metadataBytes,
  type ReleaseTarget,
  withTargets,
} from "../../control/shared/tuf/repository.js";
import { type LoopbackHttp, serveFile, startLoopbackHttp } from "./loopback-http.js";

const HOUR = 3_600_000;

/** The repository's keys. */
export interface TufKeys {
  root: ReleaseKeyPair[];
  targets: ReleaseKeyPair[];
  snapshot: ReleaseKeyPair;
  timestamp: ReleaseKeyPair;
}

/** A served repository. */
export class TestTufRepo {
  /** Path under the base URL → bytes served (absent: 404). */
  readonly files = new Map<string, Buffer>();
  root!: Metadata<Root>;
  targets!: Metadata<Targets>;
  snapshotVersion = 0;
  timestampVersion = 0;
  base = "";
  #server: LoopbackHttp | undefined;

  private constructor(
    readonly keys: TufKeys,
    readonly thresholds: { root: number; targets: number },
  ) {}

  /** A repository with `rootKeys` root keys and `targetsKeys` targets keys, thresholds as given. */
  static async create(
    options: {
      rootKeys?: number;
      rootThreshold?: number;
      targetsKeys?: number;
      targetsThreshold?: number;
    } = {},
  ): Promise<TestTufRepo> {
    const many = (n: number) => Promise.all(Array.from({ length: n }, () => generateKeyPair()));
    const keys: TufKeys = {
      root: await many(options.rootKeys ?? 1),
      targets: await many(options.targetsKeys ?? 1),
      snapshot: await generateKeyPair(),
      timestamp: await generateKeyPair(),
    };
    const repo = new TestTufRepo(keys, {
      root: options.rootThreshold ?? 1,
      targets: options.targetsThreshold ?? 1,
    });
    await repo.#serve();
    repo.root = buildRoot(repo.rootSpec(1, keys));
    await repo.signRoot(keys.root.slice(0, repo.thresholds.root));
    repo.targets = buildTargets(new Date(Date.now() + 24 * HOUR));
    await repo.publishTargets([], keys.targets.slice(0, repo.thresholds.targets));
    return repo;
  }

  rootSpec(version: number, keys: TufKeys, expires = new Date(Date.now() + 24 * HOUR)) {
    return {
      version,
      expires,
      root: { keys: keys.root.map((k) => tufKey(k.publicKey)), threshold: this.thresholds.root },
      targets: {
        keys: keys.targets.map((k) => tufKey(k.publicKey)),
        threshold: this.thresholds.targets,
      },
      snapshot: { keys: [tufKey(keys.snapshot.publicKey)], threshold: 1 },
      timestamp: { keys: [tufKey(keys.timestamp.publicKey)], threshold: 1 },
    };
  }

  /** Signs the current root with `signers` and publishes it as `N.root.json` and `root.json`. */
  async signRoot(signers: readonly ReleaseKeyPair[]): Promise<void> {
    for (const k of signers) this.root.sign((await tufSigner(k.privateKey)).sign);
    const bytes = metadataBytes(this.root);
    this.files.set(`${this.root.signed.version}.root.json`, bytes);
    this.files.set("root.json", bytes);
  }

  /** The bytes of the initial root, as given to an Agent at install. */
  get initialRoot(): Buffer {
    return this.files.get("1.root.json")!;
  }

  /**
   * Lists `releases` in a new targets version signed by `signers`, then a new snapshot and
   * timestamp (the online roles) expiring at `timestampExpires`.
   */
  async publishTargets(
    releases: readonly ReleaseTarget[],
    signers: readonly ReleaseKeyPair[],
    timestampExpires = new Date(Date.now() + HOUR),
  ): Promise<void> {
    if (releases.length > 0) {
      this.targets = withTargets(this.targets, releases, new Date(Date.now() + 24 * HOUR));
    }
    for (const k of signers) this.targets.sign((await tufSigner(k.privateKey)).sign);
    this.files.set("targets.json", metadataBytes(this.targets));
    await this.publishTimestamp(timestampExpires, true);
  }

  /** A new timestamp (and, with `snapshot`, a new snapshot first), signed by the online keys. */
  async publishTimestamp(expires: Date, snapshot = false): Promise<void> {
    if (snapshot) {
      const md = buildSnapshot(
        this.targets.signed.version,
        ++this.snapshotVersion,
        new Date(Date.now() + 24 * HOUR),
      );
      md.sign((await tufSigner(this.keys.snapshot.privateKey)).sign);
      this.files.set("snapshot.json", metadataBytes(md));
    }
    const ts = buildTimestamp(
      this.files.get("snapshot.json")!,
      this.snapshotVersion,
      ++this.timestampVersion,
      expires,
    );
    ts.sign((await tufSigner(this.keys.timestamp.privateKey)).sign);
    this.files.set("timestamp.json", metadataBytes(ts));
  }

  async #serve(): Promise<void> {
    this.#server = await startLoopbackHttp((req, res) =>
      serveFile(this.files, (req.url ?? "/").replace(/^\/tuf\//, ""), res),
    );
    this.base = `${this.#server.origin}/tuf/`;
  }

  async stop(): Promise<void> {
    await this.#server?.close();
  }
}
