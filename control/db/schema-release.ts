/**
 * The schema release: one number, kept in the `schema_release` row, that says which release of
 * Control's migrations the database has seen. Two Control releases run side by side on one
 * database during an upgrade (expand/contract: a release never drops or renames what the
 * previous one reads), so a Control accepts a schema up to one release ahead of its own and
 * refuses one further ahead, before it migrates anything.
 *
 * A Control's release is the highest `release` of its migrations
 * (control/db/migrations/index.ts). A schema that predates the row (migrations 0001 to 0017)
 * is release 1.
 */
import { MIGRATIONS } from "./migrations/index.js";

/** The highest schema release this Control understands: the newest release of its migrations. */
export const SCHEMA_RELEASE: number = Math.max(...MIGRATIONS.map((m) => m.release));

/** The release of a schema that has no `schema_release` row (it predates the record). */
export const FIRST_SCHEMA_RELEASE = 1;

/** What a Control makes of the schema it finds, judged by {@link judgeSchemaRelease}. */
export type SchemaVerdict =
  /** At or behind this Control's release: it migrates the schema up to its own. */
  | { readonly kind: "migrate"; readonly stored: number; readonly known: number }
  /** One release ahead (a newer Control migrated it during an upgrade): runs beside it as is. */
  | { readonly kind: "one_ahead"; readonly stored: number; readonly known: number }
  /** More than one release ahead: this Control may read columns that are gone, so it refuses. */
  | { readonly kind: "too_new"; readonly stored: number; readonly known: number };

/**
 * Judges a stored schema release against the release this Control knows: behind or equal
 * migrates, one ahead runs, more than one ahead refuses. Both must be positive integers.
 */
export function judgeSchemaRelease(stored: number, known: number): SchemaVerdict {
  for (const [name, value] of [
    ["stored", stored],
    ["known", known],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < FIRST_SCHEMA_RELEASE) {
      throw new RangeError(`${name} schema release must be a positive integer, got ${value}`);
    }
  }
  if (stored <= known) return { kind: "migrate", stored, known };
  if (stored === known + 1) return { kind: "one_ahead", stored, known };
  return { kind: "too_new", stored, known };
}

/**
 * Control refuses to start: the database's schema is more than one release ahead of it. The
 * message is the one line printed on stderr (after `control: `).
 */
export class SchemaTooNewError extends Error {
  constructor(
    readonly stored: number,
    readonly known: number,
  ) {
    super(
      `database schema is at release ${stored}, more than one release ahead of this Control (release ${known}); run a Control of release ${stored - 1} or newer (docs/operator-guide.md, Upgrading Control)`,
    );
    this.name = "SchemaTooNewError";
  }
}

/** A connection that runs one SQL statement with `$n` parameters and returns its rows. */
export type RunSql = (sql: string, params?: readonly unknown[]) => Promise<readonly unknown[]>;

/** The database's schema release; {@link FIRST_SCHEMA_RELEASE} where no row records one. */
export async function readSchemaRelease(run: RunSql): Promise<number> {
  const [table] = (await run("select to_regclass('schema_release') is not null as present")) as {
    present: boolean;
  }[];
  if (!table?.present) return FIRST_SCHEMA_RELEASE;
  const [row] = (await run("select release from schema_release")) as { release: number }[];
  return row === undefined ? FIRST_SCHEMA_RELEASE : Number(row.release);
}

/**
 * Records that the schema has reached `release` (after this Control's migrations ran). Never
 * lowers it: a Control running beside a newer one leaves the newer release standing.
 */
export async function recordSchemaRelease(run: RunSql, release: number): Promise<void> {
  await run(
    `insert into schema_release (singleton, release) values (true, $1)
     on conflict (singleton) do update
       set release = excluded.release, recorded_at = now()
       where schema_release.release < excluded.release`,
    [release],
  );
}
