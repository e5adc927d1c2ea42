#!/usr/bin/env bash
# Configures and builds everything into build/ (the CLI lands at
# build/warpcrypt). Extra arguments go to CMake's configure step, e.g.
# -DWARPCRYPT_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
