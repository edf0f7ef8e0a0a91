#!/usr/bin/env bash
# The paper's Base-vs-SFT experiment in miniature, offline, on CPUs (`make demo`):
#   bash scripts/demo.sh            # every stage, then the comparison table
#   bash scripts/demo.sh base       # one stage: world base distill train eval compare check
#   SEED=1 bash scripts/demo.sh     # another seed for the world, the base, the teacher and the
#                                   # trainer, into outputs/demo-seed1 (scripts/demo_seeds.sh runs several)
#   THREADS=1 bash scripts/demo.sh  # torch's thread count (default: torch's own), into outputs/demo-t1
#   NUMERICS=baseline bash scripts/demo.sh  # another CPU's float details on this one, into outputs/demo-baseline
#   BASE_INIT=build bash scripts/demo.sh  # build the copying curriculum here, not the shipped one
#   DEMO_OUT=DIR bash scripts/demo.sh   # another output folder
#   RL_SEED=1 bash scripts/demo.sh rl  # GRPO again from the same SFT student under another seed
#                                   # (sampling, target order), into <out>/rl-seed1 and runs named rl-seed1
# Every stage is the command a GPU user runs with their own recipe; the only demo-specific
# stage is `base`, which makes a student that can act but knows nothing of the world:
# a tiny Qwen3 with a tokenizer trained on the world's text, taught to copy (shipped in
# assets/demo-init for the default world, or built: stage `init`), fully fine-tuned on naive
# demonstrations (search the brief's first sentence, submit what comes back), that must pass
# the recipe's capability gate (eval/gate.py) before anything is compared. The last stage,
# `check`, exits 1 when the comparison does not show the effect (scripts/check_demo.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
RECIPE="${RECIPE:-recipes/demo.yaml}"
SEED="${SEED:-0}"
default_out=outputs/demo
[[ "$SEED" == 0 ]] || default_out="$default_out-seed$SEED"
if [[ -n "${THREADS:-}" ]]; then
  export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
  default_out="$default_out-t$THREADS"
fi
# NUMERICS=baseline: torch's unvectorised kernels, MKL's compatible code path and oneDNN's SSE4.1
# kernels round nearly every operation otherwise than this CPU's AVX2/AVX-512 ones do: the float
# details of another machine, measured here (the thread count changed no bit on this CPU).
case "${NUMERICS:-}" in
  "") ;;
  baseline) export ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=SSE41
            default_out="$default_out-baseline" ;;
  *) echo "NUMERICS must be baseline or unset, got $NUMERICS" >&2; exit 2 ;;
esac
out="${DEMO_OUT:-$default_out}"
if [[ "$out" != outputs/demo || "$SEED" != 0 ]]; then
  RECIPE_SETS="data.source=world:$SEED distill.seed=$SEED train.seed=$SEED policy.model=$out/base/model \
train.base_model=$out/base/model distill.out_dir=$out/distill train.output_dir=$out/sft runs_dir=$out/runs \
rl.student=$out/sft rl.output_dir=$out/rl rl.seed=$SEED ${RECIPE_SETS:-}"
fi
source scripts/recipe_sets.sh
source scripts/stages.sh
BASE_HIDDEN="${BASE_HIDDEN:-128}"     # the tiny student's width and depth
BASE_LAYERS="${BASE_LAYERS:-4}"
# Learning to copy from context (see hindsight/models/tiny.py): each phase runs until its mean
# loss reaches the target, the steps being the cap. The fall comes late and abruptly, at a step
# that varies with the seed and the CPU's float kernels; a fixed count left some bases half-taught.
BASE_COPY_STEPS="${BASE_COPY_STEPS:-1000}"
BASE_COPY_UNTIL="${BASE_COPY_UNTIL:-0.05}"
BASE_ID_COPY_STEPS="${BASE_ID_COPY_STEPS:-800}"   # then ids out of search results
BASE_ID_COPY_UNTIL="${BASE_ID_COPY_UNTIL:-0.05}"
BASE_QUERY_COPY_STEPS="${BASE_QUERY_COPY_STEPS:-1000}"  # last, a brief's first sentence into a query
BASE_QUERY_COPY_UNTIL="${BASE_QUERY_COPY_UNTIL:-0.05}"
BASE_ID_REHEARSAL="${BASE_ID_REHEARSAL:-0.25}"  # share of the query phase's examples that copy ids again
# A phase that misses its loss within its cap (the fall did not come: seed 3's id phase was still at
# 0.8 after 2,000 steps) restarts the curriculum from a fresh initialisation, this many tries in all.
BASE_ATTEMPTS="${BASE_ATTEMPTS:-3}"
# The curriculum's result for the default world ships in assets/demo-init, built once by
# scripts/build_demo_init.sh and sealed with what it was built from (its provenance.json): the
# falls above come at a step the seed and the CPU decide, so a base built on each machine was a
# different base on each. It is used when it fits this code and these settings exactly;
# BASE_INIT=build builds the curriculum here instead (as every other seed does, 15-30 minutes on
# 2 cores), BASE_INIT=DIR takes another sealed folder.
BASE_INIT="${BASE_INIT:-}"
NAIVE_SAMPLES="${NAIVE_SAMPLES:-1}"   # naive episodes per train target (distill/naive.py)
BASE_EPOCHS="${BASE_EPOCHS:-2}"       # passes over the naive demonstrations
BASE_LR="${BASE_LR:-2e-3}"            # its own, so that tuning the SFT stage leaves the base alone
export TOKENIZERS_PARALLELISM=false

# naive_epochs FROM INTO EPOCHS: full fine-tuning on the naive demonstrations. The recipe's train
# section holds here too, but for what is set: train.frozen_tokens keeps the paper-id pieces as the
# copying curriculum left them, for the base as for the SFT student.
naive_epochs() {
  "$PYTHON" train/sft.py "$RECIPE" "${SETS[@]}" --set train.lora=null --set "train.base_model=$1" \
    --set "train.output_dir=$2" --set "train.data=$(get distill.out_dir)/naive_sft.jsonl" \
    --set "train.epochs=$3" --set "train.learning_rate=$BASE_LR"
}

# gate NAME: the capability gate on the current base (eval/gate.py), from a fresh run folder.
gate() {
  rm -rf "$(get runs_dir)/$1"
  "$PYTHON" eval/gate.py "$RECIPE" "${SETS[@]}" --name "$1"
}

# tiny INTO [ARG ...]: hindsight.models.tiny with the curriculum's settings above.
tiny() {
  local into="$1"; shift
  "$PYTHON" -m hindsight.models.tiny --out "$into" --data "$(get data.source)" \
    --hidden-size "$BASE_HIDDEN" --layers "$BASE_LAYERS" --seed "$SEED" --id-tokens --no-system-turn \
    --copy-steps "$BASE_COPY_STEPS" --copy-until "$BASE_COPY_UNTIL" \
    --id-copy-steps "$BASE_ID_COPY_STEPS" --id-copy-until "$BASE_ID_COPY_UNTIL" \
    --query-copy-steps "$BASE_QUERY_COPY_STEPS" --query-copy-until "$BASE_QUERY_COPY_UNTIL" \
    --id-rehearsal "$BASE_ID_REHEARSAL" --attempts "$BASE_ATTEMPTS" "$@"
}

# The copying curriculum's result in <base>/init: the shipped one where it fits, else built here.
stage_init() {
  local dir asset="${BASE_INIT:-}"
  dir="$(dirname "$(get train.base_model)")"
  [[ -z "$asset" && "$SEED" == 0 ]] && asset=assets/demo-init
  if [[ -n "$asset" && "$asset" != build ]]; then
    say "init: the shipped copying curriculum ($asset), checked against this code and settings"
    local status=0
    tiny "$dir/init" --from-init "$asset" || status=$?
    ((status == 0)) && return 0
    ((status == 3)) || exit "$status"     # a crash is not a stale init: never hidden behind a build
    [[ -z "${BASE_INIT:-}" ]] || exit 3   # named by the user: never built behind their back
    echo "init: $asset does not fit (above): building the curriculum here (scripts/build_demo_init.sh refreshes it)" >&2
  fi
  say "init: tiny Qwen3 → copying curriculum, built here → $dir/init"
  tiny "$dir/init" --seal
}

stage_base() {
  local model dir round retrain t0=$SECONDS
  model="$(get train.base_model)"; dir="$(dirname "$model")"
  # train/sft.py writes a fully fine-tuned model to <output_dir>/model
  [[ "$(basename "$model")" == model ]] || { echo "train.base_model must end in /model, got $model" >&2; exit 2; }
  stage_init
  say "base: naive demonstrations → full fine-tuning of the init → gate → $model"
  "$PYTHON" distill/naive.py "$RECIPE" "${SETS[@]}" --samples "$NAIVE_SAMPLES"
  naive_epochs "$dir/init" "$dir" "$BASE_EPOCHS"
  retrain="$(get gate.retrain_epochs)"
  for ((round = 0; ; round++)); do
    # base_stage: "passed|failed seconds further-epochs", for scripts/gate_table.py
    if gate gate-base; then echo "passed $((SECONDS - t0)) $round" > "$dir/base_stage"; return 0; fi
    if ((round >= retrain)); then
      echo "failed $((SECONDS - t0)) $round" > "$dir/base_stage"
      echo "base: the gate still fails after $retrain further epochs; nothing was compared." >&2
      echo "  $(get runs_dir)/gate-base/gate.json holds the numbers, $dir/init/curriculum.json what the curriculum reached." >&2
      exit 3
    fi
    say "base: one more epoch on the naive demonstrations ($((round + 1)) of at most $retrain)"
    rm -rf "$dir/retrain"
    naive_epochs "$model" "$dir/retrain" 1
    rm -rf "$model" && mv "$dir/retrain/model" "$model"
    mv "$dir/retrain/train_manifest.json" "$dir/retrain-$((round + 1)).train_manifest.json" && rm -rf "$dir/retrain"
  done
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

check_status=0
stage_check() {
  say "check: did SFT beat the base at every stage, on hits it found itself?"
  "$PYTHON" scripts/check_demo.py "$(get runs_dir)/comparison.json" || check_status=$?
}

# `make demo-rl` (after `make demo`): GRPO from the SFT student on train targets, the checkpoint
# chosen on dev, then the three students under one protocol. Not part of `make demo`'s check.
stage_rl() {
  local runs rl=rl rl_dir rl_sets=()
  runs="$(get runs_dir)" rl_dir="$(get rl.output_dir)"
  if [[ -n "${RL_SEED:-}" && "$RL_SEED" != 0 ]]; then
    rl="rl-seed$RL_SEED" rl_dir="$(dirname "$rl_dir")/rl-seed$RL_SEED"
    rl_sets=(--set "rl.seed=$RL_SEED" --set "rl.output_dir=$rl_dir")
  fi
  say "rl: GRPO of the SFT student on the environment, rewarded by its train targets' labels ($rl)"
  "$PYTHON" train/rl.py "$RECIPE" "${SETS[@]}" "${rl_sets[@]}"
  rm -rf "${runs:?}/$rl"
  "$PYTHON" eval/run.py "$RECIPE" "${SETS[@]}" --name "$rl" --student "$rl_dir"
  "$PYTHON" eval/compare.py sft "$rl" --runs-dir "$runs" --json "$runs/$rl-vs-sft.json" > /dev/null
  "$PYTHON" -m hindsight.rl.plot "$rl_dir/rewards.jsonl" "$runs/plots/${rl}_rewards.png"
  # the three phases, base → SFT → RL, under one protocol, each pair with its paired interval
  "$PYTHON" eval/compare.py base sft "$rl" --every-pair --runs-dir "$runs" --markdown "$runs/comparison-$rl.md" \
    --json "$runs/comparison-$rl.json" --html "$runs/viewer-$rl"
  echo "RL against SFT (reported; make demo-rl does not fail on it):"
  "$PYTHON" scripts/check_demo.py "$runs/$rl-vs-sft.json" || true
}

start=$SECONDS
run_stages "world base distill train eval compare check" "$@"
echo
echo "demo finished in $((SECONDS - start)) s; artefacts:"
echo "  base student     $(get train.base_model)"
echo "  distillation     $(get distill.out_dir)   (candidates/, replays.jsonl, selection.json, sft.jsonl)"
echo "  SFT student      $(get train.output_dir)   (model/ or adapter/, train_manifest.json)"
echo "  runs and report  $(get runs_dir)   (base/, sft/, comparison.md, comparison.json, plots/)"
exit "$check_status"
