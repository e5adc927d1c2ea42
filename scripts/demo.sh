#!/usr/bin/env bash
# The main job: encrypts a generated 256 MiB file with aes-256-ctr, decrypts
# it, checks both against `openssl enc`, then prints what the benchmark would
# measure on this machine: the median and the spread of DEMO_RUNS timed runs,
# after a warm-up, of warpcrypt and `openssl enc` to a file and to /dev/null,
# and on a machine with a GPU the kernel's device-resident speed against the
# CPU backend's. The key is random and never printed.
set -euo pipefail
cd "$(dirname "$0")/.."
warpcrypt=${WARPCRYPT_CLI:-build/warpcrypt}  # as the CLI tests take it
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

size_mib=${DEMO_SIZE_MIB:-256}
runs=${DEMO_RUNS:-5}
cipher=aes-256-ctr
key=$(openssl rand -hex 32)
iv=$(openssl rand -hex 16)
echo "==> generating ${size_mib} MiB of random data"
head -c "$((size_mib << 20))" /dev/urandom >"$work/plain"

"$warpcrypt" enc -$cipher -K "$key" -iv "$iv" -in "$work/plain" -out "$work/warp.enc"
"$warpcrypt" enc -d -$cipher -K "$key" -iv "$iv" -in "$work/warp.enc" -out "$work/warp.dec"
openssl enc -$cipher -K "$key" -iv "$iv" -in "$work/plain" -out "$work/openssl.enc"
cmp -s "$work/warp.enc" "$work/openssl.enc" || { echo "FAIL: ciphertext differs from openssl enc"; exit 1; }
cmp -s "$work/warp.dec" "$work/plain" || { echo "FAIL: decryption does not restore the input"; exit 1; }
echo "OK: ciphertext is byte-identical to 'openssl enc -$cipher'; decryption restores the input"

# The timed commands, each reading the same file from the page cache.
names=("warpcrypt enc -> file" "openssl enc   -> file" "warpcrypt enc -> /dev/null" "openssl enc   -> /dev/null")
commands=(
  "$warpcrypt enc -$cipher -K $key -iv $iv -in $work/plain -out $work/out.warpcrypt"
  "openssl enc -$cipher -K $key -iv $iv -in $work/plain -out $work/out.openssl"
  "$warpcrypt enc -$cipher -K $key -iv $iv -in $work/plain -out /dev/null"
  "openssl enc -$cipher -K $key -iv $iv -in $work/plain -out /dev/null"
)
# Wall time of a command in seconds. Each timing starts from clean page
# cache writeback, so one command's dirty pages do not throttle the next
# one's writes.
seconds() { sync; local start=$EPOCHREALTIME; $1; awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
gbps() { awk -v mib="$size_mib" -v s="$1" 'BEGIN { printf "%.2f", mib * 1048576 / s / 1e9 }'; }
# `warpcrypt speed` takes its own warm-up and median; this reads the median.
speed_gbps() {
  "$warpcrypt" speed -evp $cipher -bytes "$((size_mib << 20))" -seconds 2 --json "$@" |
    sed -n 's/.*"median_gbps": \([0-9.]*\).*/\1/p'
}

# Rounds of every command in turn, so a load that comes and goes on a shared
# machine falls on all of them alike; round 0 is the warm-up and not counted.
# Each tool writes a file of its own, so that neither replaces (and pays for
# the writeback of) the other's.
echo "==> timing: median of $runs runs after a warm-up, ${size_mib} MiB in the page cache"
for ((round = 0; round <= runs; round++)); do
  for i in "${!commands[@]}"; do
    t=$(seconds "${commands[$i]}")
    ((round == 0)) || echo "$t" >>"$work/times.$i"
  done
done
printf '  %-36s %9s %8s   %s\n' "$cipher" "seconds" "GB/s" "GB/s of the slowest and fastest run"
for i in "${!commands[@]}"; do
  medians[i]=$(median <"$work/times.$i")
  slowest=$(sort -g "$work/times.$i" | tail -1)
  fastest=$(sort -g "$work/times.$i" | head -1)
  printf '  %-36s %9.3f %8s   %s-%s\n' "${names[$i]}" "${medians[i]}" "$(gbps "${medians[i]}")" \
    "$(gbps "$slowest")" "$(gbps "$fastest")"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }  # ratio A B: B over A
# A file target's times spread with the disk's writeback: where one tool's
# runs spread more than 1.5x, its median says little, and the line says so.
spread() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (v[NR] > 1.5 * v[1]) ? "wide" : "narrow" }'; }
if [[ $(spread "$work/times.0") == wide || $(spread "$work/times.1") == wide ]]; then
  file_note="(runs to a file spread more than 1.5x on this disk: compare /dev/null)"
else
  file_note=""
fi
echo "  warpcrypt is $(ratio "${medians[0]}" "${medians[1]}")x openssl's speed to a file${file_note:+ $file_note}," \
  "$(ratio "${medians[2]}" "${medians[3]}")x to /dev/null"

gpu=$("$warpcrypt" devices | sed -n 's/^0: \([^,]*\),.*/\1/p')
if [[ -n $gpu ]]; then
  echo "==> in memory (warpcrypt speed, its median of 5 runs after a warm-up)"
  cpu_gbps=$(speed_gbps --backend cpu)
  gpu_gbps=$(speed_gbps --backend gpu --resident device)
  printf '  %-36s %9s %8.2f\n' "CPU backend, all cores" "" "$cpu_gbps"
  printf '  %-36s %9s %8.2f\n' "GPU kernel, data on the device" "" "$gpu_gbps"
  echo "  the GPU kernel is $(ratio "$cpu_gbps" "$gpu_gbps")x the CPU backend"
fi
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "  machine: ${cpu_model:-unknown CPU}, $(nproc) cores, GPU: ${gpu:-none}"
