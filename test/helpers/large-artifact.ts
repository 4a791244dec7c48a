/**
 * Stores a large artifact for download tests without the test process ever holding it: the
 * bytes are made inside PostgreSQL, with a release row that serves them.
 */
import type { TestControl } from "./control.js";

/**
 * Makes a `size`-byte artifact (a multiple of 64) inside PostgreSQL and a release row
 * `version` serving it for `linux-amd64`; returns its sha256. 64 distinct bytes per row
 * (sha512 of the row number): no period a chunk could hide in.
 */
export async function storeLargeArtifact(
  tc: TestControl,
  version: string,
  size: number,
  sequence = 70,
): Promise<string> {
  if (size % 64 !== 0) throw new RangeError(`size must be a multiple of 64, got ${size}`);
  const pool = tc.control.db.pool;
  const made = await pool.query<{ sha256: string; size: string }>(
    `with blob as (
       select string_agg(sha512(int4send(i)), ''::bytea order by i) as content
       from generate_series(0, $1::int - 1) as i)
     insert into artifact_files (sha256, size, content)
     select encode(sha256(content), 'hex'), octet_length(content), content from blob
     returning sha256, size`,
    [size / 64],
  );
  const row = made.rows[0];
  if (!row || Number(row.size) !== size) throw new Error("artifact not made");
  await pool.query(
    `insert into releases (version, sequence, envelope, envelope_sha256, expires_at,
       registered_at, registered_by, signer_key_ids, artifacts)
     values ($1, $4, '\\x00', $2, now() + interval '1 day', now(), 'test', '[]', $3)`,
    [
      version,
      `envelope-of-${version}`,
      JSON.stringify([{ platform: "linux-amd64", sha256: row.sha256, size, url: "" }]),
      sequence,
    ],
  );
  return row.sha256;
}
