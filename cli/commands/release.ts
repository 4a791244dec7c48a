/**
 * `agentctl release …`: the offline signing commands plus `register`, `list`, `show`, `yank` and `prune`,
 * which talk to Control's ReleaseService.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { parseEnvelope, parseManifest, sha256Hex } from "../../control/shared/release/index.js";
import {
  type ArtifactFile,
  ArtifactFileSchema,
  GetReleaseResponseSchema,
  ListReleasesResponseSchema,
  RegisterReleaseResponseSchema,
  type Release,
  type ReleaseService,
  YankReleaseResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import type { UploadWatch } from "../admin-transport.js";
import { checkReadable, expectPositionals, stringFlag, UsageError } from "../args.js";
import type { CommandGroup, Context } from "../command.js";
import { CONFIRM_DETAILS, confirmChange, YES_FLAG } from "../confirm.js";
import { formatFields, formatTable, formatTime, messageJson } from "../output.js";
import { describeTimeout } from "../timeout.js";
import { progressLine } from "../upload-progress.js";
import { offlineReleaseCommands } from "./release-offline.js";
import { pruneCommand } from "./release-prune.js";

/**
 * Reads the artifact files an envelope's manifest names by `file` from `dir`, checking
 * each against the manifest's size and sha256 before anything is uploaded.
 */
export async function artifactFilesFor(
  envelopeBytes: Uint8Array,
  dir: string,
): Promise<ArtifactFile[]> {
  const manifest = parseManifest(parseEnvelope(envelopeBytes).payload);
  const files: ArtifactFile[] = [];
  for (const [platform, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.file === undefined) continue;
    const path = join(dir, artifact.file);
    const content = await readFile(path).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === "ENOENT") {
        throw new UsageError(
          `artifact ${platform}: ${path} not found; pass --artifacts DIR with the files the manifest names`,
        );
      }
      throw error;
    });
    if (content.length !== artifact.size || sha256Hex(content) !== artifact.sha256) {
      throw new UsageError(
        `artifact ${platform}: ${path} does not match the manifest (size ${content.length}, manifest ${artifact.size}; sha256 differs: ${sha256Hex(content) !== artifact.sha256})`,
      );
    }
    files.push(create(ArtifactFileSchema, { platform, content }));
  }
  return files;
}

/**
 * The platforms whose artifact file Control already holds for exactly this envelope (the
 * same bytes registered, by their sha256, and the file not pruned): registering the envelope
 * again need not upload them. Empty when the version is not registered or was registered
 * from another envelope (Control then decides, with every file uploaded).
 */
async function heldArtifacts(
  ctx: Context,
  releases: Client<typeof ReleaseService>,
  envelope: Uint8Array,
): Promise<Set<string>> {
  const { version } = parseManifest(parseEnvelope(envelope).payload);
  const found = await releases.getRelease({ version }, { signal: ctx.signal }).catch((error) => {
    const code = ConnectError.from(error).code;
    // Not registered, or a Control without GetRelease: upload every file, as before.
    if (code === Code.NotFound || code === Code.Unimplemented) return undefined;
    throw error;
  });
  const release = found?.release;
  if (release === undefined || release.envelopeSha256 !== sha256Hex(envelope)) return new Set();
  return new Set(
    release.artifacts.filter((a) => a.servedByControl && !a.pruned).map((a) => a.platform),
  );
}

/** Formats releases as the `release list` table. */
export function formatReleaseTable(releases: readonly Release[]): string {
  return formatTable(
    ["VERSION", "SEQUENCE", "EXPIRES", "REGISTERED", "PLATFORMS", "SIGNERS"],
    releases.map((r) => [
      r.yankedAt ? `${r.version} (yanked)` : r.version,
      r.sequence.toString(),
      formatTime(r.expiresAt),
      formatTime(r.registeredAt),
      r.artifacts.map((a) => (a.pruned ? `${a.platform} (pruned)` : a.platform)).join(",") || "-",
      r.signerKeyIds.join(",") || "-",
    ]),
  );
}

function releaseDetails(release: Release): string {
  const fields = formatFields([
    ["Version", release.version],
    ["Sequence", release.sequence.toString()],
    ["Expires", formatTime(release.expiresAt)],
    ["Registered", `${formatTime(release.registeredAt)} by ${release.registeredBy || "-"}`],
    ["Signers", release.signerKeyIds.join(", ")],
    ["Envelope sha256", release.envelopeSha256],
    ...(release.yankedAt
      ? ([
          [
            "Yanked",
            `${formatTime(release.yankedAt)} by ${release.yankedBy || "-"}: ${release.yankReason}`,
          ],
        ] as [string, string][])
      : []),
  ]);
  const artifacts = formatTable(
    ["PLATFORM", "SIZE", "SHA256", "SERVED BY", "URL"],
    release.artifacts.map((a) => [
      a.platform,
      a.size.toString(),
      a.sha256,
      a.pruned ? "control (pruned)" : a.servedByControl ? "control" : "external",
      a.url,
    ]),
  );
  return `${fields}\n${artifacts}`;
}

/**
 * Runs `call` (one request of about `bytes`, carrying `files` artifact files) showing on stderr
 * how much of it was sent: a line rewritten on a terminal, a line per tenth otherwise, none
 * under 8 MiB ({@link progressLine}); then that Control verifies and stores it. agentctl's
 * timeout bounds each silence, not the whole call: no byte taken by Control for that long
 * while sending, or no answer that long after the last byte, ends it; a large upload on a slow
 * link is not cut while it moves.
 */
async function withUploadProgress<T>(
  ctx: Context,
  uploads: UploadWatch | undefined,
  files: number,
  bytes: number,
  call: (options: { signal: AbortSignal; timeoutMs?: number }) => Promise<T>,
): Promise<T> {
  if (uploads === undefined) return await call({ signal: ctx.signal });
  const what = `uploading ${files} artifact file${files === 1 ? "" : "s"}`;
  const line = progressLine(ctx.stderr, what, bytes, () => ctx.now().getTime());
  const limit = ctx.timeoutMs;
  const silence = new AbortController();
  const forward = () => silence.abort(ctx.signal.reason);
  ctx.signal.addEventListener("abort", forward, { once: true });
  let sent = false;
  let timer: NodeJS.Timeout | undefined;
  const watch = () => {
    if (limit === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      silence.abort(
        new ConnectError(
          sent
            ? `no answer within ${describeTimeout(limit)} after the upload (raise --timeout to wait longer)`
            : `Control took no bytes of the upload for ${describeTimeout(limit)} (raise --timeout to wait longer)`,
          Code.DeadlineExceeded,
        ),
      );
    }, limit);
  };
  uploads.listener = (n) => {
    watch();
    if (sent) return;
    line.report(n);
    if (n >= bytes) {
      sent = true;
      line.done();
    }
  };
  watch();
  try {
    // The call's own deadline is the silence watch's (a day stands for none: Connect's header
    // needs a number).
    return await call({ signal: silence.signal, timeoutMs: 86_400_000 });
  } catch (error) {
    if (silence.signal.reason instanceof ConnectError && !ctx.signal.aborted) {
      throw silence.signal.reason;
    }
    throw error;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", forward);
    uploads.listener = undefined;
  }
}

/** The `release` command group: offline signing and the ReleaseService calls. */
export const releaseGroup: CommandGroup = {
  name: "release",
  summary: "Sign releases offline, register them with Control, list and yank them",
  commands: {
    ...offlineReleaseCommands,
    register: {
      summary: "Register a signed envelope with Control, uploading the artifact files it names",
      args: "ENVELOPE",
      flags: {
        artifacts: {
          type: "string",
          value: "DIR",
          description:
            "directory holding the files the manifest names (default: the envelope's directory)",
        },
      },
      details:
        "Registering an envelope Control already holds uploads none of the artifact files it\n" +
        "still stores (same envelope, same sha256): only pruned files travel again.\n" +
        "With --json the output is a RegisterReleaseResponse.",
      async run(ctx, { values, positionals }) {
        const [path = ""] = expectPositionals(positionals, ["ENVELOPE"]);
        checkReadable(path, "ENVELOPE");
        const dir = stringFlag(values, "artifacts");
        if (dir !== undefined) checkReadable(dir, "--artifacts", "dir");
        const envelope = await readFile(path);
        const local = await artifactFilesFor(envelope, dir ?? dirname(path));
        const clients = await ctx.clients();
        const held = await heldArtifacts(ctx, clients.releases, envelope);
        // Control verifies the envelope again either way; only the bytes it lacks travel.
        const artifacts = local.filter((a) => !held.has(a.platform));
        const skipped = local.length - artifacts.length;
        const response = await withUploadProgress(
          ctx,
          clients.uploads,
          artifacts.length,
          envelope.length + artifacts.reduce((sum, a) => sum + a.content.length, 0),
          (options) => clients.releases.registerRelease({ envelope, artifacts }, options),
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(RegisterReleaseResponseSchema, response));
        } else {
          const r = response.release;
          ctx.stdout.write(
            response.created
              ? `registered release ${r?.version} (sequence ${r?.sequence}), signed by ${r?.signerKeyIds.join(", ")}\n`
              : `release ${r?.version} (sequence ${r?.sequence}) was already registered; nothing changed${skipped > 0 && artifacts.length === 0 ? ` (Control holds its artifact file${skipped === 1 ? "" : "s"}: nothing uploaded)` : ""}\n`,
          );
        }
        return 0;
      },
    },
    list: {
      summary: "List registered releases, newest sequence first",
      flags: {},
      details: "With --json the output is a ListReleasesResponse holding every release.",
      async run(ctx, { positionals }) {
        expectPositionals(positionals, []);
        const client = (await ctx.clients()).releases;
        const first = await client.listReleases({}, { signal: ctx.signal });
        const seen = new Set<string>();
        let page = first;
        while (page.nextPageToken !== "" && !seen.has(page.nextPageToken)) {
          seen.add(page.nextPageToken);
          page = await client.listReleases(
            { pageToken: page.nextPageToken },
            { signal: ctx.signal },
          );
          first.releases.push(...page.releases);
        }
        first.nextPageToken = "";
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(ListReleasesResponseSchema, first));
        } else if (first.releases.length === 0) {
          ctx.stderr.write("No releases registered.\n");
        } else {
          ctx.stdout.write(formatReleaseTable(first.releases));
        }
        return 0;
      },
    },
    prune: pruneCommand,
    yank: {
      summary: "Yank a release: never offered again, its running campaigns take on_breach",
      args: "VERSION",
      flags: {
        reason: {
          type: "string",
          value: "TEXT",
          description:
            "why it is yanked, for the audit log, its campaigns and desired list (required)",
        },
        ...YES_FLAG,
      },
      details:
        "A yanked release is never offered again: its running campaigns stop offering and take\n" +
        "their on_breach, a campaign start, plan or desired version naming it is refused\n" +
        "(release_yanked) and a desired version naming it is halted. Nodes already on it stay;\n" +
        "list them with `agentctl node list --version VERSION` to roll them forward. Yanking a\n" +
        "yanked release again changes nothing. With --json the output is a YankReleaseResponse.\n" +
        CONFIRM_DETAILS,
      async run(ctx, { values, positionals }) {
        const [version = ""] = expectPositionals(positionals, ["VERSION"]);
        const reason = (stringFlag(values, "reason") ?? "").trim();
        if (reason === "")
          throw new UsageError("--reason is required: say why the release is yanked");
        await confirmChange(ctx, values, {
          verb: "yank",
          refused: "not yanked",
          question: `Yank release ${version} (never offered again; its running campaigns take on_breach)?`,
        });
        const response = await (await ctx.clients()).releases.yankRelease(
          { version, reason },
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(YankReleaseResponseSchema, response));
          return 0;
        }
        const running =
          response.campaignIds.length === 0
            ? ""
            : `; running campaign(s) taking on_breach: ${response.campaignIds.join(", ")}`;
        ctx.stdout.write(
          response.yanked
            ? `release ${version} yanked${running}\n`
            : `release ${version} was already yanked (${response.release?.yankReason ?? ""}); nothing changed\n`,
        );
        return 0;
      },
    },
    show: {
      summary: "Show one release with its artifacts",
      args: "VERSION",
      flags: {},
      details: "With --json the output is a GetReleaseResponse (the envelope as base64).",
      async run(ctx, { positionals }) {
        const [version = ""] = expectPositionals(positionals, ["VERSION"]);
        const response = await (await ctx.clients()).releases.getRelease(
          { version },
          { signal: ctx.signal },
        );
        if (ctx.output === "json") {
          ctx.stdout.write(messageJson(GetReleaseResponseSchema, response));
        } else if (response.release !== undefined) {
          ctx.stdout.write(releaseDetails(response.release));
        }
        return 0;
      },
    },
  },
};
