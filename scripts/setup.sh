#!/usr/bin/env bash
# One command for a fresh machine: installs what is missing, builds
# everything, installs the Python package into .venv, and runs the main job
# (scripts/demo.sh), which ends with medians of warpcrypt against `openssl enc`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"
scripts/demo.sh
