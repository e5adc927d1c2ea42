#!/usr/bin/env bash
# The CPU-only unit tests under clang's sanitizers, each in its own build:
#   build-asan/  AddressSanitizer and UndefinedBehaviorSanitizer: the whole
#                ctest suite; any report fails the test that made it. Then
#                the CLI built the same way goes through the attack tests
#                (tests/cli/test_trust.py and test_age_trust.py), which
#                count a sanitizer report on stderr as a crash. It is
#                configured with -DWARPCRYPT_FUZZ=ON and builds the libFuzzer
#                targets too, for scripts/fuzz.sh (FUZZ_BUILD_DIR=build-asan),
#                so CI compiles the instrumented library once.
#   build-tsan/  ThreadSanitizer: the tests that run the thread pool and the
#                engine's workers (threading, engine, late-lane, sealed-file
#                and AEAD staging tests), the only unit tests it builds
#                (WARPCRYPT_UNIT_TESTS=threads, tests/CMakeLists.txt).
# Only what the tests run is built: the unit-test binary, and the CLI for
# the ASan attack tests. OpenSSL and libsodium are not instrumented; no
# suppressions, as neither sanitizer reports anything of theirs.
#
#   scripts/sanitize.sh [asan] [tsan]   (default: both)
#
# Needs clang and its runtimes (Debian: clang libclang-rt-dev llvm).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang++ >/dev/null; then
  echo "sanitize.sh: clang++ not found (Debian: apt-get install clang libclang-rt-dev llvm)" >&2
  exit 1
fi

WARPCRYPT_VECTORS_DIR=$(.venv/bin/python -c \
  'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
export WARPCRYPT_VECTORS_DIR
export WARPCRYPT_REQUIRE_VECTORS=1  # the vector sets must run, never skip

# Reports name source lines only when the symbolizer is found.
if command -v llvm-symbolizer >/dev/null; then
  export ASAN_SYMBOLIZER_PATH TSAN_SYMBOLIZER_PATH
  ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
  TSAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH
fi

# clang's default constexpr step limit is too low for the AES tables that
# src/core/aes_tables.cpp computes at compile time.
common_flags="-fconstexpr-steps=16777216 -fno-omit-frame-pointer"

# build_tests DIR SANITIZER_FLAGS FUZZ UNIT_TESTS TARGET...: configures
# (FUZZ: ON or OFF, WARPCRYPT_FUZZ; UNIT_TESTS: all or threads,
# WARPCRYPT_UNIT_TESTS) and builds the targets.
build_tests() {
  local dir=$1 sanitizer_flags=$2 fuzz=$3 unit_tests=$4
  shift 4
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARPCRYPT_CUDA=OFF -DWARPCRYPT_FUZZ="$fuzz" \
    -DWARPCRYPT_UNIT_TESTS="$unit_tests" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS="$sanitizer_flags $common_flags" -DCMAKE_CXX_FLAGS="$sanitizer_flags $common_flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitizer_flags" -DCMAKE_SHARED_LINKER_FLAGS="$sanitizer_flags" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target "$@"
}

# Prints how long the step named $1 took since $2 (seconds since the epoch).
report_time() {
  echo "==> $1: $(($(date +%s) - $2)) s"
}

run_asan() {
  local start
  start=$(date +%s)
  echo "==> AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan)"
  build_tests build-asan "-fsanitize=address,undefined -fno-sanitize-recover=all" ON all \
    warpcrypt_unit_tests warpcrypt_cli warpcrypt_fuzzers
  report_time "build-asan build" "$start"
  start=$(date +%s)
  echo "==> unit tests under ASan + UBSan"
  # Not the constant-time checks (label valgrind): valgrind cannot run a
  # sanitizer's binary, and the plain build runs them (scripts/test.sh).
  ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -LE valgrind
  report_time "build-asan tests" "$start"
  start=$(date +%s)
  echo "==> the attack tests on the CLI under ASan + UBSan"
  # The freed-secret scanner is an LD_PRELOAD library, which ASan's runtime
  # refuses to follow; those tests run on the plain build in scripts/test.sh.
  # scrypt past the memory there is must fail cleanly, so malloc returns NULL
  # under ASan as it does without it. The sealed-file mutation suite runs
  # on the plain build (scripts/test.sh): its 7,600 opens took three of
  # this step's four minutes here, and the open_fd and sealed_header fuzz
  # targets mutate sealed files under these sanitizers (scripts/fuzz.sh).
  WARPCRYPT_CLI=build-asan/warpcrypt ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    .venv/bin/python -m pytest tests/cli/test_trust.py tests/cli/test_age_trust.py -q -n auto -k "not heap"
  report_time "build-asan CLI attack tests" "$start"
}

run_tsan() {
  local start
  start=$(date +%s)
  echo "==> ThreadSanitizer build (build-tsan)"
  build_tests build-tsan "-fsanitize=thread" OFF threads warpcrypt_unit_tests
  report_time "build-tsan build" "$start"
  start=$(date +%s)
  echo "==> thread pool, engine, late-lane, sealed-file and staging tests under TSan"
  # The staging on one lane is left to ASan and the plain build: what its
  # threads share, the four- and sixteen-lane runs share too, and its three
  # tests took a fifth of this step (50 of 258 s) at ccccf9a.
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure -j"$(nproc)" \
      -R '(ThreadedEqualsSingleThreaded|Engine|Sealed|LateLanes|StagedAead)[A-Za-z]*\.' -E '/1_lanes_'
  report_time "build-tsan tests" "$start"
}

sanitizers=("$@")
((${#sanitizers[@]})) || sanitizers=(asan tsan)
for sanitizer in "${sanitizers[@]}"; do
  case $sanitizer in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) echo "sanitize.sh: unknown sanitizer '$sanitizer' (asan or tsan)" >&2; exit 2 ;;
  esac
done
