import { describe, expect, it } from "vitest";
import { gateHostRefusal, parseAllowedHost } from "../../../control/campaign/index.js";
import { type ConfigError, loadConfig } from "../../../control/config.js";

describe("the gate host allow-list", () => {
  const allowed = ["prometheus.internal:9090", "hooks.example.com", "[::1]:9090", "10.0.0.5:80"];

  it.each<[string, boolean]>([
    ["http://prometheus.internal:9090", true],
    ["http://PROMETHEUS.internal:9090/prom/", true],
    ["https://prometheus.internal:9090", true],
    ["http://prometheus.internal:9091", false],
    ["http://prometheus.internal", false],
    ["https://hooks.example.com/rollout?k=secret", true],
    ["http://hooks.example.com/rollout", true],
    ["https://hooks.example.com:8443/rollout", false],
    ["https://evil.hooks.example.com/", false],
    ["http://[::1]:9090", true],
    ["http://10.0.0.5/", true],
    ["http://10.0.0.5:8080/", false],
    ["http://user:pass@prometheus.internal:9090", true],
    ["http://169.254.169.254/latest", false],
  ])("judges %s allowed: %s", (url, ok) => {
    const refusal = gateHostRefusal(url, allowed);
    if (ok) expect(refusal).toBeUndefined();
    else {
      expect(refusal).toMatch(/^gate host \S+ is not in gates\.allowedHosts/);
      expect(refusal).not.toContain("secret");
    }
  });

  it("allows any host when no list is configured, and none when it is empty", () => {
    expect(gateHostRefusal("http://anything:1", undefined)).toBeUndefined();
    expect(gateHostRefusal("http://anything:1", [])).toMatch(/it is empty/);
  });

  it.each(["", "http://x:9090", "x/path", "x:0", "x:70000", "a b", "user@x", "x?y"])(
    "refuses the entry %j",
    (entry) => {
      expect(parseAllowedHost(entry).ok).toBe(false);
    },
  );

  it("is read from the config, each bad entry named by its index", () => {
    expect(loadConfig({ env: {} }).gates.allowedHosts).toBeUndefined();
    expect(
      loadConfig({ env: {}, overrides: { gates: { allowedHosts: ["p:9090"] } } }).gates
        .allowedHosts,
    ).toEqual(["p:9090"]);
    const problems = (overrides: Record<string, unknown>) => {
      try {
        loadConfig({ env: {}, overrides });
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems({ gates: { allowedHosts: ["ok:1", "http://bad"] } })).toEqual([
      'gates.allowedHosts[1]: "http://bad" must be HOST or HOST:PORT (no scheme or path)',
    ]);
    expect(problems({ gates: { allowedHosts: "p:9090" } })).toEqual([
      "gates.allowedHosts: must be a list of HOST or HOST:PORT strings",
    ]);
    expect(problems({ gates: { hosts: [] } })).toEqual(["gates.hosts: unknown setting"]);
  });
});
