/**
 * The embedded cluster runs only as its owner: `postgres` when Control is root, else the user
 * running Control. A cluster another user owns is named, with the fix, in one line.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterOwnerProblem } from "../../../control/db/postgres-user-access.js";

const me = process.getuid?.() ?? 0;

describe("clusterOwnerProblem", () => {
  let dataDir = "";
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "pg-owner-"));
    await mkdir(join(dataDir, "postgres"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("accepts a cluster of the user the server runs as, and no cluster yet", () => {
    expect(clusterOwnerProblem(dataDir, { root: false, uid: me })).toBeUndefined();
    expect(
      clusterOwnerProblem(dataDir, { root: true, account: { uid: me, gids: [] } }),
    ).toBeUndefined();
    expect(
      clusterOwnerProblem(join(dataDir, "none"), { root: false, uid: me + 1 }),
    ).toBeUndefined();
  });

  it("names a cluster another user owns when Control is not root, and the chown that fixes it", () => {
    const problem = clusterOwnerProblem(dataDir, { root: false, uid: 54_321 });
    expect(problem).toContain(`its cluster ${join(dataDir, "postgres")} belongs to`);
    expect(problem).toContain("the server runs as the user running Control, uid 54321");
    expect(problem).toContain(`chown -R 54321 ${dataDir}`);
    expect(problem).not.toContain("\n");
  });

  it("names a cluster the postgres user does not own when Control is root", () => {
    const problem = clusterOwnerProblem(dataDir, {
      root: true,
      account: { uid: 54_321, gids: [] },
    });
    expect(problem).toContain(
      'Control runs as root, so the server runs as user "postgres" (uid 54321)',
    );
    expect(problem).toContain(`chown -R postgres ${join(dataDir, "postgres")}`);
  });
});
