#!/usr/bin/env bash
# Both client legs of the official MCP conformance suite against examples/everything_client.py,
# scored under STRICT=1 (no FAILURE, no WARNING, at least one SUCCESS per scenario), and a
# check that every non-auth scored client scenario passes:
#   2026-07-28: tools_call request-metadata sep-2322-client-request-state
#               http-standard-headers http-custom-headers http-invalid-tool-headers
#               json-schema-ref-no-deref
#   2025-11-25: initialize tools_call elicitation-sep1034-client-defaults sse-retry
# The auth scenarios run too (they are part of each leg) but are not required here; they
# belong to the OAuth work. A required scenario that fails in the parallel run (39 client
# processes start at once) is re-run alone before it counts as failed.
#
# Usage: tests/conformance/client_leg.sh            (from anywhere; exit 0 = all required pass)
# Environment: PYTHON (default <repo>/.venv/bin/python), CONFORMANCE_TOOLS (default
# <repo>/../shared/tools/conformance), CONFORMANCE_DIR / NODE_BIN as for those tools,
# OUTPUT_DIR (default: a fresh temporary directory, kept).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="${CONFORMANCE_TOOLS:-$ROOT/../shared/tools/conformance}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
CLIENT="$ROOT/examples/everything_client.py"
OUT="${OUTPUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/client-leg-XXXXXX")}"
mkdir -p "$OUT"
CONFORMANCE_DIR="${CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-conformance}"

declare -A REQUIRED=(
    [2026-07-28]="tools_call request-metadata sep-2322-client-request-state http-standard-headers http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref"
    [2025-11-25]="initialize tools_call elicitation-sep1034-client-defaults sse-retry"
)

if [ ! -x "$TOOLS/client" ]; then
    echo "error: conformance tools not found at $TOOLS" >&2
    echo "0 passed, 11 failed"
    exit 2
fi
# ~39 clients start at once: compiled bytecode keeps their start-up short.
"$PY" -m compileall -q "$ROOT/src" "$ROOT/examples" >/dev/null 2>&1 || true

# solo REV NAME -> 0 when the scenario passes alone under STRICT scoring.
solo() {
    local node="${NODE_BIN:-$CONFORMANCE_DIR/node_modules/.bin/node}"
    local cli="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    local log="$OUT/solo-$1-$2.log"
    timeout --kill-after=10 150 "$node" "$cli" client --command "$PY $CLIENT" --scenario "$2" \
        --spec-version "$1" --force --timeout 60000 -o "$OUT/solo" >"$log" 2>&1
    local line
    line="$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
        grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings$' | tail -n 1)"
    [[ "$line" =~ ^Passed:\ ([0-9]+)/[0-9]+,\ 0\ failed,\ 0\ warnings$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
}

passed=0
failed=0
for rev in 2026-07-28 2025-11-25; do
    log="$OUT/leg-$rev.log"
    echo "== client leg $rev (log: $log)"
    OUTPUT_DIR="$OUT/$rev" STRICT=1 RERUN_FAILED=0 "$TOOLS/client" "$rev" -- "$PY" "$CLIENT" >"$log" 2>&1
    for name in ${REQUIRED[$rev]}; do
        if grep -qE "^PASS  $name \(" "$log"; then
            echo "PASS  $rev $name"
            passed=$((passed + 1))
        elif solo "$rev" "$name"; then
            echo "PASS  $rev $name (alone; it failed in the parallel run)"
            passed=$((passed + 1))
        else
            echo "FAIL  $rev $name ($(grep -E "^FAIL  $name \(" "$log" || echo 'no result'))"
            failed=$((failed + 1))
        fi
    done
done
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
