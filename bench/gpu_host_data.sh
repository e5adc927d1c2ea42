#!/usr/bin/env bash
# How close the gpu backend comes, on a file in the page cache, to its own
# figure from pinned buffers (issue 35's "the GPU on host data"). A job's
# wall time holds a start that does not grow with the file (the process,
# the driver, the context, the lanes' page-locked buffers) and a part that
# does; two file sizes in /dev/shm tell them apart:
#   rate  = (big - small) bytes / (t(big) - t(small))
#   start = t(small) - small / rate
# Each path (enc aes-256-ctr and chacha20, seal, open, age -r, age -d, all
# to /dev/null) runs three rounds per size, sizes in turns, medians of wall
# time with process start. Then the pinned-buffer figures of the same
# ciphers from `warpcrypt speed --memory pinned` (1 GiB calls).
#   bench/gpu_host_data.sh [WARPCRYPT_BINARY]   (default build/warpcrypt)
# HOST_DATA_SIZES ("4G 16G"), HOST_DATA_ROUNDS (3) and HOST_DATA_ARGS (more
# arguments for every job, e.g. "--streams 8") change the run;
# HOST_DATA_JSON names a file for the figures as JSON.
set -euo pipefail
w=${1:-build/warpcrypt}
read -r -a sizes <<<"${HOST_DATA_SIZES:-4G 16G}"
rounds=${HOST_DATA_ROUNDS:-3}
extra=${HOST_DATA_ARGS:-}
scratch=$(mktemp -d /dev/shm/gpu-host-data.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
results=$scratch/results.tsv  # path, bytes, median seconds
: >"$results"

head -c 32 /dev/urandom >"$scratch/key"
"$w" age-keygen -o "$scratch/identity" 2>/dev/null
recipient=$("$w" age-keygen -y "$scratch/identity")
key=$(printf '%064d' 0)
iv=$(printf '%032d' 1)
for size in "${sizes[@]}"; do
  plain=$scratch/plain-$size
  # Random-looking bytes at the speed of the CPU backend, not of /dev/urandom.
  head -c "$size" /dev/zero | "$w" enc -aes-256-ctr -K "$key" -iv "$(printf "%032d" 2)" -out "$plain"
  "$w" seal -keyfile "$scratch/key" -in "$plain" -out "$plain.sealed"
  "$w" age -r "$recipient" -o "$plain.age" "$plain"
done

# A path's command line, with @F@ for the plain file of a size.
paths=(
  "enc -aes-256-ctr|$w enc -aes-256-ctr -K $key -iv $iv --backend gpu $extra -in @F@ -out /dev/null"
  "enc -chacha20|$w enc -chacha20 -K $key -iv $iv --backend gpu $extra -in @F@ -out /dev/null"
  "seal|$w seal -keyfile $scratch/key --backend gpu $extra -in @F@ -out /dev/null"
  "open|$w open -keyfile $scratch/key --backend gpu $extra -in @F@.sealed -out /dev/null"
  "age -r|$w age --backend gpu $extra -r $recipient -o /dev/null @F@"
  "age -d|$w age --backend gpu $extra -d -i $scratch/identity -o /dev/null @F@.age"
)
for entry in "${paths[@]}"; do
  name=${entry%%|*}
  line=${entry#*|}
  declare -A times=()
  for ((round = 0; round < rounds; ++round)); do
    for size in "${sizes[@]}"; do
      start=$EPOCHREALTIME
      if ! bash -c "${line//@F@/$scratch/plain-$size}" >/dev/null 2>"$scratch/err"; then
        echo "FAILED: ${line//@F@/$scratch/plain-$size}: $(head -n 1 "$scratch/err")"
        continue 3
      fi
      times[$size]+="$(awk "BEGIN { print $EPOCHREALTIME - $start }") "
    done
  done
  for size in "${sizes[@]}"; do
    bytes=$(stat -c %s "$scratch/plain-$size")
    # shellcheck disable=SC2086
    median=$(printf '%s\n' ${times[$size]} | sort -g | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }')
    printf '%s\t%s\t%s\n' "$name" "$bytes" "$median" >>"$results"
    printf '%-16s %6s  median %.3f s  %.2f GB/s with the start\n' "$name" "$size" "$median" \
      "$(awk "BEGIN { print $bytes / $median / 1e9 }")"
  done
  unset times
done

pinned=$scratch/pinned.tsv  # cipher, GB/s
: >"$pinned"
for cipher in aes-256-ctr chacha20 aes-256-gcm chacha20-poly1305; do
  figure=$("$w" speed -evp "$cipher" -bytes 1073741824 -seconds 2 --backend gpu --memory pinned --json |
    python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["results"][-1]["median_gbps"])' 2>/dev/null || echo nan)
  printf '%s\t%s\n' "$cipher" "$figure" >>"$pinned"
  printf '%-18s pinned 1 GiB buffers: %s GB/s\n' "$cipher" "$figure"
done

python3 - "$results" "$pinned" "${HOST_DATA_JSON:-}" "$rounds" "$extra" "$(dirname "$0")" <<'PY'
import json, sys
results, pinned_file, out, rounds, extra, bench = sys.argv[1:7]
by_path = {}
for line in open(results):
    path, size, median = line.rstrip("\n").split("\t")
    by_path.setdefault(path, []).append((int(size), float(median)))
pinned = {}
for line in open(pinned_file):
    cipher, figure = line.split()
    pinned[cipher] = float(figure)
# The cipher each path runs, for its pinned figure.
cipher_of = {"enc -aes-256-ctr": "aes-256-ctr", "enc -chacha20": "chacha20", "seal": "aes-256-gcm",
             "open": "aes-256-gcm", "age -r": "chacha20-poly1305", "age -d": "chacha20-poly1305"}
rows = []
print(f"{'path':16} {'rate GB/s':>9} {'start s':>8} {'pinned GB/s':>11} {'rate/pinned':>11}")
for path, points in by_path.items():
    (small, t_small), (big, t_big) = min(points), max(points)
    rate = (big - small) / (t_big - t_small) / 1e9 if t_big > t_small else float("nan")
    start = t_small - small / (rate * 1e9)
    reference = pinned.get(cipher_of[path], float("nan"))
    rows.append({"path": path, "points": [{"bytes": s, "median_s": t} for s, t in points],
                 "rate_gbps": rate, "start_s": start, "pinned_gbps": reference})
    print(f"{path:16} {rate:9.2f} {start:8.3f} {reference:11.2f} {rate / reference:11.2f}")
if out:
    sys.path.insert(0, bench)
    from run_record import run_record
    json.dump({"run": run_record(), "rounds": int(rounds), "args": extra, "rows": rows}, open(out, "w"), indent=1)
PY
