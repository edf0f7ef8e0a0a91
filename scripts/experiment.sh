#!/usr/bin/env bash
# The matched Base-vs-hindsight-SFT experiment for any recipe whose student already exists
# (a hub id, a model folder or a .gguf file):
#   bash scripts/experiment.sh recipes/qwen05_world.yaml            # every stage
#   bash scripts/experiment.sh recipes/qwen05_world.yaml train eval  # some stages again
#   SEED=1 bash scripts/experiment.sh recipes/qwen05_world.yaml     # another seed (teacher sampling, trainer,
#                                  # LoRA init; the world fixed), its folders under <each folder's parent>/seed1/
# Stages: model world distill train eval compare. Run the same command again after a crash and
# finished work is kept: distillation and evaluation resume per target, a finished training is
# not redone and an interrupted one resumes from its last checkpoint (train.save_every).
# Variables: PYTHON (python), EVAL_PYTHON (the evaluation's python: .venv-vllm/bin/python where
# `make venv-vllm` made it, with policy.backend=vllm, else PYTHON with the recipe's backend),
# THREADS (torch threads, default: every core), RECIPE_SETS (extra section.key=value overrides,
# space-separated, e.g. policy.backend=hf to evaluate with transformers), MODELS_FETCH (../shared/models/fetch).
set -euo pipefail
cd "$(dirname "$0")/.."
RECIPE="${1:?usage: scripts/experiment.sh RECIPE [stage ...]}"; shift
PYTHON="${PYTHON:-python}"
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

stage_train() {
  local out sft
  out="$(get train.output_dir)"; sft="$(get distill.out_dir)/sft.jsonl"
  if [[ -f "$out/train_manifest.json" && "$out/train_manifest.json" -nt "$sft" ]]; then
    say "train: $out is already trained on $sft (delete it to train again)"; return
  fi
  say "train: hindsight SFT of the student on the selected demonstrations"
  "$PYTHON" train/sft.py "$RECIPE" "${SETS[@]}"
}

# vLLM evaluates where its environment exists (float32 on CPU, like transformers: the same table,
# faster); a user's RECIPE_SETS come after, so policy.backend=hf there still wins.
EVAL_SETS=()
if [[ -z "${EVAL_PYTHON:-}" && -x .venv-vllm/bin/python ]]; then
  EVAL_PYTHON=.venv-vllm/bin/python EVAL_SETS=(--set policy.backend=vllm)
fi

stage_eval() {
  say "eval: base and the SFT student on the held-out targets, one protocol (${EVAL_PYTHON:-$PYTHON})"
  "${EVAL_PYTHON:-$PYTHON}" eval/run.py "$RECIPE" "${EVAL_SETS[@]}" "${SETS[@]}" --name base
  "${EVAL_PYTHON:-$PYTHON}" eval/run.py "$RECIPE" "${EVAL_SETS[@]}" "${SETS[@]}" --name sft --student "$(get train.output_dir)"
}

stage_compare() {
  local runs
  runs="$(get runs_dir)"
  say "compare: the exposure → selection → ranking funnel, paired bootstrap intervals"
  # the both-submitted slice: targets where both arms submitted a readable answer, which the
  # answer's format alone cannot explain
  "$PYTHON" eval/compare.py base sft --runs-dir "$runs" --plots "$runs/plots" --training-set "$(get distill.out_dir)/sft.jsonl" \
    --slice both-submitted --markdown "$runs/comparison.md" --json "$runs/comparison.json" --html "$runs/viewer"
  echo "episode viewer: open $(realpath "$runs/viewer/index.html") in a browser (no server needed)"
}

start=$SECONDS
run_stages "model world distill train eval compare" "$@"
echo "experiment finished in $((SECONDS - start)) s; table: $(get runs_dir)/comparison.md"
