#!/usr/bin/env bash
# diagnostic: where hybrid's time goes
w=build-gpu/warpcrypt
s=$(mktemp -d /dev/shm/diag.XXXXXX)
head -c 4G /dev/urandom > $s/plain; : > $s/empty
K=$(printf '%064d' 0); IV=$(printf '%032d' 1)
t() { local a=$EPOCHREALTIME; "$@" 2>&1 >/dev/null | sed 's/^/    /'; printf '%.3f s  %s\n' "$(awk "BEGIN{print $EPOCHREALTIME-$a}")" "$*" | cut -c1-40,110-230; }
tb() { local a=$EPOCHREALTIME; bash -c "$1" 2>&1 | sed 's/^/    /'; printf '%.3f s  %s\n' "$(awk "BEGIN{print $EPOCHREALTIME-$a}")" "$1" | cut -c1-30,100-240; }
export WARPCRYPT_HYBRID_TRACE=1
for b in cpu gpu hybrid; do t $w enc -aes-256-ctr -K $K -iv $IV --backend $b -in $s/empty -out /dev/null; done
t $w devices
for i in 1 2; do for c in aes-256-ctr chacha20; do for b in cpu hybrid; do
  t $w enc -$c -K $K -iv $IV --backend $b -in $s/plain -out /dev/null
  t $w enc -$c -K $K -iv $IV --backend $b -in $s/plain -out $s/out
  tb "cat $s/plain | $w enc -$c -K $K -iv $IV --backend $b -out /dev/null"
done; done; done
for m in pinned pageable; do WARPCRYPT_HYBRID_TRACE=1 $w speed -evp aes-256-ctr -bytes 1073741824 -seconds 2 --backend hybrid --memory $m 2>&1 | tail -6; done
rm -rf $s
