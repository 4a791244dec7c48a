import { beforeEach, describe, expect, it } from "vitest";
import { savedToken, takeTokenFromFragment } from "../../../ui/token.js";

/** The parts of Location and History the fragment reader uses, recorded. */
function address(hash: string) {
  const replaced: string[] = [];
  const location = { hash, pathname: "/ui/", search: "" } as Location;
  const history = {
    state: null,
    replaceState: (_state: unknown, _title: string, url: string) => {
      replaced.push(url);
    },
  } as unknown as History;
  return { location, history, replaced };
}

describe("the dashboard's token in the URL fragment", () => {
  beforeEach(() => {
    const store = new Map<string, string>();
    Object.assign(globalThis, {
      sessionStorage: {
        getItem: (k: string) => store.get(k) ?? null,
        setItem: (k: string, v: string) => store.set(k, v),
        removeItem: (k: string) => store.delete(k),
      },
    });
  });

  it("keeps the page a link names after the token (#token=…&/fleet deep-links)", () => {
    const { location, history, replaced } = address("#token=s3cret&/fleet");
    expect(takeTokenFromFragment(location, history)).toBe("s3cret");
    expect(savedToken()).toBe("s3cret");
    expect(replaced).toEqual(["/ui/#/fleet"]);
  });

  it("drops the fragment when it names no page, so no history entry holds the token", () => {
    const { location, history, replaced } = address("#token=s3cret");
    expect(takeTokenFromFragment(location, history)).toBe("s3cret");
    expect(replaced).toEqual(["/ui/"]);
  });

  it("keeps a campaign's page with an encoded id", () => {
    const { location, history, replaced } = address("#token=a%2Bb&/campaigns/c-1");
    expect(takeTokenFromFragment(location, history)).toBe("a+b");
    expect(replaced).toEqual(["/ui/#/campaigns/c-1"]);
  });

  it("leaves an address without a token alone", () => {
    const { location, history, replaced } = address("#/fleet");
    expect(takeTokenFromFragment(location, history)).toBeUndefined();
    expect(replaced).toEqual([]);
  });
});
