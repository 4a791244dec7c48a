/**
 * Reads migration SQL for the steps that break the release before it (expand/contract): a
 * table or column dropped or renamed, a column's type changed, a column made required, a table
 * emptied. The previous release runs beside the new one on the same schema during an upgrade,
 * so such a step may only land as a contract step, a release after the last release that read
 * what it removes. A reader of SQL by regular expressions, for the statements migrations write
 * (one statement or several separated by `;`); it errs towards reporting.
 */
import type { Migration } from "@mikro-orm/migrations";
import type { ReleasedMigration } from "../../control/db/migrations/index.js";

/** The kinds of step the previous release cannot run beside. */
export type BreakingKind =
  | "drop_table"
  | "drop_view"
  | "truncate"
  | "rename_table"
  | "drop_column"
  | "rename_column"
  | "retype_column"
  | "require_column"
  | "add_required_column";

/** One step that breaks the previous release: its kind and `table` or `table.column`. */
export interface BreakingStep {
  readonly kind: BreakingKind;
  readonly target: string;
}

/** A contract step allowed in `migration`: it removes what no release since `unreadSince - 1` reads. */
export interface ContractStep extends BreakingStep {
  readonly migration: string;
  /** The first release whose code no longer reads (or writes) the target. */
  readonly unreadSince: number;
}

const NAME = String.raw`("?[\w.]+"?)`;
const unquote = (name: string) => name.replaceAll('"', "");

/** Splits `text` at `separator` where no parenthesis or quote is open. */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

/** The breaking steps of one `alter table` action on `table`. */
function alterAction(table: string, action: string): BreakingStep[] {
  let m = new RegExp(String.raw`^drop\s+(?:column\s+)?(?:if\s+exists\s+)?${NAME}`).exec(action);
  if (m && !/^drop\s+(constraint|default|not\s+null|identity|expression)\b/.test(action)) {
    return [{ kind: "drop_column", target: `${table}.${unquote(m[1] as string)}` }];
  }
  if (/^rename\s+to\s/.test(action)) return [{ kind: "rename_table", target: table }];
  m = new RegExp(String.raw`^rename\s+(?:column\s+)?${NAME}\s+to\s`).exec(action);
  if (m && !/^rename\s+constraint\b/.test(action)) {
    return [{ kind: "rename_column", target: `${table}.${unquote(m[1] as string)}` }];
  }
  m = new RegExp(String.raw`^alter\s+(?:column\s+)?${NAME}\s+(.*)$`).exec(action);
  if (m) {
    const target = `${table}.${unquote(m[1] as string)}`;
    const rest = m[2] as string;
    if (/^(set\s+data\s+)?type\s/.test(rest)) return [{ kind: "retype_column", target }];
    if (/^set\s+not\s+null\b/.test(rest)) return [{ kind: "require_column", target }];
    return [];
  }
  m = new RegExp(String.raw`^add\s+(?:column\s+)?(?:if\s+not\s+exists\s+)?${NAME}\s+(.*)$`).exec(
    action,
  );
  if (m && !/^add\s+(constraint|primary|foreign|unique|check|exclude)\b/.test(action)) {
    const rest = m[2] as string;
    const required = /\bnot\s+null\b/.test(rest) && !/\b(default|generated)\b/.test(rest);
    if (required) {
      return [{ kind: "add_required_column", target: `${table}.${unquote(m[1] as string)}` }];
    }
  }
  return [];
}

/** The steps of `sql` (one or more statements) that the previous release cannot run beside. */
export function breakingSteps(sql: string): BreakingStep[] {
  const text = sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\s+/g, " ")
    .toLowerCase();
  const steps: BreakingStep[] = [];
  for (const statement of splitTopLevel(text, ";")) {
    let m =
      /^drop\s+(table|view|materialized\s+view)\s+(?:if\s+exists\s+)?(.+?)(?:\s+(?:cascade|restrict))?$/.exec(
        statement,
      );
    if (m) {
      const kind = m[1] === "table" ? "drop_table" : "drop_view";
      for (const name of splitTopLevel(m[2] as string, ",")) {
        steps.push({ kind, target: unquote(name) });
      }
      continue;
    }
    m =
      /^truncate\s+(?:table\s+)?(?:only\s+)?(.+?)(?:\s+(?:restart|continue|cascade|restrict)\b.*)?$/.exec(
        statement,
      );
    if (m) {
      for (const name of splitTopLevel(m[1] as string, ",")) {
        steps.push({ kind: "truncate", target: unquote(name) });
      }
      continue;
    }
    m = new RegExp(
      String.raw`^alter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?${NAME}\s+(.*)$`,
    ).exec(statement);
    if (m) {
      const table = unquote(m[1] as string);
      for (const action of splitTopLevel(m[2] as string, ",")) {
        steps.push(...alterAction(table, action));
      }
    }
  }
  return steps;
}

/** The SQL a migration's `up()` adds (every migration here writes plain SQL with `addSql`). */
export async function upSql(migration: ReleasedMigration): Promise<string[]> {
  // Every migration extends @mikro-orm/migrations' Migration, which collects what addSql adds.
  const instance = new migration.class({} as never, {} as never) as unknown as Migration;
  await instance.up();
  return instance.getQueries().map(String);
}

/**
 * Judges `migrations` (oldest first) against the expand/contract rule: each breaking step
 * must be a listed contract step whose migration's release is above `unreadSince` (so the
 * release running beside it, one before, no longer reads the target); every listed contract
 * step must exist. Returns one line per problem, none when the rule holds.
 */
export async function expandContractProblems(
  migrations: readonly ReleasedMigration[],
  contract: readonly ContractStep[],
): Promise<string[]> {
  const problems: string[] = [];
  const used = new Set<ContractStep>();
  for (const migration of migrations) {
    for (const sql of await upSql(migration)) {
      for (const step of breakingSteps(sql)) {
        const allowed = contract.find(
          (c) => c.migration === migration.name && c.kind === step.kind && c.target === step.target,
        );
        const what = `${migration.name} (release ${migration.release}): ${step.kind} ${step.target}`;
        if (!allowed) {
          problems.push(`${what} breaks the previous release and is no listed contract step`);
          continue;
        }
        used.add(allowed);
        if (migration.release <= allowed.unreadSince) {
          problems.push(
            `${what} lands before release ${allowed.unreadSince + 1}: release ${migration.release - 1} still reads it`,
          );
        }
      }
    }
  }
  for (const c of contract) {
    if (!used.has(c))
      problems.push(`contract step ${c.migration}: ${c.kind} ${c.target} is in no migration`);
  }
  return problems;
}
