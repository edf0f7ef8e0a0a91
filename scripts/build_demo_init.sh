#!/usr/bin/env bash
# Rebuild assets/demo-init, the demo's copying curriculum for the default world, sealed with its
# provenance (hindsight/models/shipped.py):
#   bash scripts/build_demo_init.sh        # 15-30 minutes on 2 cores; then commit assets/demo-init
# Run it when `make demo` says the shipped folder no longer fits the code: the tokenizer's text,
# the protocol's prompts, the chat template, the ids or a BASE_* setting of scripts/demo.sh changed.
# Check the rebuilt folder as the demo uses it (`make demo`: the gate and the check) before
# committing it, and say in the commit which inputs changed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=outputs/demo-init-build
rm -rf "$build"
BASE_INIT=build DEMO_OUT="$build" bash scripts/demo.sh world init
rm -rf assets/demo-init && mkdir -p assets && cp -r "$build/base/init" assets/demo-init
echo "assets/demo-init rebuilt ($(du -sh assets/demo-init | cut -f1)); its provenance.json says how"
