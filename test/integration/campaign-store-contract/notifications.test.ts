/**
 * The campaign store contract (see ./harness.ts), run against both adapters: notifications
 * (notify and listen), on channels of the tests' own.
 */
import { afterEach, describe, expect, it } from "vitest";
import { describeStoreContract } from "./harness.js";

describeStoreContract("notifications", ({ store }) => {
  describe("notify and listen", () => {
    type Heard = { channel: string; lines: readonly string[] };
    const stops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0)) await stop();
    });
    const until = async (done: () => boolean, what: string) => {
      for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      if (!done()) throw new Error(`timed out waiting for ${what}`);
    };
    /** Listens on `channels`; resolves once the listener is established (its first gap). */
    const listener = async (channels: readonly string[]) => {
      const heard: Heard[] = [];
      let gaps = 0;
      stops.push(
        store.listen(channels, {
          onNotify: (channel, lines) => heard.push({ channel, lines }),
          onGap: () => {
            gaps += 1;
          },
        }),
      );
      await until(() => gaps > 0, "the listener");
      return { heard, gaps: () => gaps };
    };

    it("delivers each notification's lines, in order, to every listener of its channel only, the sender's included", async () => {
      const both = await listener(["contract_a", "contract_b"]);
      const onlyA = await listener(["contract_a"]);
      await store.notify("contract_a", ["n1", "n2"]);
      await store.notify("contract_b", ["c1/n3"]);
      await store.notify("contract_c", ["nobody"]);
      await store.notify("contract_a", []);
      await until(() => both.heard.length >= 2 && onlyA.heard.length >= 1, "notifications");
      expect(both.heard).toEqual([
        { channel: "contract_a", lines: ["n1", "n2"] },
        { channel: "contract_b", lines: ["c1/n3"] },
      ]);
      expect(onlyA.heard).toEqual([{ channel: "contract_a", lines: ["n1", "n2"] }]);
      expect(both.gaps()).toBe(1);
    });

    it("packs many lines into payloads under PostgreSQL's 8000-byte limit and loses none", async () => {
      const l = await listener(["contract_many"]);
      const lines = Array.from({ length: 2000 }, (_, i) => `campaign-${i}/node-${"x".repeat(30)}`);
      await store.notify("contract_many", lines);
      await until(() => l.heard.flatMap((h) => h.lines).length >= lines.length, "every line");
      expect(l.heard.length).toBeGreaterThan(1);
      expect(l.heard.flatMap((h) => h.lines)).toEqual(lines);
    });

    it("delivers nothing more once the listener stopped", async () => {
      const l = await listener(["contract_stop"]);
      const stop = stops.pop() as () => Promise<void>;
      await stop();
      await store.notify("contract_stop", ["late"]);
      const other = await listener(["contract_stop"]);
      await store.notify("contract_stop", ["later"]);
      await until(() => other.heard.length >= 1, "the other listener");
      expect(l.heard).toEqual([]);
    });
  });
});
