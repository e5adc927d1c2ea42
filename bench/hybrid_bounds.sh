#!/usr/bin/env bash
# The backends side by side on host data, for the rule that hybrid is never
# slower than the faster of cpu and gpu alone, and for how close the gpu
# backend comes to its pinned-buffer figure on a page-cached file. On a
# 4 GiB random file in /dev/shm (the page cache), each path runs on cpu, gpu
# and hybrid in turns, five rounds, and prints the median and the best wall
# time of each (process start included):
#   - enc (aes-256-ctr and chacha20): file -> /dev/null, file -> a file in
#     /dev/shm, and a pipe (cat | warpcrypt) -> /dev/null;
#   - seal and open (AES-256-GCM STREAM): file -> /dev/null and -> a file;
#   - age -r and age -d (ChaCha20-Poly1305 STREAM): file -> /dev/null and ->
#     a file;
#   - `warpcrypt speed` on 1 GiB buffers of pinned and pageable memory;
#   - what a GPU job pays before its first chunk: warpcrypt_start_bench in
#     three fresh processes (the driver, the context, the first call).
#   bench/hybrid_bounds.sh [WARPCRYPT_BINARY] [START_BENCH]
#   (defaults build/warpcrypt and build/bench/gpu/warpcrypt_start_bench)
# HYBRID_ROUNDS sets the rounds (default 5), HYBRID_SIZE the file (default 4G);
# HYBRID_JSON names a file for the paths' medians and bests as JSON;
# HYBRID_PATHS, a bash regular expression, runs only the paths it matches
# (e.g. '^(seal|open|age)'); HYBRID_BUFFERS=0 leaves out the speed runs.
set -euo pipefail
w=${1:-build/warpcrypt}
start_bench=${2:-build/bench/gpu/warpcrypt_start_bench}
rounds=${HYBRID_ROUNDS:-5}
scratch=$(mktemp -d /dev/shm/hybrid-bounds.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
results=$scratch/results.tsv  # path, backend, median, best: one line each
: >"$results"

# turns PATH LINE: LINE, a shell line with @B@ where the backend goes, on
# cpu, gpu and hybrid in turns; one output line per backend with the median
# and the best of the rounds, and one results line, under the name PATH.
turns() {
  local path=$1 line=$2 backend round start
  [[ $path =~ ${HYBRID_PATHS:-.} ]] || return 0
  declare -A times=()
  for ((round = 0; round < rounds; ++round)); do
    for backend in cpu gpu hybrid; do
      start=$EPOCHREALTIME
      if ! bash -c "${line//@B@/$backend}" >/dev/null 2>&1; then
        echo "FAILED: ${line//@B@/$backend}"
        return
      fi
      times[$backend]+="$(awk "BEGIN { print $EPOCHREALTIME - $start }") "
    done
  done
  for backend in cpu gpu hybrid; do
    # shellcheck disable=SC2086
    printf '%s\n' ${times[$backend]} | sort -g |
      awk -v line="${line//@B@/$backend}" -v path="$path" -v backend="$backend" -v results="$results" '
        { t[NR] = $1 }
        END { m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
              printf "median %.3f s  best %.3f s  %s\n", m, t[1], line
              printf "%s\t%s\t%.4f\t%.4f\n", path, backend, m, t[1] >> results }'
  done
}

if [[ -x $start_bench ]]; then
  for _ in 1 2 3; do "$start_bench" 32 | tr '\n' ';'; echo; done
fi
plain=$scratch/plain
head -c "${HYBRID_SIZE:-4G}" /dev/urandom >"$plain"
for cipher in aes-256-ctr chacha20; do
  enc="$w enc -$cipher -K $(printf '%064d' 0) -iv $(printf '%032d' 1) --backend @B@"
  turns "enc -$cipher, file -> /dev/null" "$enc -in $plain -out /dev/null"
  turns "enc -$cipher, file -> file" "$enc -in $plain -out $scratch/out"
  turns "enc -$cipher, pipe -> /dev/null" "cat $plain | $enc -out /dev/null"
done
head -c 32 /dev/urandom >"$scratch/key"
"$w" seal -keyfile "$scratch/key" -in "$plain" -out "$scratch/sealed"
"$w" age-keygen -o "$scratch/identity" 2>/dev/null
recipient=$("$w" age-keygen -y "$scratch/identity")
"$w" age -r "$recipient" -o "$scratch/age" "$plain"
for sink in /dev/null "$scratch/out"; do
  to=$([[ $sink == /dev/null ]] && echo /dev/null || echo file)
  turns "seal, file -> $to" "$w seal -keyfile $scratch/key --backend @B@ -in $plain -out $sink"
  turns "open, file -> $to" "$w open -keyfile $scratch/key --backend @B@ -in $scratch/sealed -out $sink"
  turns "age -r, file -> $to" "$w age --backend @B@ -r $recipient -o $sink $plain"
  turns "age -d, file -> $to" "$w age --backend @B@ -d -i $scratch/identity -o $sink $scratch/age"
done
if [[ -n ${HYBRID_JSON:-} ]]; then
  python3 - "$results" "$HYBRID_JSON" "$(stat -c %s "$plain")" "$rounds" "$(dirname "$0")" <<'PY'
import json, sys
results, out, size, rounds, bench = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, bench)
from run_record import run_record
rows = []
for line in open(results):
    path, backend, median, best = line.rstrip("\n").split("\t")
    rows.append({"path": path, "backend": backend, "median_s": float(median), "best_s": float(best)})
json.dump({"run": run_record(), "bytes": size, "rounds": rounds, "rows": rows}, open(out, "w"), indent=1)
PY
fi
[[ ${HYBRID_BUFFERS:-1} == 0 ]] && exit 0
for cipher in aes-256-ctr chacha20; do
  for memory in pinned pageable; do
    for backend in cpu gpu hybrid; do
      printf '%s %s %s: ' "$cipher" "$memory" "$backend"
      "$w" speed -evp "$cipher" -bytes 1073741824 -seconds 2 --backend "$backend" --memory "$memory" | tail -n 1
    done
  done
done
for aead in aes-256-gcm chacha20-poly1305; do
  printf '%s pinned gpu: ' "$aead"
  "$w" speed -evp "$aead" -bytes 1073741824 -seconds 2 --backend gpu --memory pinned | tail -n 1
done
