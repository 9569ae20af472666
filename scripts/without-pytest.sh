#!/usr/bin/env bash
# Runs a command as on a machine whose system Python has no pytest (no python3-pytest), without
# uninstalling it: in a private mount namespace (root, util-linux's unshare), the folder holding
# pytest is replaced by a copy without it and /usr/bin/pytest* by empty files; PATH is the
# sandboxes' (src/sandbox/providers/local/bwrap-args.ts SANDBOX_PATH), so a pyenv or virtualenv
# python3 is not found first. Nothing changes outside the command.
#   sudo scripts/without-pytest.sh npx vitest run test/solve/pool-tests.test.ts
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 command [args...]" >&2; exit 2; }
packages=$(/usr/bin/python3 -c 'import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))' 2>/dev/null) || {
  echo "$0: /usr/bin/python3 has no pytest already; running the command as it is" >&2
  exec "$@"
}
export WITHOUT_PYTEST_PACKAGES="$packages" WITHOUT_PYTEST_CWD="$PWD"
exec unshare --mount --propagation private bash -euo pipefail -c '
  stage=$(mktemp -d)
  mount --bind "$WITHOUT_PYTEST_PACKAGES" "$stage"
  mount -t tmpfs tmpfs "$WITHOUT_PYTEST_PACKAGES"
  for entry in "$stage"/* "$stage"/.[!.]*; do
    [ -e "$entry" ] || continue
    case "${entry##*/}" in pytest | _pytest | py.py | pytest-*.dist-info) continue ;; esac
    cp -a "$entry" "$WITHOUT_PYTEST_PACKAGES"/
  done
  umount "$stage" && rmdir "$stage"
  for tool in /usr/bin/pytest /usr/bin/pytest-3 /usr/bin/py.test /usr/bin/py.test-3; do
    if [ -e "$tool" ]; then mount --bind /dev/null "$tool"; fi
  done
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  if python3 -c "import pytest" 2>/dev/null; then echo "without-pytest.sh: pytest still imports" >&2; exit 1; fi
  cd "$WITHOUT_PYTEST_CWD"
  exec "$@"
' without-pytest "$@"
