#!/usr/bin/env bash
# What only a GPU runs, checked in about ten minutes on one GPU machine (two GPUs add FSDP2):
#   bash scripts/gpu_check.sh                       # log: outputs/gpu_check/gpu_check.log
#   MODEL=Qwen/Qwen3-0.6B bash scripts/gpu_check.sh # a hub student where a network exists
# Steps, each timed and marked PASS, FAIL or SKIP (with the reason) in the log's last lines:
#   env       nvidia-smi, torch's CUDA and bf16, the versions that matter
#   tests     the tests marked gpu (pytest -m gpu)
#   distill   the world's scripted-teacher demonstrations on 12 train targets (CPU, seconds)
#   train     recipes/qwen_lora.yaml's trainer settings (bf16, gradient checkpointing, the paper's
#             LoRA on every projection) on those rows: one process, 8 rows, one epoch
#   vllm      eval/run.py with policy.backend=vllm: base and the adapter on 4 world eval targets,
#             one engine; the mixed-batch guard and the adapter probe run at the engine's start
#   fsdp2     the same training over two processes with recipes/accelerate/fsdp.yaml (two GPUs)
# The student defaults to the local Qwen2.5-Coder-0.5B (../shared/models/fetch), since the
# recipe's Qwen3-8B needs a hub; MODEL names any local folder or hub id instead. Exits non-zero
# when a step failed. PYTHON picks the interpreter (default: python3).
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
OUT="${GPU_CHECK_OUT:-outputs/gpu_check}"
LOG="$OUT/gpu_check.log"
RECIPE=recipes/qwen_lora.yaml
mkdir -p "$OUT"
: > "$LOG"
SUMMARY=()
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"

# step NAME COMMAND...: run it, its output into the log, its outcome into the summary.
step() {
  local name="$1" start=$SECONDS status; shift
  printf '\n== %s [%s]\n' "$name" "$(date +%T)" | tee -a "$LOG"
  "$@" >> "$LOG" 2>&1; status=$?
  if [[ $status -eq 0 ]]; then SUMMARY+=("PASS $name $((SECONDS - start)) s")
  elif [[ $status -eq 77 ]]; then SUMMARY+=("SKIP $name: $(tail -1 "$LOG")")
  else SUMMARY+=("FAIL $name (exit $status, $((SECONDS - start)) s)"); fi
  echo "${SUMMARY[-1]}"
}
skip() { echo "$1"; return 77; }
has() { "$PYTHON" -c "import $1" 2>/dev/null; }

env_report() {
  nvidia-smi -L || skip "no nvidia-smi: not a GPU machine" || return
  "$PYTHON" - <<'PY'
import importlib, torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
print("bf16 supported:", torch.cuda.is_available() and torch.cuda.is_bf16_supported())
for name in ("transformers", "peft", "trl", "accelerate", "datasets", "vllm"):
    try:
        print(name, importlib.import_module(name).__version__)
    except ImportError:
        print(name, "not installed")
PY
  "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
}

student() {
  if [[ -n "${MODEL:-}" ]]; then echo "$MODEL"; return; fi
  local gguf; gguf="$(../shared/models/fetch qwen2.5-coder-0.5b-instruct 2>/dev/null | tail -1)" || return 1
  "$PYTHON" -m hindsight.models.gguf "$gguf"
}

GPUS="$(nvidia-smi -L 2>/dev/null | wc -l)"
SETS=(--set data.source=world --set data.max_targets=4 --set "distill.out_dir=$OUT/distill"
  --set distill.teacher=scripted --set distill.max_targets=12 --set distill.candidates=1
  --set distill.keep_quantile=1.0 --set "runs_dir=$OUT/runs" --set train.max_length=8192)

train_on() {  # train_on OUTPUT_DIR ACCELERATE_CONFIG PROCESSES
  has trl || skip "trl is not installed" || return
  "$PYTHON" -m accelerate.commands.launch --config_file "$2" --num_processes "$3" train/sft.py "$RECIPE" \
    "${SETS[@]}" --set "train.base_model=$MODEL_PATH" --set "train.output_dir=$1" \
    --set train.max_examples=8 --set train.epochs=1 --set train.gradient_accumulation_steps=1 --set train.save_every=null
}

vllm_eval() {
  has vllm || skip "vllm is not installed" || return
  [[ -f "$OUT/sft/train_manifest.json" ]] || skip "no adapter: the train step did not finish" || return
  local sets=("${SETS[@]}" --set policy.backend=vllm --set "policy.model=$MODEL_PATH" --set policy.max_new_tokens=256)
  "$PYTHON" eval/run.py "$RECIPE" "${sets[@]}" --name base &&
    "$PYTHON" eval/run.py "$RECIPE" "${sets[@]}" --name sft --student "$OUT/sft" &&
    "$PYTHON" eval/compare.py base sft --runs-dir "$OUT/runs"
}

fsdp2() {
  [[ "$GPUS" -ge 2 ]] || skip "FSDP2 needs two GPUs; this machine has $GPUS" || return
  train_on "$OUT/sft-fsdp2" recipes/accelerate/fsdp.yaml 2
}

step env env_report
step tests "$PYTHON" -m pytest -q -m gpu tests
MODEL_PATH="$(student)" || MODEL_PATH=""
echo "student: ${MODEL_PATH:-none found}" | tee -a "$LOG"
step distill bash -c "$PYTHON distill/teacher.py $RECIPE ${SETS[*]} && $PYTHON distill/replay.py $RECIPE ${SETS[*]} && $PYTHON distill/select_demos.py $RECIPE ${SETS[*]}"
step train train_on "$OUT/sft" recipes/accelerate/single_gpu.yaml 1
step vllm vllm_eval
step fsdp2 fsdp2
printf '\n== summary\n%s\n' "$(printf '%s\n' "${SUMMARY[@]}")" | tee -a "$LOG"
! printf '%s\n' "${SUMMARY[@]}" | grep -q '^FAIL'
