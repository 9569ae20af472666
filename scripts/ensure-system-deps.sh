#!/usr/bin/env bash
# The demo's sandboxes need bubblewrap, git and a system python3 (/usr/bin/python3: sandboxes see
# only /usr, not a python under /root or /opt); `npm ci` needs g++ and make to build better-sqlite3
# when its prebuilt binary cannot be downloaded. Installs what is missing with apt-get when run as
# root on Debian/Ubuntu; otherwise prints the exact command and stops.
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v git >/dev/null 2>&1 || missing+=(git)
[ -x /usr/bin/python3 ] || missing+=(python3)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
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
