#!/usr/bin/env bash
# Installs the harness CLIs that the end-to-end tests run for real (pi and Claude Code, pinned in
# config/harnesses/*.yaml) from the npm registry into $WINNOWER_HARNESS_DIR, outside the
# checkout. An install already there for the pinned version is reused, so a cached folder makes
# this a no-op. Needs dist/ (npm ci builds it). Three tries: a registry hiccup should not fail CI.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${WINNOWER_HARNESS_DIR:?set WINNOWER_HARNESS_DIR}"
mkdir -p "$WINNOWER_HARNESS_DIR"
# The sandbox runs as an unprivileged user: it must be able to read the installs.
chmod 755 "$WINNOWER_HARNESS_DIR"
for attempt in 1 2 3; do
  if node bin/winnower.js harness install pi claude-code; then exit 0; fi
  [ "$attempt" -eq 3 ] && { echo "could not install the harness CLIs" >&2; exit 1; }
  sleep $((attempt * 10))
done
