#!/usr/bin/env bash
# The main job: encrypts a generated 256 MiB file with aes-256-ctr, decrypts
# it, checks both against `openssl enc`, and prints throughput. The key is
# random and never printed.
set -euo pipefail
cd "$(dirname "$0")/.."
warpcrypt=build/warpcrypt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

size_mib=${DEMO_SIZE_MIB:-256}
key=$(openssl rand -hex 32)
iv=$(openssl rand -hex 16)
echo "==> generating ${size_mib} MiB of random data"
head -c "$((size_mib << 20))" /dev/urandom >"$work/plain"

# Wall time of a command in seconds, and a size over a time in GB/s (10^9 B/s).
# Each timing starts from clean page cache writeback, so one command's dirty
# pages do not throttle the next one's writes.
seconds() { sync; local start=$EPOCHREALTIME; "$@"; awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'; }
rate() { awk -v mib="$size_mib" -v s="$1" 'BEGIN { printf "%.2f", mib * 1048576 / s / 1e9 }'; }

t_enc=$(seconds "$warpcrypt" enc -aes-256-ctr -K "$key" -iv "$iv" -in "$work/plain" -out "$work/warp.enc")
t_dec=$(seconds "$warpcrypt" enc -d -aes-256-ctr -K "$key" -iv "$iv" -in "$work/warp.enc" -out "$work/warp.dec")
t_ossl=$(seconds openssl enc -aes-256-ctr -K "$key" -iv "$iv" -in "$work/plain" -out "$work/openssl.enc")

cmp -s "$work/warp.enc" "$work/openssl.enc" || { echo "FAIL: ciphertext differs from openssl enc"; exit 1; }
cmp -s "$work/warp.dec" "$work/plain" || { echo "FAIL: decryption does not restore the input"; exit 1; }
echo "OK: ciphertext is byte-identical to 'openssl enc -aes-256-ctr'; decryption restores the input"
printf '  warpcrypt enc    %6.3f s  %6s GB/s\n' "$t_enc" "$(rate "$t_enc")"
printf '  warpcrypt enc -d %6.3f s  %6s GB/s\n' "$t_dec" "$(rate "$t_dec")"
printf '  openssl enc      %6.3f s  %6s GB/s\n' "$t_ossl" "$(rate "$t_ossl")"
echo "  (file to file, $(nproc) cores, backend: $("$warpcrypt" devices | head -1))"
