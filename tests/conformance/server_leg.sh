#!/usr/bin/env bash
# The official conformance suite's server legs against examples/everything_server.py.
#
# Usage: tests/conformance/server_leg.sh REV=EXPECTED [REV=EXPECTED ...]
#   e.g. tests/conformance/server_leg.sh 2026-07-28=37 2025-11-25=30
#
# Starts ONE everything server on a free 127.0.0.1 port (every leg runs against the same
# process), runs `STRICT=1 ../shared/tools/conformance/server URL REV` for each revision
# and fails unless its last line is exactly "EXPECTED passed, 0 failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$(pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
TOOLS="${CONFORMANCE_TOOLS:-$ROOT/../shared/tools/conformance}"
[ $# -gt 0 ] || { echo "usage: $0 REV=EXPECTED ..." >&2; exit 2; }

PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
LOG="$(mktemp)"
"$PY" examples/everything_server.py --port "$PORT" >"$LOG" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true' EXIT

for _ in $(seq 1 100); do
    if "$PY" -c "import socket, sys; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null; then
        break
    fi
    kill -0 "$PID" 2>/dev/null || { echo "everything server died:" >&2; cat "$LOG" >&2; exit 1; }
    sleep 0.1
done

status=0
for leg in "$@"; do
    rev="${leg%%=*}"
    expected="${leg##*=}"
    echo "== conformance server leg $rev (expect $expected passed)"
    out="$(STRICT=1 "$TOOLS/server" "http://127.0.0.1:$PORT/mcp" "$rev" 2>&1)" || true
    echo "$out"
    last="$(printf '%s\n' "$out" | tail -n 1)"
    if [ "$last" != "$expected passed, 0 failed" ]; then
        echo "FAIL: conformance server $rev: '$last' (expected '$expected passed, 0 failed')" >&2
        status=1
    fi
done
if [ "$status" -ne 0 ]; then
    echo "--- everything server log ---" >&2
    tail -n 50 "$LOG" >&2
fi
exit "$status"
