// A planted late write for the tests of `--workers` (loaded with `node --import`): in each
// worker, once the file `$AGENT_CONTROL_TEST_WORKER_LATE_WRITE` exists, the event loop is held
// for 1.5 s (the test kills the primary meanwhile) and then a message is sent to the primary
// without a callback, before the worker has seen its channel close. That is the write
// node:cluster's own messages make when the primary goes while a worker drains: it fails with
// `write EPIPE`, which Node raises as an 'error' event on `process`.
import cluster from "node:cluster";
import { existsSync } from "node:fs";

const trigger = process.env.AGENT_CONTROL_TEST_WORKER_LATE_WRITE;
if (trigger && cluster.isWorker) {
  const poll = setInterval(() => {
    if (!existsSync(trigger)) return;
    clearInterval(poll);
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      // Hold the event loop: the primary dies meanwhile.
    }
    process.send?.({ type: "test:late-write" });
  }, 50);
  poll.unref();
}
