#!/usr/bin/env bash
# Installs build/ into a scratch prefix and builds the README's C example
# (its one ```c block, cut out as written) three ways: find_package with the
# shared library, with the static library, and through pkg-config. Each must
# print the ciphertext `openssl enc` produces for the example's message, key
# and IV.
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

example=$scratch/example.c
sed -n '/^```c$/,/^```$/{/^```/d;p}' README.md > "$example"
if [[ ! -s $example ]]; then
  echo "install check: no \`\`\`c block in README.md" >&2
  exit 1
fi

cmake --install build --prefix "$scratch/prefix" >/dev/null
cmake -S tests/install -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DEXAMPLE_SOURCE="$example" >/dev/null
cmake --build "$scratch/consumer" >/dev/null

export PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig"
cc "$example" -o "$scratch/consumer_pkgconfig" $(pkg-config --cflags --libs warpcrypt) \
  -Wl,-rpath,"$scratch/prefix/lib"

expected=$(printf '%s' "attack at dawn" |
  openssl enc -aes-128-ctr -K 2b7e151628aed2a6abf7158809cf4f3c -iv 00000000000000000000000000000000 |
  od -An -tx1 -v | tr -d ' \n')
failures=0
for program in consumer/consumer_shared consumer/consumer_static consumer_pkgconfig; do
  got=$(LD_LIBRARY_PATH="$scratch/prefix/lib" "$scratch/$program")
  if [[ $got == "$expected" ]]; then
    echo "install check: ${program##*/} ok"
  else
    echo "install check: ${program##*/} FAILED: got $got, expected $expected"
    failures=$((failures + 1))
  fi
done
exit $failures
