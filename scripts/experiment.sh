#!/usr/bin/env bash
# The matched experiment for any recipe whose student already exists (a hub id, a model folder or
# a .gguf file): the base, the format control (the same student and trainer settings on as many
# demonstrations of the same shape, from the brief alone: distill/naive.py --format-control) and
# the hindsight SFT student, under one protocol:
#   bash scripts/experiment.sh recipes/qwen05_world.yaml            # every stage
#   bash scripts/experiment.sh recipes/qwen05_world.yaml train eval  # some stages again
#   SEED=1 bash scripts/experiment.sh recipes/qwen05_world.yaml     # another seed (teacher sampling, trainer,
#                                  # LoRA init; the world fixed), its folders under <each folder's parent>/seed1/
# Stages: model world distill format train train_format eval compare. Run the same command again after a crash and
# finished work is kept: distillation and evaluation resume per target, a finished training is
# not redone and an interrupted one resumes from its last checkpoint (train.save_every).
# Variables: PYTHON (.venv/bin/python where `make venv` made it, else python), EVAL_PYTHON (the evaluation's python: .venv-vllm/bin/python where
# `make venv-vllm` made it, with policy.backend=vllm, else PYTHON with the recipe's backend),
# THREADS (torch threads, default: every core), RECIPE_SETS (extra section.key=value overrides,
# space-separated, e.g. policy.backend=hf to evaluate with transformers), ARMS (the eval stage's
# runs, default "base format sft"), MODELS_FETCH (../shared/models/fetch).
set -euo pipefail
cd "$(dirname "$0")/.."
RECIPE="${1:?usage: scripts/experiment.sh RECIPE [stage ...]}"; shift
PYTHON="${PYTHON:-$([[ -x .venv/bin/python ]] && echo .venv/bin/python || echo python)}"
MODELS_FETCH="${MODELS_FETCH:-../shared/models/fetch}"
source scripts/recipe_sets.sh
source scripts/stages.sh
if [[ -n "${SEED:-}" ]]; then
  seeded() { local path; path="$(get "$1")"; echo "$(dirname "$path")/seed$SEED/$(basename "$path")"; }
  RECIPE_SETS="distill.seed=$SEED train.seed=$SEED distill.out_dir=$(seeded distill.out_dir) \
train.output_dir=$(seeded train.output_dir) runs_dir=$(seeded runs_dir) ${RECIPE_SETS:-}"
  source scripts/recipe_sets.sh
fi
export TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS="${THREADS:-$(nproc)}"

stage_model() {
  local model
  model="$(get policy.model)"; model="${model/#\~/$HOME}"
  say "model: $model"
  if [[ "$model" == *.gguf && ! -f "$model" && -x "$MODELS_FETCH" ]]; then
    # ../shared/models/fetch knows the project's real test models by name, e.g. qwen2.5-coder-0.5b-instruct
    local name; name="$(basename "$model" .gguf)"; name="${name%-q*}"
    HINDSIGHT_MODELS="$(dirname "$model")" "$MODELS_FETCH" "$name"
  fi
  if [[ "$model" == *.gguf ]]; then "$PYTHON" -m hindsight.models.gguf "$model"; fi
}

# The format control's student sits beside the hindsight one: <train.output_dir's parent>/format-sft.
format_dir() { echo "$(dirname "$(get train.output_dir)")/format-sft"; }

stage_format() {
  say "format: the format control's demonstrations (the same targets and shapes, the brief's words only)"
  "$PYTHON" distill/naive.py "$RECIPE" "${SETS[@]}" --format-control
}

# train_arm WHAT SFT_SET OUTPUT_DIR: one student, skipped when it is newer than its set.
train_arm() {
  if [[ -f "$3/train_manifest.json" && "$3/train_manifest.json" -nt "$2" ]]; then
    say "train: $3 is already trained on $2 (delete it to train again)"; return
  fi
  say "train: $1"
  "$PYTHON" train/sft.py "$RECIPE" "${SETS[@]}" --set "train.data=$2" --set "train.output_dir=$3"
}

stage_train() {
  train_arm "hindsight SFT of the student on the selected demonstrations" \
    "$(get distill.out_dir)/sft.jsonl" "$(get train.output_dir)"
}

stage_train_format() {
  train_arm "the format control: the same student and settings on the format demonstrations" \
    "$(get distill.out_dir)/format_sft.jsonl" "$(format_dir)"
}

# vLLM evaluates where its environment exists (float32 on CPU, like transformers: the same table,
# faster); a user's RECIPE_SETS come after, so policy.backend=hf there still wins.
EVAL_SETS=()
if [[ -z "${EVAL_PYTHON:-}" && -x .venv-vllm/bin/python ]]; then
  EVAL_PYTHON=.venv-vllm/bin/python EVAL_SETS=(--set policy.backend=vllm)
fi

# ARMS (default: base format sft) names the runs the eval stage makes and compare reads, in order.
ARMS=(${ARMS:-base format sft})

stage_eval() {
  local arm
  for arm in "${ARMS[@]}"; do
    say "eval: $arm on the held-out targets, one protocol (${EVAL_PYTHON:-$PYTHON})"
    case "$arm" in
      base) "${EVAL_PYTHON:-$PYTHON}" eval/run.py "$RECIPE" "${EVAL_SETS[@]}" "${SETS[@]}" --name base ;;
      format) "${EVAL_PYTHON:-$PYTHON}" eval/run.py "$RECIPE" "${EVAL_SETS[@]}" "${SETS[@]}" --name format --student "$(format_dir)" ;;
      sft) "${EVAL_PYTHON:-$PYTHON}" eval/run.py "$RECIPE" "${EVAL_SETS[@]}" "${SETS[@]}" --name sft --student "$(get train.output_dir)" ;;
      *) echo "unknown arm $arm; arms: base format sft" >&2; exit 2 ;;
    esac
  done
}

stage_compare() {
  local runs
  runs="$(get runs_dir)"
  say "compare: the exposure → selection → ranking funnel, paired bootstrap intervals"
  # the both-submitted slice: targets where both arms submitted a readable answer, which the
  # answer's format alone cannot explain
  "$PYTHON" eval/compare.py "${ARMS[@]}" --every-pair --runs-dir "$runs" --plots "$runs/plots" --training-set "$(get distill.out_dir)/sft.jsonl" \
    --slice both-submitted --markdown "$runs/comparison.md" --json "$runs/comparison.json" --html "$runs/viewer"
  echo "episode viewer: open $(realpath "$runs/viewer/index.html") in a browser (no server needed)"
}

start=$SECONDS
run_stages "model world distill format train train_format eval compare" "$@"
echo "experiment finished in $((SECONDS - start)) s; table: $(get runs_dir)/comparison.md"
