# Sourced by scripts/demo.sh and scripts/experiment.sh after they set PYTHON, RECIPE and SETS:
# the recipe lookup, the stage banner, the stages both share, and the loop that runs stages.

get() { "$PYTHON" -m hindsight.recipe "$RECIPE" "${SETS[@]}" --get "$1"; }
say() { printf '\n== %s [%s]\n' "$1" "$(date +%T)"; }

stage_world() {
  say "world: the instances and the corpus"
  "$PYTHON" -m hindsight.data "$(get data.source)"
}

stage_distill() {
  say "distill: privileged teacher → replay validation → dev-frozen selection"
  "$PYTHON" distill/teacher.py "$RECIPE" "${SETS[@]}"
  "$PYTHON" distill/replay.py "$RECIPE" "${SETS[@]}"
  "$PYTHON" distill/select_demos.py "$RECIPE" "${SETS[@]}"
}

# run_stages "all stages, in order" [stage ...]: the named stages (default: all), each timed.
run_stages() {
  local all=($1) stage t0; shift
  local chosen=("${all[@]}")
  if [[ $# -gt 0 ]]; then chosen=("$@"); fi
  for stage in "${chosen[@]}"; do
    declare -F "stage_$stage" > /dev/null || { echo "unknown stage $stage; stages: ${all[*]}" >&2; exit 2; }
    t0=$SECONDS
    "stage_$stage"
    echo "-- $stage took $((SECONDS - t0)) s"
  done
}
