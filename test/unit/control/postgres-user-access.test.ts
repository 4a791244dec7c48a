import { chmod, chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUserAccessProblem } from "../../../control/db/postgres-user-access.js";

// Real directories and modes; the `postgres` account is stated, so the rules are tested
// whoever runs them (chown needs root, and those cases are skipped otherwise).
const POSTGRES = { uid: 4242, gids: [4343] };
const asRoot = process.getuid?.() === 0;

describe("postgresUserAccessProblem", () => {
  let base = "";
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "pg-access-"));
    await chmod(base, 0o755);
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const parent = async (name: string, mode: number): Promise<string> => {
    const dir = join(base, name);
    await mkdir(dir);
    await chmod(dir, mode);
    return dir;
  };
  const check = (dataDir: string, binariesDir?: string) =>
    postgresUserAccessProblem(dataDir, {
      root: true,
      account: POSTGRES,
      binariesDir: binariesDir ?? base,
    });

  it("names a 0700 parent of the data directory, its mode, and the ways out", async () => {
    const closed = await parent("closed", 0o700);
    const problem = check(join(closed, "data"));
    expect(problem).toContain(`cannot enter ${closed} (mode 0700)`);
    expect(problem).toContain(`on the way to ${join(closed, "data", "postgres")}`);
    expect(problem).toContain(`chmod o+x ${closed}`);
    expect(problem).toContain("DATABASE_URL");
    expect(problem).toContain('user "postgres"');
    expect(problem).not.toContain("\n");
  });

  it("accepts a parent every user can enter, and a data directory that does not exist yet", async () => {
    const open = await parent("open", 0o711);
    expect(check(join(open, "data"))).toBeUndefined();
    expect(check(join(open, "not", "yet", "data"))).toBeUndefined();
  });

  it("judges only the parents: Control makes the data directory itself enterable", async () => {
    const own = await parent("own-0700", 0o700);
    expect(check(own)).toBeUndefined();
  });

  it("names a closed directory on the way to the server binaries", async () => {
    const closed = await parent("checkout", 0o700);
    const problem = check(join(base, "data"), join(closed, "node_modules", "bin"));
    expect(problem).toContain(`cannot enter ${closed} (mode 0700) to run the server binaries`);
  });

  it("is silent when Control is not root", async () => {
    const closed = await parent("closed-not-root", 0o700);
    expect(postgresUserAccessProblem(join(closed, "data"), { root: false })).toBeUndefined();
  });

  it.skipIf(!asRoot)("lets the owner or the group of postgres pass by their own bits", async () => {
    const owned = await parent("owned", 0o700);
    await chown(owned, POSTGRES.uid, 0);
    expect(check(join(owned, "data"))).toBeUndefined();
    const grouped = await parent("grouped", 0o710);
    await chown(grouped, 0, POSTGRES.gids[0]!);
    expect(check(join(grouped, "data"))).toBeUndefined();
    const ownerWithoutX = await parent("owned-no-x", 0o601);
    await chown(ownerWithoutX, POSTGRES.uid, 0);
    expect(check(join(ownerWithoutX, "data"))).toContain(`cannot enter ${ownerWithoutX}`);
  });
});
