#!/usr/bin/env bash
# The demo's sandboxes need bubblewrap, git and a system python3 (/usr/bin/python3: sandboxes see
# only /usr, not a python under /root or /opt). Installs them with apt-get when run as root on
# Debian/Ubuntu; otherwise prints the exact command and stops.
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v git >/dev/null 2>&1 || missing+=(git)
[ -x /usr/bin/python3 ] || missing+=(python3)
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "winnower: installing ${missing[*]} (apt-get install -y ${missing[*]})" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "winnower: the demo needs ${missing[*]}. Install with:" >&2
echo "  sudo apt-get install -y ${missing[*]}" >&2
exit 1
