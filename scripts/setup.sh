#!/usr/bin/env bash
# One command for a fresh machine: installs what is missing, builds the
# library and the CLI, installs the Python package into .venv, and runs the
# main job (scripts/demo.sh), which ends with medians of warpcrypt against
# `openssl enc`. The test binaries are left to scripts/test.sh, which builds
# them on top of this build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
WARPCRYPT_BUILD_TARGETS="warpcrypt_cli warpcrypt_shared" scripts/build.sh "$@"
scripts/demo.sh
