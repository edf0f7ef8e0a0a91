#!/usr/bin/env bash
# Submit the whole hindsight-SFT pipeline as chained Slurm jobs (each starts when the jobs it
# needs have succeeded: --dependency=afterok):
#
#   [base] → distill (array, SHARDS tasks) → select (merge, replay, select) → train ─┐
#   [base] → eval base ──────────────────────────────────────────────────────────────┴→ compare
#                                                         train → eval sft ──────────┘
#
#   RECIPE=recipes/qwen_lora.yaml PARTITION=gpu NODES=2 GPUS_PER_NODE=8 slurm/pipeline.sh
#   RECIPE=recipes/demo.yaml DEMO_BASE=1 CPU_ONLY=1 slurm/pipeline.sh      # no GPUs
#
# Variables (defaults in brackets): RECIPE [recipes/qwen_lora.yaml]; RECIPE_SETS, extra
# "section.key=value" overrides, space-separated; SHARDS [8]; NODES [1] and GPUS_PER_NODE [8]
# for training; EVAL_GPUS [1]; CPUS_PER_TASK [8]; PARTITION, ACCOUNT, QOS [cluster default]; TIME_DISTILL [4:00:00],
# TIME_SELECT [1:00:00], TIME_TRAIN [12:00:00], TIME_EVAL [6:00:00], TIME_BASE [1:00:00]; CPU_ONLY [0]; DEMO_BASE [0];
# VENV [.venv if present]; LOG_DIR [slurm/logs]. The job ids go to $LOG_DIR/pipeline-<time>.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export HINDSIGHT_ROOT="$PWD"
export RECIPE="${RECIPE:-recipes/qwen_lora.yaml}" RECIPE_SETS="${RECIPE_SETS:-}"
export SHARDS="${SHARDS:-8}" NODES="${NODES:-1}" GPUS_PER_NODE="${GPUS_PER_NODE:-8}" CPU_ONLY="${CPU_ONLY:-0}"
EVAL_GPUS="${EVAL_GPUS:-1}" DEMO_BASE="${DEMO_BASE:-0}" LOG_DIR="${LOG_DIR:-slurm/logs}"
mkdir -p "$LOG_DIR"

source slurm/common.sh > /dev/null     # the environment, to read the recipe here
STUDENT="$(python -m hindsight.recipe "$RECIPE" "${SETS[@]}" --get train.output_dir)"   # what train.sbatch writes

common=(--parsable --output="$LOG_DIR/%x-%j.out" --cpus-per-task="${CPUS_PER_TASK:-8}" ${PARTITION:+--partition="$PARTITION"}
        ${ACCOUNT:+--account="$ACCOUNT"} ${QOS:+--qos="$QOS"})
gpus() { if [[ "$CPU_ONLY" != 1 ]]; then echo "--gpus-per-node=$1"; fi; }
after() { local ids=("$@"); [[ ${#ids[@]} -gt 0 ]] && echo "--dependency=afterok:$(IFS=:; echo "${ids[*]}")"; return 0; }

first=()
if [[ "$DEMO_BASE" == 1 ]]; then
  base=$(sbatch "${common[@]}" --time="${TIME_BASE:-1:00:00}" slurm/base.sbatch)
  first=("$base")
fi
distill=$(sbatch "${common[@]}" $(after "${first[@]}") --array="0-$((SHARDS - 1))" \
  --output="$LOG_DIR/%x-%A_%a.out" --time="${TIME_DISTILL:-4:00:00}" slurm/distill.sbatch)
select=$(sbatch "${common[@]}" $(after "$distill") --time="${TIME_SELECT:-1:00:00}" slurm/select.sbatch)
train=$(sbatch "${common[@]}" $(after "$select") --nodes="$NODES" $(gpus "$GPUS_PER_NODE") \
  --time="${TIME_TRAIN:-12:00:00}" slurm/train.sbatch)
eval_base=$(sbatch "${common[@]}" $(after "${first[@]}") $(gpus "$EVAL_GPUS") --time="${TIME_EVAL:-6:00:00}" \
  --job-name=hs-eval-base --export=ALL,RUN_NAME=base slurm/eval.sbatch)
eval_sft=$(sbatch "${common[@]}" $(after "$train") $(gpus "$EVAL_GPUS") --time="${TIME_EVAL:-6:00:00}" \
  --job-name=hs-eval-sft --export="ALL,RUN_NAME=sft,STUDENT=$STUDENT" slurm/eval.sbatch)
compare=$(sbatch "${common[@]}" $(after "$eval_base" "$eval_sft") --time=0:30:00 slurm/compare.sbatch)

record="$LOG_DIR/pipeline-$(date +%Y%m%d-%H%M%S).json"
cat > "$record" <<JSON
{"recipe": "$RECIPE", "recipe_sets": "$RECIPE_SETS", "shards": $SHARDS, "nodes": $NODES,
 "gpus_per_node": $GPUS_PER_NODE, "cpu_only": $CPU_ONLY, "demo_base": $DEMO_BASE,
 "jobs": {"base": "${base:-}", "distill": "$distill", "select": "$select", "train": "$train",
          "eval_base": "$eval_base", "eval_sft": "$eval_sft", "compare": "$compare"}}
JSON
echo "submitted: ${base:+base $base, }distill $distill (array of $SHARDS), select $select, train $train,"
echo "           eval base $eval_base, eval sft $eval_sft, compare $compare"
echo "job ids: $record; logs: $LOG_DIR/; watch: squeue -u \$USER"
