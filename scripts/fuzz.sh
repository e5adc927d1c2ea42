#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz into build-fuzz/ (clang, ASan
# and UBSan, CPU only), or takes them from FUZZ_BUILD_DIR, a build
# configured with -DWARPCRYPT_FUZZ=ON already (CI's: scripts/sanitize.sh's
# ASan build, which builds them beside its tests rather than compiling the
# library a second time), and runs each for FUZZ_SECONDS (default 45), as many
# at once as there are cores, starting from its seeds in
# tests/fuzz/corpus/<target>/. Fails on any crash, leak, timeout, running
# out of memory or sanitizer report; the input that caused it is kept in
# build-fuzz/artifacts/, each run's log in build-fuzz/logs/. Prints each
# target's executions from libFuzzer's final stat lines.
#
#   FUZZ_SECONDS=600 scripts/fuzz.sh [TARGET...]   (default: every target)
#
# New inputs a run finds go to build-fuzz/corpus/<target>/, where the next
# run starts from as well; tests/fuzz/corpus/ is only read. Needs clang and
# its runtimes (Debian: clang libclang-rt-dev llvm).
#
# The Python package's parsers (tests/fuzz/<target>_fuzzer.py) run under
# atheris, libFuzzer for Python, from .venv with the installed package, for
# at most 30 s each: their executions are slower, and CI's time is shared.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-45}
native_targets=(sealed_header age_header open_fd cli_arguments passphrase_source base64 aes_gcm_vaes age_pq
                ssh_key age_plugin chacha20_poly1305_segmented)
python_targets=(zarr_codec torch_checkpoint safetensors_header sharded_index)
all_targets=("${native_targets[@]}" "${python_targets[@]}")
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] || {
    echo "fuzz.sh: unknown target '$target' (${all_targets[*]})" >&2
    exit 2
  }
done
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (Debian: apt-get install clang libclang-rt-dev llvm)" >&2
  exit 1
fi
if command -v llvm-symbolizer >/dev/null; then
  ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
  export ASAN_SYMBOLIZER_PATH
fi
export UBSAN_OPTIONS=print_stacktrace=1

start=$(date +%s)
build=${FUZZ_BUILD_DIR:-build-fuzz}
echo "==> building the fuzz targets ($build)"
if [[ -z ${FUZZ_BUILD_DIR:-} ]]; then
  # clang's default constexpr step limit is too low for the AES tables that
  # src/core/aes_tables.cpp computes at compile time.
  cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARPCRYPT_CUDA=OFF -DWARPCRYPT_FUZZ=ON \
    -DWARPCRYPT_BUILD_TESTS=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS=-fconstexpr-steps=16777216 >/dev/null
elif ! grep -q '^WARPCRYPT_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz.sh: FUZZ_BUILD_DIR=$build is not a build configured with -DWARPCRYPT_FUZZ=ON" >&2
  exit 2
fi
native=()
for target in "${targets[@]}"; do
  [[ " ${python_targets[*]} " == *" $target "* ]] || native+=("$target")
done
((${#native[@]} == 0)) || cmake --build "$build" -j"$(nproc)" --target "${native[@]/%/_fuzzer}"
echo "==> $build build: $(($(date +%s) - start)) s"

# Sealed files grow to a few chunks of 4 KiB; the other inputs are words.
declare -A max_len=([open_fd]=16384)
# Targets that reach their coverage early run shorter, so that CI's time
# stays within its budget: base64's coder is OpenSSL's, with a thin wrapper;
# aes_gcm_vaes has no branches on data, only on lengths; age_pq's parsers
# are small, and each input costs an ML-KEM decapsulation; ssh_key's
# parsers are small, and its encrypted seeds' KDF is slow; age_plugin's
# state machines are small; chacha20_poly1305_segmented, like aes_gcm_vaes,
# branches only on lengths and the worker count; sharded_index's index is
# JSON that Python's own parser reads, and each input loads a checkpoint.
declare -A most_seconds=([base64]=20 [aes_gcm_vaes]=20 [age_pq]=20 [ssh_key]=20 [age_plugin]=20
                         [chacha20_poly1305_segmented]=20 [sharded_index]=15)

# fuzz TARGET: one libFuzzer run, its exit status left in the log folder.
fuzz() {
  local target=$1
  mkdir -p "build-fuzz/corpus/$target"
  local status=0
  local command=("$build/tests/fuzz/${target}_fuzzer")
  local run_seconds=$seconds
  if [[ -n ${most_seconds[$target]:-} ]] && ((most_seconds[$target] < seconds)); then
    run_seconds=${most_seconds[$target]}
  fi
  if [[ " ${python_targets[*]} " == *" $target "* ]]; then
    command=(.venv/bin/python "tests/fuzz/${target}_fuzzer.py")
    run_seconds=$((run_seconds < 30 ? run_seconds : 30))
  fi
  "${command[@]}" -max_total_time="$run_seconds" -timeout=10 \
    -max_len="${max_len[$target]:-4096}" -print_final_stats=1 \
    -artifact_prefix="build-fuzz/artifacts/$target-" \
    "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" >"build-fuzz/logs/$target.log" 2>&1 || status=$?
  echo "$status" >"build-fuzz/logs/$target.status"
}

start=$(date +%s)
mkdir -p build-fuzz/artifacts build-fuzz/logs
echo "==> fuzzing ${targets[*]} for $seconds s each, $(nproc) at a time"
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
  fuzz "$target" &
done
wait

failed=()
for target in "${targets[@]}"; do
  log=build-fuzz/logs/$target.log
  if [[ $(cat "build-fuzz/logs/$target.status") != 0 ]]; then
    echo "==> $target FAILED (log: $log, input: build-fuzz/artifacts/$target-*)"
    tail -n 60 "$log"
    failed+=("$target")
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  echo "==> $target: $runs executions ($per_second/s), $coverage"
done
echo "==> fuzzing: $(($(date +%s) - start)) s"
if ((${#failed[@]})); then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
