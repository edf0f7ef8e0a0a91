# Sourced by scripts/demo.sh, scripts/experiment.sh and slurm/common.sh: RECIPE_SETS, extra "section.key=value" overrides
# separated by spaces (a string, so child processes and Slurm jobs inherit it), becomes the
# array SETS of --set arguments.
read -r -a _recipe_sets <<< "${RECIPE_SETS:-}"
SETS=()
for item in "${_recipe_sets[@]}"; do SETS+=(--set "$item"); done
