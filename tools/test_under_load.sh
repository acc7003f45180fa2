#!/usr/bin/env bash
# Run the whole test suite N times while LOAD other CPU-bound processes run beside it, as
# on a shared CI runner or a busy laptop: no verdict may depend on machine speed.
#
#   tools/test_under_load.sh            # 5 runs, 2 burners
#   RUNS=1 LOAD=2 tools/test_under_load.sh -k ros   # extra arguments go to pytest
#
# Each run's pytest summary line and duration are printed; the script exits non-zero if
# any run failed. The burners are plain busy loops (one core each) and are killed on exit.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${RUNS:-5}
load=${LOAD:-2}
cd "$repo"
make --no-print-directory setup >/dev/null || { echo "set-up failed (run make setup)"; exit 1; }
. .venv/fm_env.sh

burners=()
cleanup() { [ ${#burners[@]} -gt 0 ] && kill "${burners[@]}" 2>/dev/null; }
trap cleanup EXIT
for _ in $(seq "$load"); do
  python3 -c 'while True: pass' &
  burners+=($!)
done
echo "[load] $load CPU-bound processes beside the suite on $(nproc) CPUs; $runs runs"

failed=0
for run in $(seq "$runs"); do
  log=$(mktemp /tmp/fm-load-run-XXXX.log)
  start=$(date +%s)
  python -m pytest -q -ra -p no:cacheprovider -n auto "$@" > "$log" 2>&1
  code=$?
  echo "[load] run $run: exit $code in $(( $(date +%s) - start )) s: $(tail -1 "$log")"
  if [ $code -ne 0 ]; then
    failed=$((failed + 1))
    grep -E "^(FAILED|ERROR)" "$log" | sed 's/^/[load]   /'
    echo "[load]   full log: $log"
  else
    rm -f "$log"
  fi
done
echo "[load] $((runs - failed)) of $runs runs passed"
[ $failed -eq 0 ]
