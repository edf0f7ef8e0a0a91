#!/usr/bin/env bash
# The demo once per seed (world, base, teacher, trainer), then one row per seed:
#   bash scripts/demo_seeds.sh            # seeds 0 1 2, about 12 minutes each on 2 cores
#   bash scripts/demo_seeds.sh 3 4
# Seed 0 is `make demo`'s run (outputs/demo); seed N goes to outputs/demo-seedN.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
seeds=("$@")
[[ ${#seeds[@]} -gt 0 ]] || seeds=(0 1 2)
reports=()
for seed in "${seeds[@]}"; do
  SEED="$seed" PYTHON="$PYTHON" bash scripts/demo.sh
  if [[ "$seed" == 0 ]]; then reports+=(outputs/demo/runs/comparison.json); else reports+=("outputs/demo-seed$seed/runs/comparison.json"); fi
done
"$PYTHON" scripts/seed_table.py "${reports[@]}"
