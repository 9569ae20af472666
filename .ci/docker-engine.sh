#!/usr/bin/env bash
# A throwaway Docker engine for CI: its own socket, pid file, exec root and data root in one
# scratch folder, so it never touches (or needs) a system engine, and it is stopped by its pid.
#
#   .ci/docker-engine.sh start DIR          start dockerd, wait until it answers; prints its DOCKER_HOST
#   .ci/docker-engine.sh import DIR TAR REF docker import of a root filesystem tar as REF
#   .ci/docker-engine.sh stop DIR           stop the dockerd started in DIR (TERM, then KILL), remove DIR
set -euo pipefail
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
  started=$(date +%s.%N)
  dockerd --host="$DOCKER_HOST" --pidfile="$dir/dockerd.pid" --exec-root="$dir/exec" \
    --data-root="$dir/data" "${driver[@]}" >"$dir/dockerd.log" 2>&1 &
  echo $! >"$dir/launcher.pid"
  for _ in $(seq 240); do
    if docker version >/dev/null 2>&1; then
      printf 'docker engine: %s (API %s) up in %.1f s at %s\n' "$(docker version --format '{{.Server.Version}}')" \
        "$(docker version --format '{{.Server.APIVersion}}')" "$(echo "$(date +%s.%N) - $started" | bc)" "$DOCKER_HOST" >&2
      echo "$DOCKER_HOST"
      exit 0
    fi
    kill -0 "$(cat "$dir/launcher.pid")" 2>/dev/null || break
    sleep 0.25
  done
  echo "docker engine did not start; its log:" >&2
  tail -n 40 "$dir/dockerd.log" >&2
  exit 1
  ;;
import)
  tar="${3:?rootfs tar}"
  ref="${4:?image reference}"
  started=$(date +%s.%N)
  docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' -c 'ENV LANG=C.UTF-8' \
    "$tar" "$ref" >/dev/null
  printf 'docker engine: imported %s as %s in %.1f s\n' "$tar" "$ref" "$(echo "$(date +%s.%N) - $started" | bc)" >&2
  ;;
stop)
  [ -f "$dir/launcher.pid" ] || exit 0
  pid=$(cat "$dir/launcher.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$dir/launcher.pid"
  # Leftover overlay mounts of a killed engine would make the removal fail: unmount them first.
  grep -o " $dir/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|import|stop DIR ..." >&2
  exit 2
  ;;
esac
