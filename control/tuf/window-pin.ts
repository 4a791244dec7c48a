/**
 * The timestamp window is fixed per timestamp key. The timestamp version counts windows
 * since the epoch (online-roles.ts), so a Control signing with another `windowMs` under the
 * same key would sign a lower version than the fleet already served (lengthening 1 h to
 * 1 day divides it by 24) and every Agent would refuse it as a rollback: the fleet frozen.
 * The first Control to sign with a key records its window in `fleet_settings`; a Control
 * configured otherwise refuses to start. A new window goes with a new timestamp key in root
 * (Agents verify nothing older under a new key, so its versions start afresh).
 */
import { tufSigner } from "../shared/tuf/keys.js";

/** The `fleet_settings` name under which the window of timestamp key `keyId` is recorded. */
export function windowSettingName(keyId: string): string {
  return `tuf.timestampWindowSeconds:${keyId}`;
}

/**
 * The configuration problem (one line, naming the setting) when `configuredSeconds` is not
 * the window `recorded` for the timestamp key `keyId`; undefined when they agree.
 */
export function windowPinProblem(
  keyId: string,
  recorded: string,
  configuredSeconds: number,
): string | undefined {
  if (recorded === String(configuredSeconds)) return undefined;
  return (
    `tuf.timestampWindowSeconds: ${configuredSeconds} is not ${recorded}, the window this fleet signs timestamps with under timestamp key ${keyId.slice(0, 16)} (recorded in the database); ` +
    `another window would move the timestamp version back and every Agent would refuse it; keep ${recorded}, or change the window together with a new timestamp key in root (agentctl tuf)`
  );
}

/** Records a fleet setting unless one is held, answering the value held (`recordFleetSetting`). */
export type RecordSetting = (name: string, value: string) => Promise<string>;

/**
 * Records this Control's window for its timestamp key when the fleet has none yet; answers
 * the {@link windowPinProblem} when the fleet recorded another one (then nothing is signed).
 */
export async function pinTimestampWindow(
  record: RecordSetting,
  timestampKey: Uint8Array,
  windowSeconds: number,
): Promise<string | undefined> {
  const keyId = (await tufSigner(timestampKey)).key.keyID;
  const recorded = await record(windowSettingName(keyId), String(windowSeconds));
  return windowPinProblem(keyId, recorded, windowSeconds);
}
