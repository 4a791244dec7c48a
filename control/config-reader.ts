/**
 * Reads typed values out of the loose, merged config input (file + env + overrides),
 * recording each problem with the key's full name so one error lists them all.
 */
import { type ListenAddress, parseAddress } from "./shared/listen-address.js";

/** The JSON shape of the config file; every key optional. */
export type ConfigInput = Record<string, unknown>;

/** Roles of admin API tokens: viewers read, operators change. */
export type AdminRole = "viewer" | "operator";

/** An admin API token known from configuration (stored as its SHA-256, never in clear). */
export interface ConfiguredAdminToken {
  readonly name: string;
  readonly role: AdminRole;
  /** Lower-case hex SHA-256 of the token. */
  readonly sha256: string;
  /** From this instant on the token is refused ("token expired"); undefined: never. */
  readonly expires: Date | undefined;
}

/** Reads typed values out of loose input, recording each problem with the key's full name. */
export class Reader {
  constructor(private readonly problems: string[]) {}

  section(input: ConfigInput, key: string): ConfigInput {
    const value = input[key];
    if (value === undefined) return {};
    if (!isRecord(value)) {
      this.problems.push(`${key}: must be an object`);
      return {};
    }
    return value;
  }

  private raw(input: ConfigInput, name: string): unknown {
    return input[name.split(".").at(-1) ?? name];
  }

  string(input: ConfigInput, name: string, fallback: string): string {
    const value = this.raw(input, name);
    if (value === undefined) return fallback;
    if (typeof value !== "string" || value.length === 0) {
      this.problems.push(`${name}: must be a non-empty string`);
      return fallback;
    }
    return value;
  }

  optionalSecret(input: ConfigInput, name: string): string | undefined {
    const value = this.raw(input, name);
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.length < 16) {
      this.problems.push(`${name}: must be a string of at least 16 characters`);
      return undefined;
    }
    return value;
  }

  optionalUrl(input: ConfigInput, name: string, protocols: string[]): string | undefined {
    const value = this.raw(input, name);
    if (value === undefined) return undefined;
    if (typeof value !== "string") {
      this.problems.push(`${name}: must be a URL string`);
      return undefined;
    }
    try {
      const url = new URL(value);
      if (!protocols.includes(url.protocol)) {
        this.problems.push(
          `${name}: must start with ${protocols.map((p) => `${p}//`).join(" or ")}`,
        );
      }
    } catch {
      this.problems.push(`${name}: "${redactUrl(value)}" is not a valid URL`);
    }
    return value;
  }

  optionalSemver(input: ConfigInput, name: string): string | undefined {
    const value = this.raw(input, name);
    if (value === undefined) return undefined;
    if (typeof value !== "string" || !SEMVER.test(value)) {
      this.problems.push(`${name}: must be a semantic version such as 1.4.0`);
      return undefined;
    }
    return value;
  }

  address(input: ConfigInput, name: string, fallback: string): ListenAddress {
    const value = this.raw(input, name) ?? fallback;
    const parsed = typeof value === "string" ? parseAddress(value) : undefined;
    if (!parsed) {
      this.problems.push(`${name}: "${String(value)}" must be HOST:PORT with a port 0-65535`);
      return parseAddress(fallback) as ListenAddress;
    }
    return parsed;
  }

  /** An address that may be left unset (the feature then stays off or elsewhere). */
  optionalAddress(input: ConfigInput, name: string): ListenAddress | undefined {
    const value = this.raw(input, name);
    if (value === undefined) return undefined;
    const parsed = typeof value === "string" ? parseAddress(value) : undefined;
    if (!parsed)
      this.problems.push(`${name}: "${String(value)}" must be HOST:PORT with a port 0-65535`);
    return parsed;
  }

  /** true/false, or from the environment "true"/"false" (also 1/0, yes/no). */
  boolean(input: ConfigInput, name: string, fallback: boolean): boolean {
    const value = this.raw(input, name);
    if (value === undefined) return fallback;
    if (typeof value === "boolean") return value;
    if (typeof value === "string" && /^(true|1|yes)$/i.test(value)) return true;
    if (typeof value === "string" && /^(false|0|no)$/i.test(value)) return false;
    this.problems.push(`${name}: ${JSON.stringify(value)} must be true or false`);
    return fallback;
  }

  integer(input: ConfigInput, name: string, fallback: number, min: number, max: number): number {
    const value = this.number(input, name, fallback, min, max);
    if (!Number.isInteger(value)) {
      this.problems.push(`${name}: must be a whole number`);
      return fallback;
    }
    return value;
  }

  number(input: ConfigInput, name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(input, name);
    if (value === undefined) return fallback;
    const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isFinite(n) || n < min || n > max) {
      this.problems.push(
        `${name}: ${JSON.stringify(value)} must be a number from ${min} to ${max}`,
      );
      return fallback;
    }
    return n;
  }

  oneOf<T extends string>(input: ConfigInput, name: string, fallback: T, allowed: readonly T[]): T {
    const value = this.raw(input, name);
    if (value === undefined) return fallback;
    if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name}: must be one of ${allowed.join(", ")}`);
      return fallback;
    }
    return value as T;
  }

  stringList(input: ConfigInput, name: string): string[] {
    const value = this.raw(input, name);
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item)) {
      this.problems.push(`${name}: must be a list of non-empty strings`);
      return [];
    }
    return value as string[];
  }
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

function redactUrl(text: string): string {
  return text.replace(/\/\/[^@/]*@/, "//***@");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
