#!/usr/bin/env bash
# The backends side by side on host data, for the rule that hybrid is never
# slower than the faster of cpu and gpu alone. Prints one line per command,
# the fastest of five runs (process start included):
#   - warpcrypt enc on a 4 GiB random file in /dev/shm (the page cache), to
#     /dev/null, to a file in /dev/shm, and from a pipe (cat | warpcrypt),
#     for each cipher and each of cpu, gpu and hybrid;
#   - `warpcrypt speed` on 1 GiB buffers of pinned and pageable memory;
#   - what a GPU job pays before its first chunk: warpcrypt_start_bench in
#     three fresh processes (the driver, the context, the first call).
#   bench/hybrid_bounds.sh [WARPCRYPT_BINARY] [START_BENCH]
#   (defaults build/warpcrypt and build/bench/gpu/warpcrypt_start_bench)
set -euo pipefail
w=${1:-build/warpcrypt}
start_bench=${2:-build/bench/gpu/warpcrypt_start_bench}
scratch=$(mktemp -d /dev/shm/hybrid-bounds.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fastest() {  # fastest COMMAND: the best wall time of five runs of a shell line
  local best=""
  for _ in 1 2 3 4 5; do
    local start=$EPOCHREALTIME
    bash -c "$1" >/dev/null 2>&1 || { echo "FAILED: $1"; return; }
    best=$(awk -v t="$(awk "BEGIN { print $EPOCHREALTIME - $start }")" -v b="$best" \
      'BEGIN { print (b == "" || t < b) ? t : b }')
  done
  printf '%.3f s  %s\n' "$best" "$1"
}
for _ in 1 2 3; do "$start_bench" 32 | tr '\n' ';'; echo; done
plain=$scratch/plain
head -c 4G /dev/urandom >"$plain"
for cipher in aes-256-ctr chacha20; do
  enc="$w enc -$cipher -K $(printf '%064d' 0) -iv $(printf '%032d' 1)"
  for backend in cpu gpu hybrid; do
    fastest "$enc --backend $backend -in $plain -out /dev/null"
    fastest "$enc --backend $backend -in $plain -out $scratch/out"
    fastest "cat $plain | $enc --backend $backend -out /dev/null"
  done
  for memory in pinned pageable; do
    for backend in cpu gpu hybrid; do
      printf '%s %s %s: ' "$cipher" "$memory" "$backend"
      "$w" speed -evp "$cipher" -bytes 1073741824 -seconds 2 --backend "$backend" --memory "$memory" | tail -n 1
    done
  done
done
