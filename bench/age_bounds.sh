#!/usr/bin/env bash
# What bounds `warpcrypt age` on this machine, beside bench/engine_bench.py's
# medians: a 1 GiB random file in /dev/shm, the fastest of five runs of each
# command (process start included). Prints one line per command:
#   - warpcrypt age and the reference `age`, each way, to /dev/null and to a
#     file in /dev/shm (overwritten run after run);
#   - warpcrypt age on 1 to 32 CPU lanes (--threads), to /dev/null;
#   - writing 1 GiB into one tmpfs file with dd, cp and warpcrypt enc: the
#     file system's own bound for the to-a-file rows;
#   - the bounds of the /dev/null rows without warpcrypt: the cores (lscpu),
#     reading the file with 1 and nproc readers (dd on slices), OpenSSL's
#     ChaCha20-Poly1305 sealing the file's 64 KiB chunks on 1 and nproc
#     threads from memory, after pread and from a mapping
#     (bench/age_floor_bench.cpp, built here: needs c++ and OpenSSL's
#     headers), a 0-byte file (process start), and the user and system
#     seconds of one run;
#   - the GPU and hybrid backends, where there is a device.
#   bench/age_bounds.sh [WARPCRYPT_BINARY]   (default build/warpcrypt; `age` from PATH)
set -euo pipefail
w=${1:-build/warpcrypt}
scratch=$(mktemp -d /dev/shm/age-bounds.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fastest() {  # fastest COMMAND...: the best wall time of five runs
  local best=""
  for _ in 1 2 3 4 5; do
    local start=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || { echo "FAILED: $*"; return; }
    best=$(awk -v t="$(awk "BEGIN { print $EPOCHREALTIME - $start }")" -v b="$best" \
      'BEGIN { print (b == "" || t < b) ? t : b }')
  done
  printf '%.3f s  %s\n' "$best" "$*"
}
plain=$scratch/plain
head -c 1G /dev/urandom >"$plain"
"$w" age-keygen -o "$scratch/identity" 2>/dev/null
recipient=$("$w" age-keygen -y "$scratch/identity")
nproc
"$w" age -r "$recipient" -o "$scratch/warpcrypt.age" "$plain"
age -r "$recipient" -o "$scratch/age.age" "$plain"
for sink in /dev/null "$scratch/out"; do
  fastest age -r "$recipient" -o "$sink" "$plain"
  fastest "$w" age -r "$recipient" -o "$sink" "$plain"
  fastest age -d -i "$scratch/identity" -o "$sink" "$scratch/age.age"
  fastest "$w" age -d -i "$scratch/identity" -o "$sink" "$scratch/warpcrypt.age"
done
for lanes in 1 2 4 8 12 16 24 32; do
  fastest "$w" age --threads "$lanes" -r "$recipient" -o /dev/null "$plain"
done
lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node|L2|L3)'
read_slices() {  # read_slices N: N readers, each 1/N of $plain, to /dev/null
  local slice=$((1024 / $1))
  for ((i = 0; i < $1; i++)); do
    dd if="$plain" of=/dev/null bs=1M skip=$((i * slice)) count=$slice status=none &
  done
  wait
}
for readers in 1 4 "$(nproc)"; do fastest read_slices "$readers"; done
c++ -O2 -std=c++20 -o "$scratch/age_floor_bench" "$(dirname "$0")/age_floor_bench.cpp" -lcrypto -pthread
"$scratch/age_floor_bench" "$plain"
: >"$scratch/empty"
fastest age -r "$recipient" -o /dev/null "$scratch/empty"
fastest "$w" age -r "$recipient" -o /dev/null "$scratch/empty"
TIMEFORMAT='%R s real, %U s user, %S s system: warpcrypt age to /dev/null'
time "$w" age -r "$recipient" -o /dev/null "$plain"
fastest dd if=/dev/zero of="$scratch/out" bs=1M count=1024
fastest cp "$plain" "$scratch/out"
fastest "$w" enc -aes-256-ctr -K "$(printf '%064d' 0)" -iv "$(printf '%032d' 0)" -in "$plain" -out "$scratch/out"
if "$w" devices | grep -q "^0:"; then
  for backend in gpu hybrid; do
    fastest "$w" age --backend "$backend" -r "$recipient" -o /dev/null "$plain"
  done
fi
