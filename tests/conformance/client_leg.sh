#!/usr/bin/env bash
# Both client legs of the official MCP conformance suite against examples/everything_client.py,
# scored under STRICT=1 (no FAILURE, no WARNING, at least one SUCCESS per scenario). Every
# scored scenario of each leg is required, OAuth ones included: 32 for 2026-07-28 and 18 for
# 2025-11-25 (conformance.md §7). A scenario that fails in the parallel run (~39 client
# processes start at once) is re-run alone before it counts as failed; more than RERUN_MAX
# failures in one leg are not contention, and are not re-run.
#
# Output: one PASS/FAIL line per scenario, then, as the last two lines, the 2026-07-28 score
# and the 2025-11-25 score; all is well when they are exactly
#   32 passed, 0 failed
#   18 passed, 0 failed
#
# Usage: tests/conformance/client_leg.sh            (from anywhere; exit 0 = both legs complete)
# Environment: PYTHON (default <repo>/.venv/bin/python), CONFORMANCE_TOOLS (default
# <repo>/../shared/tools/conformance), CONFORMANCE_DIR / NODE_BIN as for those tools,
# OUTPUT_DIR (default: a fresh temporary directory, kept), RERUN_MAX (default 10).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="${CONFORMANCE_TOOLS:-$ROOT/../shared/tools/conformance}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
CLIENT="$ROOT/examples/everything_client.py"
OUT="${OUTPUT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/client-leg-XXXXXX")}"
mkdir -p "$OUT"
CONFORMANCE_DIR="${CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-conformance}"
RERUN_MAX="${RERUN_MAX:-10}"
REVS=(2026-07-28 2025-11-25)
declare -A EXPECTED=([2026-07-28]=32 [2025-11-25]=18)

if [ ! -x "$TOOLS/client" ]; then
    echo "error: conformance tools not found at $TOOLS" >&2
    for rev in "${REVS[@]}"; do echo "0 passed, ${EXPECTED[$rev]} failed"; done
    exit 2
fi
# ~39 clients start at once: compiled bytecode keeps their start-up short.
"$PY" -m compileall -q "$ROOT/src" "$ROOT/examples" >/dev/null 2>&1 || true

# solo REV NAME -> 0 when the scenario passes alone under STRICT scoring.
solo() {
    local node="${NODE_BIN:-$CONFORMANCE_DIR/node_modules/.bin/node}"
    local cli="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    local log="$OUT/solo-$1-${2//\//_}.log"
    timeout --kill-after=10 150 "$node" "$cli" client --command "$PY $CLIENT" --scenario "$2" \
        --spec-version "$1" --force --timeout 60000 -o "$OUT/solo" >"$log" 2>&1
    local line
    line="$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
        grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings$' | tail -n 1)"
    [[ "$line" =~ ^Passed:\ ([0-9]+)/[0-9]+,\ 0\ failed,\ 0\ warnings$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]
}

declare -A SCORE=()
for rev in "${REVS[@]}"; do
    log="$OUT/leg-$rev.log"
    echo "== client leg $rev (log: $log)"
    OUTPUT_DIR="$OUT/$rev" STRICT=1 RERUN_FAILED=0 "$TOOLS/client" "$rev" -- "$PY" "$CLIENT" >"$log" 2>&1
    # The tool prints one "PASS  name (...)" or "FAIL  name (...)" line per scored scenario.
    mapfile -t passing < <(sed -nE 's/^PASS  ([A-Za-z0-9._\/-]+) \(.*/\1/p' "$log")
    mapfile -t failing < <(sed -nE 's/^FAIL  ([A-Za-z0-9._\/-]+) \(.*/\1/p' "$log")
    passed=0
    failed=0
    for name in ${passing[@]+"${passing[@]}"}; do
        echo "PASS  $rev $name"
        passed=$((passed + 1))
    done
    rerun=1
    if [ "${#failing[@]}" -gt "$RERUN_MAX" ]; then
        echo "warning: ${#failing[@]} scenarios of $rev failed (> RERUN_MAX=$RERUN_MAX); not re-running them" >&2
        rerun=0
    fi
    for name in ${failing[@]+"${failing[@]}"}; do
        if [ "$rerun" -eq 1 ] && solo "$rev" "$name"; then
            echo "PASS  $rev $name (alone; it failed in the parallel run)"
            passed=$((passed + 1))
        else
            echo "FAIL  $rev $name ($(grep -E "^FAIL  $name \(" "$log" | head -n 1))"
            failed=$((failed + 1))
        fi
    done
    missing=$((EXPECTED[$rev] - passed - failed))
    if [ "$missing" -ne 0 ]; then
        echo "FAIL  $rev: ${EXPECTED[$rev]} scored scenarios expected, $((passed + failed)) reported (see $log)"
        [ "$missing" -gt 0 ] && failed=$((failed + missing))
    fi
    SCORE[$rev]="${passed} passed, ${failed} failed"
done

ok=1
for rev in "${REVS[@]}"; do
    [ "${SCORE[$rev]}" = "${EXPECTED[$rev]} passed, 0 failed" ] || ok=0
    echo "${SCORE[$rev]}"
done
[ "$ok" -eq 1 ]
