/**
 * The health checks a release carries in its signed manifest (`health`): what the Agent runs
 * on the node after the new version starts and before it reports the upgrade a success.
 * Being part of the signed bytes, only the release keys can change them. Parsed strictly:
 * unknown fields and out-of-range values are refused with the field that is wrong.
 */
import { ReleaseError } from "./errors.js";
import { isJsonObject } from "./strict-json.js";

/**
 * A command run without a shell: `command` (the program, looked up on the Agent's PATH when
 * not absolute) with `args`, killed after `timeoutSeconds`; it passes when it exits with
 * `exitCode`.
 */
export interface CommandHealthCheck {
  kind: "command";
  name: string;
  command: string;
  args: string[];
  timeoutSeconds: number;
  exitCode: number;
}

/** An HTTP GET of `http://127.0.0.1:{port}{path}`; it passes on a 2xx status within `timeoutSeconds`. */
export interface HttpHealthCheck {
  kind: "http";
  name: string;
  port: number;
  path: string;
  timeoutSeconds: number;
}

/** One health check. */
export type HealthCheck = CommandHealthCheck | HttpHealthCheck;

/**
 * The release's checks: every check runs once, then again every `intervalSeconds` until
 * `periodSeconds` have passed since the first round (0: one round). The first failure ends it.
 */
export interface ReleaseHealth {
  checks: HealthCheck[];
  periodSeconds: number;
  intervalSeconds: number;
}

/** Bounds of a manifest's `health`. */
export const HEALTH_LIMITS = Object.freeze({
  maxChecks: 16,
  maxPeriodSeconds: 3600,
  maxTimeoutSeconds: 300,
  maxIntervalSeconds: 300,
  maxArgs: 64,
  maxText: 1024,
});

const HEALTH_KEYS = ["checks", "periodSeconds", "intervalSeconds"];
const COMMAND_KEYS = ["kind", "name", "command", "args", "timeoutSeconds", "exitCode"];
const HTTP_KEYS = ["kind", "name", "port", "path", "timeoutSeconds"];
const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const PRINTABLE = /^[ -~]+$/;
const DEFAULT_TIMEOUT_SECONDS = 10;
const DEFAULT_INTERVAL_SECONDS = 5;

/**
 * Parses a manifest's `health` value. Guarantees on return: 1 to 16 checks with distinct
 * names; every number is an integer within {@link HEALTH_LIMITS}; defaults filled in
 * (`args` [], `exitCode` 0, `path` "/", `timeoutSeconds` 10, `periodSeconds` 0,
 * `intervalSeconds` 5). Throws {@link ReleaseError} `malformed_manifest` naming the field.
 */
export function parseHealth(value: unknown): ReleaseHealth {
  const doc = object(value, "the manifest's health", HEALTH_KEYS);
  const checks = doc.checks;
  if (!Array.isArray(checks) || checks.length === 0 || checks.length > HEALTH_LIMITS.maxChecks) {
    fail(`the manifest's health.checks must be a list of 1 to ${HEALTH_LIMITS.maxChecks} checks`);
  }
  const parsed = checks.map((c, i) => parseCheck(c, `health.checks[${i}]`));
  const names = new Set<string>();
  for (const check of parsed) {
    if (names.has(check.name)) fail(`the manifest's health names check "${check.name}" twice`);
    names.add(check.name);
  }
  return {
    checks: parsed,
    periodSeconds: int(
      doc.periodSeconds,
      "health.periodSeconds",
      0,
      HEALTH_LIMITS.maxPeriodSeconds,
      0,
    ),
    intervalSeconds: int(
      doc.intervalSeconds,
      "health.intervalSeconds",
      1,
      HEALTH_LIMITS.maxIntervalSeconds,
      DEFAULT_INTERVAL_SECONDS,
    ),
  };
}

function parseCheck(value: unknown, where: string): HealthCheck {
  const kind = isJsonObject(value) ? value.kind : undefined;
  if (kind !== "command" && kind !== "http") {
    fail(`the manifest's ${where}.kind must be "command" or "http"`);
  }
  const doc = object(
    value,
    `the manifest's ${where}`,
    kind === "command" ? COMMAND_KEYS : HTTP_KEYS,
  );
  const name = doc.name;
  if (typeof name !== "string" || !NAME.test(name)) {
    fail(`the manifest's ${where}.name must be 1 to 64 characters of [A-Za-z0-9._-]`);
  }
  const timeoutSeconds = int(
    doc.timeoutSeconds,
    `${where}.timeoutSeconds`,
    1,
    HEALTH_LIMITS.maxTimeoutSeconds,
    DEFAULT_TIMEOUT_SECONDS,
  );
  if (kind === "http") {
    const path = doc.path ?? "/";
    if (typeof path !== "string" || !path.startsWith("/") || !text(path)) {
      fail(`the manifest's ${where}.path must start with "/" and be printable ASCII`);
    }
    return { kind, name, port: int(doc.port, `${where}.port`, 1, 65535), path, timeoutSeconds };
  }
  const command = doc.command;
  if (typeof command !== "string" || !text(command)) {
    fail(`the manifest's ${where}.command must be a program name or path of printable ASCII`);
  }
  const args = doc.args ?? [];
  if (
    !Array.isArray(args) ||
    args.length > HEALTH_LIMITS.maxArgs ||
    !args.every((a) => typeof a === "string" && a.length <= HEALTH_LIMITS.maxText)
  ) {
    fail(`the manifest's ${where}.args must be a list of at most ${HEALTH_LIMITS.maxArgs} strings`);
  }
  const exitCode = int(doc.exitCode, `${where}.exitCode`, 0, 255, 0);
  return { kind, name, command, args: args as string[], timeoutSeconds, exitCode };
}

function object(value: unknown, where: string, keys: readonly string[]): Record<string, unknown> {
  if (!isJsonObject(value)) fail(`${where} must be an object`);
  const unknown = Object.keys(value).filter((k) => !keys.includes(k));
  if (unknown.length > 0) {
    fail(
      `${where} has unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; allowed: ${keys.join(", ")}`,
    );
  }
  return value;
}

function int(value: unknown, where: string, min: number, max: number, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    fail(`the manifest's ${where} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function text(value: string): boolean {
  return value.length <= HEALTH_LIMITS.maxText && PRINTABLE.test(value);
}

function fail(message: string): never {
  throw new ReleaseError("malformed_manifest", message);
}

/**
 * The longest a release's checks can take on a node that passes them: the period plus one
 * last round in which every check runs to its timeout. The Agent's supervisor adds it to the
 * start deadline of a version on trial.
 */
export function healthBudgetMs(health: ReleaseHealth | undefined): number {
  if (health === undefined) return 0;
  const round = health.checks.reduce((sum, c) => sum + c.timeoutSeconds, 0);
  return (health.periodSeconds + health.intervalSeconds + round) * 1000;
}
