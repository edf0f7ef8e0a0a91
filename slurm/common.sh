# Sourced by every job script: the checkout, the Python environment and the recipe.
# Set by slurm/pipeline.sh (exported to the jobs); defaults for a job submitted by hand.
set -euo pipefail
cd "${HINDSIGHT_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}"
if [[ -n "${VENV:-}" ]]; then source "$VENV/bin/activate"
elif [[ -f .venv/bin/activate ]]; then source .venv/bin/activate; fi
RECIPE="${RECIPE:-recipes/qwen_lora.yaml}"
source scripts/recipe_sets.sh
export PYTHONUNBUFFERED=1
echo "[$(date -Is)] job ${SLURM_JOB_ID:-local}${SLURM_ARRAY_TASK_ID:+ task $SLURM_ARRAY_TASK_ID} on $(hostname): $RECIPE ${RECIPE_SETS:-}"
