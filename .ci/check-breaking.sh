#!/usr/bin/env bash
# Fails when proto/ breaks a client of the previous API (buf breaking, FILE rules of buf.yaml).
# Against what:
#   BUF_BREAKING_AGAINST set        that buf input (e.g. '.git#branch=release-1') — an escape
#                                   hatch for a deliberate, announced break;
#   HEAD is not main, main exists   the merge-base with main (what the branch changes);
#   on main                         HEAD's parent (every commit on main keeps the API of the
#                                   one before; locally, uncommitted edits are checked too);
#   no such commit (shallow clone, first commit)  skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
against="${BUF_BREAKING_AGAINST:-}"
if [ -z "$against" ]; then
  base=""
  main_ref=""
  for ref in main origin/main; do
    if git rev-parse --verify -q "$ref^{commit}" >/dev/null; then main_ref="$ref"; break; fi
  done
  head=$(git rev-parse HEAD)
  if [ -n "$main_ref" ] && [ "$(git rev-parse "$main_ref")" != "$head" ]; then
    base=$(git merge-base HEAD "$main_ref" || true)
  fi
  if [ -z "$base" ] || [ "$base" = "$head" ]; then
    base=$(git rev-parse -q --verify "HEAD~1^{commit}" || true)
  fi
  if [ -z "$base" ]; then
    echo "buf breaking skipped: no commit to compare with (shallow clone or first commit)"
    exit 0
  fi
  against=".git#ref=$base"
fi
npx buf breaking --against "$against"
echo "no breaking change against $against"
