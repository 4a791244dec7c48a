import { expect, it } from "vitest";
import { checkSeed } from "../../simulation/check-seed.js";

// The simulation's share of a mutation run (vitest.mutation.config.ts): seeds 1…50, pure, one
// case per seed (a mutant runs only the seeds that reach it, each within the test timeout).
for (let seed = 1; seed <= 50; seed++) {
  it(`seed ${seed} holds every invariant, with and without faults`, async () => {
    const checked = await checkSeed(seed, { faults: true });
    if (checked.failure !== undefined) expect.fail(checked.failure);
  });
}
