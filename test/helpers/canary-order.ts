/**
 * Canary order as a test computes it itself: HMAC-SHA-256 (RFC 2104) built by hand from
 * SHA-256 under the fleet's secret, read from the database the way no Control code reads it,
 * so a test never judges Control's order by Control's own function.
 */
import { createHash } from "node:crypto";
import pg from "pg";

/** The hex HMAC-SHA-256 of `nodeId` keyed with `secret` (the key hashed past 64 bytes). */
export function referenceOrderKey(nodeId: string, secret: string): string {
  let key = Buffer.from(secret, "utf8");
  if (key.length > 64) key = createHash("sha256").update(key).digest();
  const block = Buffer.alloc(64);
  key.copy(block);
  const pad = (byte: number) => Buffer.from(block.map((b) => b ^ byte));
  const inner = createHash("sha256").update(pad(0x36)).update(nodeId, "utf8").digest();
  return createHash("sha256").update(pad(0x5c)).update(inner).digest("hex");
}

/** `ids` in canary order under `secret`, none labelled canary=true. */
export function inReferenceOrder(ids: readonly string[], secret: string): string[] {
  return [...ids]
    .map((id) => ({ id, key: referenceOrderKey(id, secret) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.id);
}

/** The canary-order secret stored in the database at `url`. */
export async function fleetOrderSecret(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ value: string }>(
      "select value from fleet_settings where name = 'canary_order_secret'",
    );
    const value = rows[0]?.value;
    if (value === undefined) throw new Error("the database holds no canary_order_secret");
    return value;
  } finally {
    await client.end();
  }
}
