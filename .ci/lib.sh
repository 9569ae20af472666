# Shared by the .ci scripts that start a service for the tests: elapsed time, waiting until it
# answers, and stopping it by its pid. Sourced, not run.

# Seconds since an $EPOCHREALTIME reading, one decimal (awk: bc is not on every runner).
since() { awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }'; }

# wait_ready PIDFILE TRIES CHECK...: runs CHECK every 0.25 s until it succeeds; fails when the
# process in PIDFILE has died or TRIES run out.
wait_ready() {
  local pidfile=$1 tries=$2
  shift 2
  for _ in $(seq "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$(cat "$pidfile")" 2>/dev/null || return 1
    sleep 0.25
  done
  return 1
}

# stop_pidfile PIDFILE TRIES: TERM, up to TRIES x 0.25 s for it to exit, then KILL.
stop_pidfile() {
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq "$2"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  fi
  rm -f "$1"
}
