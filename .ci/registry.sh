#!/usr/bin/env bash
# A throwaway image registry for CI (Debian's docker-registry) on loopback only, with its own
# minimal config: the package's default listens on every interface with htpasswd auth and is meant
# for a service manager. No dockerd is involved: images are built with umoci and pushed with skopeo.
#
#   .ci/registry.sh start DIR          start the registry on a free 127.0.0.1 port; prints host:port
#   .ci/registry.sh push DIR TAR REF   push the CI testbed image built from the rootfs TAR as REF
#   .ci/registry.sh stop DIR           stop the registry started in DIR (by its pid), remove DIR
#
# The testbed image: the rootfs tar (.ci/base-rootfs.sh), the Python standard library (the base
# has python3-minimal only; `python3 -m unittest` needs libpython3.X-stdlib), and the demo task's
# repository at /testbed (examples/demo/repo, committed as src/cli/demo-repo.ts does). The built
# OCI layout is cached beside the rootfs tar ($WINNOWER_CI_CACHE/testbed-oci).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cmd="${1:?start|push|stop}"
dir="${2:?scratch folder}"

case "$cmd" in
start)
  mkdir -p "$dir/storage"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$dir/registry.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
EOF
  started=$EPOCHREALTIME
  docker-registry serve "$dir/registry.yml" >"$dir/registry.log" 2>&1 &
  echo $! >"$dir/registry.pid"
  if wait_ready "$dir/registry.pid" 120 python3 -c "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$port/v2/', timeout=2).status == 200 else 1)"; then
    echo "registry: docker-registry up in $(since "$started") s at 127.0.0.1:$port" >&2
    echo "127.0.0.1:$port"
    exit 0
  fi
  echo "the registry did not start; its log:" >&2
  tail -n 40 "$dir/registry.log" >&2
  exit 1
  ;;
push)
  tar="${3:?rootfs tar}"
  ref="${4:?image reference host:port/name:tag}"
  started=$(date +%s)
  # The built layout is kept beside the rootfs tar while its key holds (the tar's key, the demo
  # repository's files, this recipe), so a warm run only pushes.
  cache="$(dirname "$tar")/testbed-oci"
  key="rootfs=$(cat "$tar.key" 2>/dev/null || stat -c %Y-%s "$tar") demo=$(find examples/demo/repo -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16) recipe=1"
  if [ -f "$cache/index.json" ] && [ "$(cat "$cache.key" 2>/dev/null)" = "$key" ]; then
    echo "registry: cached testbed layout $cache" >&2
  else
    work="$dir/build"
    rm -rf "$work" && mkdir -p "$work/stdlib" "$work/testbed-layer"
    layout="$work/layout"
    umoci init --layout "$layout"
    umoci new --image "$layout:testbed"
    umoci raw add-layer --image "$layout:testbed" "$tar"
    # The standard library of the base's Python, from the same mirror the base came from.
    version=$(tar -tf "$tar" | sed -n 's|^\./usr/lib/python\(3\.[0-9]*\)/$|\1|p' | head -1)
    [ -n "$version" ] || { echo "registry: no usr/lib/python3.X in $tar" >&2; exit 1; }
    (cd "$work" && { apt-get download -qq "libpython$version-stdlib" 2>/dev/null || { apt-get update -qq && apt-get download -qq "libpython$version-stdlib"; }; })
    dpkg-deb -x "$work"/libpython"$version"-stdlib_*.deb "$work/stdlib"
    rm -rf "$work/stdlib/usr/share"
    tar --owner=0 --group=0 --numeric-owner -C "$work/stdlib" -cf "$work/stdlib.tar" .
    umoci raw add-layer --image "$layout:testbed" "$work/stdlib.tar"
    # The demo repository, committed with fixed names and dates (src/cli/demo-repo.ts).
    cp -r examples/demo/repo "$work/testbed-layer/testbed"
    (
      cd "$work/testbed-layer/testbed"
      export GIT_AUTHOR_NAME=winnower GIT_AUTHOR_EMAIL=demo@winnower.invalid GIT_COMMITTER_NAME=winnower GIT_COMMITTER_EMAIL=demo@winnower.invalid
      export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
      git init -q -b main && git add -A && git commit -q -m 'durations: base commit of the demo task'
    )
    tar --owner=0 --group=0 --numeric-owner -C "$work/testbed-layer" -cf "$work/testbed.tar" testbed
    umoci raw add-layer --image "$layout:testbed" "$work/testbed.tar"
    umoci config --image "$layout:testbed" --config.workingdir /testbed \
      --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.env LANG=C.UTF-8
    umoci gc --layout "$layout"
    rm -rf "$cache" && mv "$layout" "$cache" && printf '%s\n' "$key" >"$cache.key"
    rm -rf "$work"
  fi
  skopeo copy --quiet --dest-tls-verify=false "oci:$cache:testbed" "docker://$ref"
  echo "registry: pushed $ref in $(($(date +%s) - started)) s" >&2
  ;;
stop)
  stop_pidfile "$dir/registry.pid" 40
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|push|stop DIR ..." >&2
  exit 2
  ;;
esac
