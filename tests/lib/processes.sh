# shellcheck shell=bash
# Starting and stopping the servers the test scripts run; sourced by them (bash).

# Stops one process: TERM, then KILL if it is still there after 10 s; reaps it if it is a child.
stop_pid() {
  local pid="$1" i
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "pid $pid was still running 10 s after SIGTERM: killed"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# Stops every process but this shell whose command line mentions "$1" (a temporary directory
# holding a gateway's config, a server's files): what a run started and left behind.
stop_mentioning() {
  local pid
  for pid in $(ps -eo pid=,args= | awk -v mark="$1" 'index($0, mark) { print $1 }'); do
    if [[ "$pid" != "$$" ]]; then stop_pid "$pid"; fi
  done
}

# Waits until the log "$2" of pid $1 has the line "… PROGRAM: listening on http://…/mcp …" ($3
# is PROGRAM; the servers log it as "TIME  INFO PROGRAM: listening on URL addr=ADDR") and prints
# the URL; fails, showing the log, if the process exits first or 30 s pass.
listening_url() {
  local pid="$1" log="$2" program="$3" url i
  for ((i = 0; i < 300; i++)); do
    url="$(sed -n "s#^.*$program: listening on \(http://[^[:space:]]*\).*\$#\1#p" "$log" | head -n 1)"
    if [[ -n "$url" ]]; then
      echo "$url"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || {
      echo "$program exited before listening:" >&2
      cat "$log" >&2
      return 1
    }
    sleep 0.1
  done
  echo "$program printed no 'listening on' line within 30 s:" >&2
  cat "$log" >&2
  return 1
}

# $1 as a TOML basic string.
toml() {
  local s="${1//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '"%s"' "$s"
}
