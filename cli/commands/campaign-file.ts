/**
 * A campaign as a file: `campaign plan|start -f campaign.yaml`. The file's fields are
 * `campaign start`'s flags (`version`, `batches`, `threshold`, `on-breach`, `selector`, …; see
 * campaign-fields.ts for how a spec is written so), read into flag values and built by
 * {@link specFromFlags}, the code that checks the flags. A file may also be what
 * `campaign show ID -o yaml` (or `--json`) printed: its `campaign.spec` is taken, and the
 * campaign's state beside it (id, phase, batches, counts, nodes, …) is ignored, as
 * `kubectl apply` ignores a status.
 */
import type { CampaignSpec } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  CampaignSchema,
  GetCampaignResponseSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type FlagValues, stringFlag, UsageError } from "../args.js";
import {
  asFileError,
  flagValuesFromFields,
  isMapping,
  readFieldFile,
  refuseFlagsBesideFile,
} from "../flag-file.js";
import { didYouMean } from "../suggest.js";
import { SPEC_FLAGS, specFromFlags } from "./campaign-spec.js";

const SHOWN_KEYS = GetCampaignResponseSchema.fields.map((f) => f.jsonName);
const CAMPAIGN_KEYS = CampaignSchema.fields.map((f) => f.jsonName);

/**
 * The spec fields of a campaign file: the document itself, or the `campaign.spec` of a
 * document `campaign show` printed (one with a top-level `campaign`).
 * @throws UsageError naming a field of a shown document that `campaign show` does not print
 */
export function specFieldsOf(doc: unknown, source: string): unknown {
  if (!isMapping(doc) || !("campaign" in doc)) return doc;
  for (const key of Object.keys(doc)) {
    if (!SHOWN_KEYS.includes(key)) {
      throw new UsageError(
        `${source}: unknown field "${key}" beside "campaign"${didYouMean(key, SHOWN_KEYS)} (a file from campaign show has campaign and nodes)`,
      );
    }
  }
  const campaign = doc.campaign;
  if (!isMapping(campaign)) throw new UsageError(`${source}: field "campaign" must be a mapping`);
  for (const key of Object.keys(campaign)) {
    if (!CAMPAIGN_KEYS.includes(key)) {
      throw new UsageError(
        `${source}: unknown field "campaign.${key}"${didYouMean(key, CAMPAIGN_KEYS)}`,
      );
    }
  }
  if (campaign.spec === undefined) {
    throw new UsageError(`${source}: field "campaign" has no "spec" to start from`);
  }
  return campaign.spec;
}

/**
 * The spec a campaign file describes, checked as its flags are.
 * @throws UsageError naming the file and the field at fault
 */
export function specFromDocument(doc: unknown, source: string): CampaignSpec {
  const fields = specFieldsOf(doc, source);
  const values = flagValuesFromFields(
    fields,
    SPEC_FLAGS,
    `${source}${fields === doc ? "" : " (campaign.spec)"}`,
  );
  try {
    return specFromFlags(values);
  } catch (error) {
    throw asFileError(error, source);
  }
}

/**
 * The spec of `campaign plan|start`: from `-f FILE` when given (no spec flag may be given
 * beside it), else from the flags.
 */
export async function specFromFlagsOrFile(values: FlagValues): Promise<CampaignSpec> {
  const file = stringFlag(values, "file");
  if (file === undefined) return specFromFlags(values);
  refuseFlagsBesideFile(values, SPEC_FLAGS);
  return specFromDocument(await readFieldFile(file), file);
}
