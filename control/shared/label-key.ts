/**
 * The label key rule, shared by Control (Hello, filters, assigned labels, certificate labels)
 * and agentctl (`tls issue-node --label`): 1 to 63 letters, digits, `.`, `_`, `/` or `-`,
 * starting and ending with a letter or digit.
 */

/** The longest label key. */
export const LABEL_KEY_LENGTH = 63;
/** The longest label value. */
export const LABEL_VALUE_LENGTH = 256;

const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$/;

/** True when `key` is a valid label key (what a Hello may carry and a filter may name). */
export function isLabelKey(key: string): boolean {
  return key.length <= LABEL_KEY_LENGTH && LABEL_KEY.test(key);
}
