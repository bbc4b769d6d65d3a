# Shell functions the hack/ scripts share; source it.

# stop_pidfile FILE stops the process whose pid FILE holds (SIGTERM, then
# SIGKILL after 10 s) and removes FILE. No file, or no process, is fine.
stop_pidfile() {
  local file=$1 pid
  [[ -f $file ]] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}
