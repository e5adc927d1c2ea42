#!/usr/bin/env bash
# Ad-hoc: what bounds a 1 GiB age run on the GPU machine.
set -u
w=build-gpu/warpcrypt
export PATH=/tmp/warpcrypt-deps/usr/bin:$PATH
t() { local best=999; for run in 1 2 3 4 5; do local s=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || echo "FAILED: $*"; local e=$(awk "BEGIN{print $EPOCHREALTIME-$s}"); best=$(awk "BEGIN{print ($e<$best)?$e:$best}"); done; echo "$best s: $*"; }
f=/dev/shm/probe.bin; head -c 1G /dev/urandom >$f
$w age-keygen -o /dev/shm/id 2>/dev/null; rcpt=$($w age-keygen -y /dev/shm/id)
nproc; lscpu | grep -E "Model name|Thread|Core|Socket"
for n in 12 16 24 32; do t $w age --threads $n -r $rcpt -o /dev/null $f; done
t dd if=/dev/zero of=/dev/shm/x bs=1M count=1024
t cp $f /dev/shm/copy
t $w enc -aes-256-ctr -K $(printf '%064d' 0) -iv $(printf '%032d' 0) -in $f -out /dev/shm/x
t $w age -r $rcpt -o /dev/shm/x $f
rm -f $f /dev/shm/x /dev/shm/copy
