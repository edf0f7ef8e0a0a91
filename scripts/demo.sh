#!/usr/bin/env bash
# The paper's Base-vs-SFT experiment in miniature, offline, on CPUs (`make demo`):
#   bash scripts/demo.sh            # every stage, then the comparison table
#   bash scripts/demo.sh base       # one stage: world base distill train eval compare
#   SEED=1 bash scripts/demo.sh     # another seed for the world, the base, the teacher and the
#                                   # trainer, into outputs/demo-seed1 (scripts/demo_seeds.sh runs several)
# Every stage is the command a GPU user runs with their own recipe; the only demo-specific
# stage is `base`, which makes a student that can act but knows nothing of the world:
# a tiny Qwen3 with a tokenizer trained on the world's text, fully fine-tuned on naive
# demonstrations (search the brief's first sentence, submit what comes back).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
RECIPE="${RECIPE:-recipes/demo.yaml}"
SEED="${SEED:-0}"
if [[ "$SEED" != 0 ]]; then
  out="outputs/demo-seed$SEED"
  RECIPE_SETS="data.source=world:$SEED distill.seed=$SEED train.seed=$SEED policy.model=$out/base/model \
train.base_model=$out/base/model distill.out_dir=$out/distill train.output_dir=$out/sft runs_dir=$out/runs ${RECIPE_SETS:-}"
fi
source scripts/recipe_sets.sh
source scripts/stages.sh
BASE_HIDDEN="${BASE_HIDDEN:-128}"     # the tiny student's width and depth
BASE_LAYERS="${BASE_LAYERS:-4}"
BASE_COPY_STEPS="${BASE_COPY_STEPS:-250}"  # learning to copy from context (see hindsight/models/tiny.py)
BASE_ID_COPY_STEPS="${BASE_ID_COPY_STEPS:-500}"  # then ids out of search results
NAIVE_SAMPLES="${NAIVE_SAMPLES:-1}"   # naive episodes per train target (distill/naive.py)
BASE_EPOCHS="${BASE_EPOCHS:-2}"       # passes over the naive demonstrations
BASE_LR="${BASE_LR:-2e-3}"            # its own, so that tuning the SFT stage leaves the base alone
export TOKENIZERS_PARALLELISM=false

stage_base() {
  local model dir
  model="$(get train.base_model)"; dir="$(dirname "$model")"
  # train/sft.py writes a fully fine-tuned model to <output_dir>/model
  [[ "$(basename "$model")" == model ]] || { echo "train.base_model must end in /model, got $model" >&2; exit 2; }
  say "base: tiny Qwen3 → naive demonstrations → full fine-tuning → $model"
  "$PYTHON" -m hindsight.models.tiny --out "$dir/init" --data "$(get data.source)" \
    --hidden-size "$BASE_HIDDEN" --layers "$BASE_LAYERS" --seed "$SEED" --id-tokens --copy-steps "$BASE_COPY_STEPS" --id-copy-steps "$BASE_ID_COPY_STEPS" --no-system-turn
  "$PYTHON" distill/naive.py "$RECIPE" "${SETS[@]}" --samples "$NAIVE_SAMPLES"
  # The recipe's train section holds here too, but for what is set: train.frozen_tokens keeps the
  # paper-id pieces as the copying curriculum left them, for the base as for the SFT student.
  "$PYTHON" train/sft.py "$RECIPE" "${SETS[@]}" --set train.lora=null --set "train.base_model=$dir/init" \
    --set "train.output_dir=$dir" --set "train.data=$(get distill.out_dir)/naive_sft.jsonl" \
    --set "train.epochs=$BASE_EPOCHS" --set "train.learning_rate=$BASE_LR"
}

stage_train() {
  say "train: hindsight SFT of the base on the selected demonstrations"
  "$PYTHON" train/sft.py "$RECIPE" "${SETS[@]}"
}

stage_eval() {
  local runs
  runs="$(get runs_dir)"
  say "eval: base and the SFT student on the held-out eval split, one protocol"
  # A rerun of this stage evaluates the students as they are now, from the first target (the
  # runner would refuse to resume a run whose model folder has changed since).
  rm -rf "$runs/base" "$runs/sft"
  "$PYTHON" eval/run.py "$RECIPE" "${SETS[@]}" --name base
  "$PYTHON" eval/run.py "$RECIPE" "${SETS[@]}" --name sft --student "$(get train.output_dir)"
}

stage_compare() {
  local runs
  runs="$(get runs_dir)"
  say "compare: the exposure → selection → ranking funnel, paired bootstrap intervals"
  "$PYTHON" eval/compare.py base sft --runs-dir "$runs" --plots "$runs/plots" --training-set "$(get distill.out_dir)/sft.jsonl" \
    --markdown "$runs/comparison.md" --json "$runs/comparison.json" --html "$runs/viewer"
  echo "episode viewer: open $(realpath "$runs/viewer/index.html") in a browser (no server needed)"
}

start=$SECONDS
run_stages "world base distill train eval compare" "$@"
echo
echo "demo finished in $((SECONDS - start)) s; artefacts:"
echo "  base student     $(get train.base_model)"
echo "  distillation     $(get distill.out_dir)   (candidates/, replays.jsonl, selection.json, sft.jsonl)"
echo "  SFT student      $(get train.output_dir)   (model/ or adapter/, train_manifest.json)"
echo "  runs and report  $(get runs_dir)   (base/, sft/, comparison.md, comparison.json, plots/)"
