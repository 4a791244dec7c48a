// A planted fault for the tests of `--workers` (loaded with `node --import`): in the cluster's
// primary only, once the file `$AGENT_CONTROL_TEST_PRIMARY_FAULT` exists, an Error is thrown
// from a timer, where nothing catches it (an uncaught exception, as a bug would raise).
import cluster from "node:cluster";
import { existsSync } from "node:fs";

const trigger = process.env.AGENT_CONTROL_TEST_PRIMARY_FAULT;
if (trigger && cluster.isPrimary) {
  const poll = setInterval(() => {
    if (!existsSync(trigger)) return;
    clearInterval(poll);
    throw new Error("planted fault: an uncaught error in the primary");
  }, 100);
  poll.unref();
}
