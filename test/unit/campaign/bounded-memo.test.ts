import { describe, expect, it } from "vitest";
import { boundedMemo } from "../../../control/campaign/bounded-memo.js";

describe("boundedMemo", () => {
  const counted = (capacity: number) => {
    const calls: number[] = [];
    const square = boundedMemo(
      (n: number, _: null) => {
        calls.push(n);
        return { square: n * n };
      },
      (n, _) => String(n),
      capacity,
    );
    return { square, calls };
  };

  it("computes a key once and returns the remembered result after", () => {
    const { square, calls } = counted(8);
    const first = square(3, null);
    expect(square(3, null)).toBe(first);
    expect(first).toEqual({ square: 9 });
    expect(square(4, null)).toEqual({ square: 16 });
    expect(calls).toEqual([3, 4]);
  });

  it("remembers undefined results too", () => {
    let calls = 0;
    const nothing = boundedMemo(
      (_: number, __: null) => {
        calls++;
        return undefined;
      },
      (n, _) => String(n),
      4,
    );
    expect(nothing(1, null)).toBeUndefined();
    expect(nothing(1, null)).toBeUndefined();
    expect(calls).toBe(1);
  });

  it("holds at most its capacity: full, it starts empty again", () => {
    const { square, calls } = counted(2);
    square(1, null);
    square(2, null);
    square(1, null);
    expect(calls).toEqual([1, 2]);
    square(3, null); // full: forgets 1 and 2
    square(3, null);
    square(1, null);
    expect(calls).toEqual([1, 2, 3, 1]);
  });
});
