/**
 * A command's flags as a file (`-f FILE`): YAML (or JSON, which is YAML) whose fields are the
 * flags' names and whose values are what the flags take, so a file is checked by the very
 * code that checks the flags. Every scalar is read as text (YAML's failsafe schema: `1.10`
 * stays `1.10`, `5` is the `5` a flag would get); a repeatable flag takes a list, and one of
 * `K=V` values a mapping as well (`selector: {env: prod}`). A field that is no flag of the
 * command is refused by name, with the closest flag when one is near.
 */
import { readFile } from "node:fs/promises";
import { type FlagSpecs, type FlagValues, UsageError } from "./args.js";
import { didYouMean } from "./suggest.js";

/** The `-f` flag of a command that takes its flags from a file. */
export const FILE_FLAG: FlagSpecs = {
  file: {
    type: "string",
    short: "f",
    value: "FILE",
    description: "take the fields from this YAML or JSON file (each flag is a field of it)",
  },
};

/**
 * Parses YAML text with every scalar as a string.
 * @throws UsageError naming `source` and the line of a syntax error
 */
export async function parseFieldText(text: string, source: string): Promise<unknown> {
  const yaml = await import("yaml");
  // Bundled, the package's CommonJS build may arrive as the default export only.
  const { parseDocument } =
    typeof yaml.parseDocument === "function"
      ? yaml
      : (yaml as unknown as { default: typeof yaml }).default;
  const document = parseDocument(text, { schema: "failsafe", uniqueKeys: true });
  const error = document.errors[0];
  if (error !== undefined) {
    throw new UsageError(`${source}: not YAML or JSON: ${error.message.split("\n")[0]}`);
  }
  return document.toJS();
}

/**
 * Reads `path` and parses it as {@link parseFieldText} does.
 * @throws UsageError when the file cannot be read or parsed, naming it
 */
export async function readFieldFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${path}: ${code === "ENOENT" ? "no such file" : String((error as Error).message)}`,
    );
  }
  return await parseFieldText(text, path);
}

/** True for a YAML mapping read by {@link parseFieldText}. */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const isKeyValueFlag = (placeholder: string | undefined): boolean =>
  placeholder === "K=V" || placeholder === "KEY=VALUE";

/**
 * The flag values a mapping of fields gives, checked against `flags` (each field one flag's
 * long name). Only string flags can be fields.
 * @throws UsageError naming `source` and the field: unknown, or of the wrong shape
 */
export function flagValuesFromFields(doc: unknown, flags: FlagSpecs, source: string): FlagValues {
  if (!isMapping(doc)) {
    throw new UsageError(`${source}: expected a mapping of fields, such as "version: 1.4.0"`);
  }
  const names = Object.keys(flags).filter((n) => flags[n]?.type === "string");
  const values: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(doc)) {
    const spec = names.includes(name) ? flags[name] : undefined;
    if (spec === undefined) {
      throw new UsageError(`${source}: unknown field "${name}"${didYouMean(name, names)}`);
    }
    if (spec.multiple === true) {
      if (typeof value === "string") values[name] = [value];
      else if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
        values[name] = value as string[];
      } else if (isMapping(value) && isKeyValueFlag(spec.value)) {
        values[name] = Object.entries(value).map(([k, v]) => {
          if (typeof v !== "string") {
            throw new UsageError(`${source}: field "${name}": the value of ${k} must be text`);
          }
          return `${k}=${v}`;
        });
      } else {
        const shape = isKeyValueFlag(spec.value) ? "a mapping or a list" : "a list";
        throw new UsageError(`${source}: field "${name}" must be ${shape} of text values`);
      }
    } else if (typeof value === "string") {
      values[name] = value;
    } else {
      throw new UsageError(`${source}: field "${name}" takes one value, not a list or mapping`);
    }
  }
  return values;
}

/**
 * A flag parser's {@link UsageError} as the file's: `invalid value "x" for --threshold` becomes
 * `FILE: invalid value "x" for field "threshold"`. Other errors pass unchanged.
 */
export function asFileError(error: unknown, source: string): unknown {
  if (!(error instanceof UsageError)) return error;
  const message = error.message
    .replace(/missing required flag --([a-z][a-z-]*)/g, 'missing required field "$1"')
    .replace(/--([a-z][a-z-]*)/g, 'field "$1"');
  return new UsageError(`${source}: ${message}`);
}

/**
 * The flags of `fileFlags` given beside `-f`: a command whose fields come from a file takes
 * none of them from the command line.
 * @throws UsageError naming them
 */
export function refuseFlagsBesideFile(values: FlagValues, fileFlags: FlagSpecs): void {
  const given = Object.keys(fileFlags).filter((n) => values[n] !== undefined);
  if (given.length > 0) {
    const list = given.map((n) => `--${n}`).join(", ");
    throw new UsageError(
      `${list} and -f both set fields: with -f the file is the whole spec; edit the file instead`,
    );
  }
}
