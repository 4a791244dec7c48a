import { describe, expect, it } from "vitest";
import { nextSort, orderByOf, sortMark } from "../../../ui/node-sort.js";
import { hrefOf, parseRoute } from "../../../ui/route.js";

describe("the node page's address", () => {
  it("reads #/nodes/ID as that node's page, and #/nodes as the list", () => {
    expect(parseRoute("#/nodes/web-00250")).toEqual({ page: "node", id: "web-00250" });
    expect(parseRoute("#/nodes")).toEqual({ page: "nodes" });
    expect(parseRoute("#/nodes/")).toEqual({ page: "nodes" });
  });

  it("links a node id that needs escaping and reads it back", () => {
    const href = hrefOf({ page: "node", id: "host:1/a" });
    expect(href).toBe("#/nodes/host%3A1%2Fa");
    expect(parseRoute(href)).toEqual({ page: "node", id: "host:1/a" });
  });
});

describe("the node list's sort", () => {
  it("sorts by a new column ascending, and reverses the column it sorts by", () => {
    const byId = { field: "node_id", descending: false } as const;
    const byPool = nextSort(byId, "pool");
    expect(byPool).toEqual({ field: "pool", descending: false });
    expect(nextSort(byPool, "pool")).toEqual({ field: "pool", descending: true });
    expect(nextSort({ field: "pool", descending: true }, "last_seen")).toEqual({
      field: "last_seen",
      descending: false,
    });
  });

  it("asks ListNodes for the column, with desc when reversed", () => {
    expect(orderByOf({ field: "agent_version", descending: false })).toBe("agent_version");
    expect(orderByOf({ field: "last_seen", descending: true })).toBe("last_seen desc");
  });

  it("marks only the column it sorts by", () => {
    const sort = { field: "pool", descending: true } as const;
    expect(sortMark(sort, "pool")).toBe(" ▼");
    expect(sortMark(sort, "node_id")).toBe("");
  });
});
