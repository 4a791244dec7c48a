/**
 * `fleet_settings`: values one fleet shares across its Controls and fixes once (migration
 * 0015). The first Control to record a setting decides it; every later one reads it back.
 */
import type pg from "pg";

/**
 * Records `value` under `name` unless the fleet already holds one, and returns what the fleet
 * holds now (the caller's value when it was the first, else the recorded one). Atomic: two
 * Controls recording at once both get the same answer.
 */
export async function recordFleetSetting(
  pool: pg.Pool,
  name: string,
  value: string,
): Promise<string> {
  await pool.query(
    "insert into fleet_settings (name, value) values ($1, $2) on conflict (name) do nothing",
    [name, value],
  );
  const result = await pool.query<{ value: string }>(
    "select value from fleet_settings where name = $1",
    [name],
  );
  const held = result.rows[0]?.value;
  if (held === undefined) throw new Error(`fleet_settings lost ${name}`);
  return held;
}
