#!/usr/bin/env bash
# Fails when proto/gen is not exactly what `buf generate` makes from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx buf lint
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx buf generate -o "$tmp"
if ! diff -r "$tmp/proto/gen" proto/gen >/dev/null; then
  echo "proto/gen is stale: run 'npm run generate' and commit the result" >&2
  diff -r "$tmp/proto/gen" proto/gen | head -20 >&2
  exit 1
fi
echo "generated code is fresh"
node .ci/api-reference.mjs --check
