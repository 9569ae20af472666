#!/usr/bin/env bash
# Builds the CI base root filesystem as a tar, offline from a registry: mmdebstrap's `extract`
# variant (packages unpacked, no maintainer scripts) with what the sandbox providers need inside a
# container: bash, GNU coreutils/findutils/grep/sed/diffutils, git and python3.
#
#   .ci/base-rootfs.sh [OUT]     OUT defaults to $WINNOWER_CI_CACHE/base-rootfs.tar
#
# The tar is reused while its key (suite, mirror, package list, the date of the suite's Release
# file that apt last fetched) is unchanged; the key sits beside it in OUT.key. Other CI steps (the
# docker engine's base image, the registry's OCI image) read the tar from that fixed path.
# Knobs: WINNOWER_CI_CACHE (the cache folder), WINNOWER_CI_MIRROR (default: the runner's apt
# mirror), WINNOWER_CI_SUITE (default: the runner's codename).
set -euo pipefail
cache="${WINNOWER_CI_CACHE:-/var/cache/winnower-ci}"
out="${1:-$cache/base-rootfs.tar}"
packages="bash,coreutils,findutils,git,grep,sed,diffutils,python3-minimal"
suite="${WINNOWER_CI_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}"

# The runner's own mirror, so the package set matches what its apt resolves (deb822 or one-line).
mirror_of_runner() {
  local uri
  uri=$(grep -hs -m1 '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | head -1)
  [ -n "$uri" ] || uri=$(grep -hs -E '^deb +(\[[^]]*\] +)?https?://' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | grep -v security | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' | head -1)
  echo "${uri:-http://deb.debian.org/debian}"
}
mirror="${WINNOWER_CI_MIRROR:-$(mirror_of_runner)}"

# The suite's Release date as apt last saw it; without apt lists, today's date (one build a day).
release_date() {
  local host path file
  host=${mirror#*://}
  path=${host//\//_}
  file="/var/lib/apt/lists/${path%_}_dists_${suite}_InRelease"
  if [ -r "$file" ]; then sed -n 's/^Date: //p' "$file" | head -1; else date -u +%F; fi
}
key="suite=$suite mirror=$mirror packages=$packages release=$(release_date)"

if [ -s "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
  echo "base rootfs: cached $out ($key)"
  exit 0
fi
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$.tar"
mm=
# Stopped (CI cancelled, a failed step): stop mmdebstrap too, and leave no half-written tar.
# mmdebstrap runs in its own process group (setsid), so its helpers stop with it.
stop_mmdebstrap() {
  kill -TERM -- "-$mm" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 -- "-$mm" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL -- "-$mm" 2>/dev/null || true
}
trap '[ -n "$mm" ] && stop_mmdebstrap; rm -rf "$tmp"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
started=$(date +%s)
setsid mmdebstrap --quiet --format=tar --variant=extract --include="$packages" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='rm -rf "$1"/usr/share/doc "$1"/usr/share/man "$1"/usr/share/locale "$1"/var/cache/apt "$1"/var/lib/apt/lists' \
  "$suite" "$tmp" "$mirror" &
mm=$!
wait "$mm"
mm=
mv "$tmp" "$out"
printf '%s\n' "$key" >"$out.key"
echo "base rootfs: built $out in $(($(date +%s) - started)) s ($(du -m "$out" | cut -f1) MB; $key)"
