#!/usr/bin/env bash
# A throwaway Docker engine for CI: its own socket, pid file, exec root and data root in one
# scratch folder, so it never touches (or needs) a system engine, and it is stopped by its pid.
#
#   .ci/docker-engine.sh start DIR          start dockerd, wait until it answers; prints its DOCKER_HOST
#   .ci/docker-engine.sh import DIR TAR REF docker import of a root filesystem tar as REF
#   .ci/docker-engine.sh stop DIR           stop the dockerd started in DIR (TERM, then KILL), remove DIR
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cmd="${1:?start|import|stop}"
dir="${2:?scratch folder}"
sock="$dir/docker.sock"
export DOCKER_HOST="unix://$sock"

case "$cmd" in
start)
  mkdir -p "$dir/data"
  # overlay2 cannot sit on overlayfs (a container's own root); vfs copies, but works anywhere.
  driver=()
  [ "$(stat -f -c %T "$dir/data")" = overlayfs ] && driver=(--storage-driver=vfs)
  started=$EPOCHREALTIME
  dockerd --host="$DOCKER_HOST" --pidfile="$dir/dockerd.pid" --exec-root="$dir/exec" \
    --data-root="$dir/data" "${driver[@]}" >"$dir/dockerd.log" 2>&1 &
  echo $! >"$dir/launcher.pid"
  if wait_ready "$dir/launcher.pid" 240 docker version; then
    printf 'docker engine: %s (API %s) up in %s s at %s\n' "$(docker version --format '{{.Server.Version}}')" \
      "$(docker version --format '{{.Server.APIVersion}}')" "$(since "$started")" "$DOCKER_HOST" >&2
    echo "$DOCKER_HOST"
    exit 0
  fi
  echo "docker engine did not start; its log:" >&2
  tail -n 40 "$dir/dockerd.log" >&2
  exit 1
  ;;
import)
  tar="${3:?rootfs tar}"
  ref="${4:?image reference}"
  started=$EPOCHREALTIME
  docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' -c 'ENV LANG=C.UTF-8' \
    "$tar" "$ref" >/dev/null
  printf 'docker engine: imported %s as %s in %s s\n' "$tar" "$ref" "$(since "$started")" >&2
  ;;
stop)
  stop_pidfile "$dir/launcher.pid" 60
  # Leftover overlay mounts of a killed engine would make the removal fail: unmount them first.
  grep -o " $dir/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|import|stop DIR ..." >&2
  exit 2
  ;;
esac
