#!/usr/bin/env bash
# What many recipients cost `warpcrypt age` beside its payload (issue 37:
# header work for hundreds of recipients stays well under the time to read
# the payload). For N recipients of each kind (X25519, post-quantum hybrid,
# and a mix of X25519 with ssh-ed25519 where ssh-keygen is on PATH), the
# fastest of three runs, process start included, of:
#   - encrypting an empty file to all N (the header alone), and decrypting
#     it with the last identity (every stanza before it tried first);
#   - encrypting a SIZE random file in /dev/shm to one recipient and to all
#     N, to /dev/null.
#   bench/age_header_bench.sh [WARPCRYPT_BINARY] [N] [SIZE]
#   (defaults build/warpcrypt, 300, 1G)
set -euo pipefail
w=${1:-build/warpcrypt}
n=${2:-300}
size=${3:-1G}
scratch=$(mktemp -d /dev/shm/age-header.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fastest() {  # fastest COMMAND...: the best wall time of three runs, in ms
  local best=""
  for _ in 1 2 3; do
    local start=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; echo nan; return; }
    best=$(awk -v t="$(awk "BEGIN { print ($EPOCHREALTIME - $start) * 1000 }")" -v b="$best" \
      'BEGIN { print (b == "" || t < b) ? t : b }')
  done
  printf '%.1f' "$best"
}
: >"$scratch/empty"
head -c "$size" /dev/urandom >"$scratch/plain"
# keys KIND: N identities into $scratch/KIND-i (one file each), their
# recipients into $scratch/KIND.txt, one a line.
keys() {
  local kind=$1 i
  : >"$scratch/$kind.txt"
  for ((i = 0; i < n; ++i)); do
    case $kind in
      x25519) "$w" age-keygen -o "$scratch/$kind-$i" 2>/dev/null ;;
      pq) "$w" age-keygen -pq -o "$scratch/$kind-$i" 2>/dev/null ;;
      mixed)
        if ((i % 2)); then
          ssh-keygen -q -t ed25519 -N "" -f "$scratch/$kind-$i" </dev/null
          cat "$scratch/$kind-$i.pub" >>"$scratch/$kind.txt"
          continue
        fi
        "$w" age-keygen -o "$scratch/$kind-$i" 2>/dev/null ;;
    esac
    "$w" age-keygen -y "$scratch/$kind-$i" >>"$scratch/$kind.txt"
  done
}
kinds=(x25519 pq)
command -v ssh-keygen >/dev/null && kinds+=(mixed)
echo "recipients=$n file=$size cores=$(nproc)"
for kind in "${kinds[@]}"; do
  keys "$kind"
  last="$scratch/$kind-$((n - 1))"
  "$w" age -R "$scratch/$kind.txt" -o "$scratch/empty.age" "$scratch/empty"
  header=$(stat -c %s "$scratch/empty.age")
  one=$(head -n 1 "$scratch/$kind.txt")
  printf '%-7s header %8d B  encrypt empty %7s ms  decrypt empty (last identity) %7s ms  %s to 1 recipient %7s ms  to %d %7s ms\n' \
    "$kind" "$header" \
    "$(fastest "$w" age -R "$scratch/$kind.txt" -o /dev/null "$scratch/empty")" \
    "$(fastest "$w" age -d -i "$last" -o /dev/null "$scratch/empty.age")" \
    "$size" "$(fastest "$w" age -r "$one" -o /dev/null "$scratch/plain")" \
    "$n" "$(fastest "$w" age -R "$scratch/$kind.txt" -o /dev/null "$scratch/plain")"
done
