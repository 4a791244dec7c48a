/**
 * Which of the labels an Agent reports in its Hello Control believes. Labels decide safety
 * (`canary=true` puts a node in the first batch, `pool` sets its disruption budget, any
 * label may be a campaign selector), and a leaked join token must not let a fake node
 * claim them: only the keys an operator configured as agent-reported
 * (`enrollment.agentReportedLabels`) are kept; the rest come from the join token that
 * enrolled the node or from an administrator.
 */

/**
 * The labels of `reported` whose key is in `trusted` (`"*"`: every key), as a new object.
 * The order of `reported` is kept.
 */
export function reportedLabels(
  reported: Readonly<Record<string, string>>,
  trusted: readonly string[],
): Record<string, string> {
  if (trusted.includes("*")) return { ...reported };
  return Object.fromEntries(Object.entries(reported).filter(([key]) => trusted.includes(key)));
}
