#!/usr/bin/env bash
# The demo's base stage over seeds and torch thread counts, then the capability gate's numbers
# for each base (scripts/gate_table.py):
#   bash scripts/base_seeds.sh                    # seeds 0-4 under 1 and 2 threads: 10 bases, about an hour on 2 cores
#   SEEDS="0 1" THREAD_COUNTS=1 bash scripts/base_seeds.sh
# Each base goes to outputs/demo[-seedN]-tT (scripts/demo.sh's folders); a base that fails the
# gate is reported, not fatal, and a folder whose base stage has finished (a full demo's too) is kept. Two thread counts give the float reductions two orders: a cheap
# stand-in for another CPU.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
SEEDS="${SEEDS:-0 1 2 3 4}"
THREAD_COUNTS="${THREAD_COUNTS:-1 2}"
folders=()
for threads in $THREAD_COUNTS; do
  for seed in $SEEDS; do
    out=outputs/demo; [[ "$seed" == 0 ]] || out="$out-seed$seed"; out="$out-t$threads"
    folders+=("$out")
    if [[ -f "$out/base/base_stage" ]]; then echo "seed $seed, $threads thread(s): kept ($out/base/base_stage)"; continue; fi
    mkdir -p "$out"
    SEED="$seed" THREADS="$threads" DEMO_OUT="$out" PYTHON="$PYTHON" bash scripts/demo.sh world base > "$out/base.log" 2>&1
    echo "seed $seed, $threads thread(s): exit $? ($out/base.log)"
  done
done
"$PYTHON" scripts/gate_table.py "${folders[@]}"
