#!/usr/bin/env bash
# Checks what the shared library exports (docs/architecture.md, "The symbol
# prefix"): exactly the WC_API functions of include/warpcrypt, each at
# version WARPCRYPT_0.1, and none of them a name wolfSSL's wolfCrypt (which
# shares the wc_ prefix) exports, read from Debian's libwolfssl package.
# Usage: scripts/check-symbols.sh [path/to/libwarpcrypt.so] (default build/src).
set -euo pipefail
cd "$(dirname "$0")/.."
library=${1:-build/src/libwarpcrypt.so}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The function a WC_API declaration names: the last wc_ word before its "(".
grep -ohE 'WC_API[^(]*\(' include/warpcrypt/*.h | grep -oE 'wc_[a-z0-9_]+\($' | tr -d '(' | sort -u \
  >"$scratch/declared"
# Defined dynamic symbols as "name version", nm printing them name@@version;
# the version node itself is an absolute symbol, not an export.
nm -D --defined-only "$library" | awk '$2 != "A" {split($3, part, "@@"); print part[1], part[2]}' | sort -u \
  >"$scratch/exported"
awk '{print $1}' "$scratch/exported" | sort -u >"$scratch/exported_names"
failures=0
if ! diff -u "$scratch/declared" "$scratch/exported_names" >"$scratch/diff"; then
  echo "check-symbols: exports differ from the WC_API declarations (- declared only, + exported only):"
  grep '^[-+]wc\|^[-+][^-+]' "$scratch/diff" || true
  failures=$((failures + 1))
fi
if awk '$2 != "WARPCRYPT_0.1" {bad = 1; print "  " $1 " at version " ($2 == "" ? "none" : $2)} END {exit !bad}' \
  "$scratch/exported"; then
  echo "check-symbols: the exports above lack version WARPCRYPT_0.1 (src/warpcrypt.map)"
  failures=$((failures + 1))
fi

(cd "$scratch" && apt-get download libwolfssl35 >/dev/null 2>&1) || {
  echo "check-symbols: cannot download libwolfssl35 to compare with wolfCrypt's exports"
  exit 1
}
dpkg -x "$scratch"/libwolfssl35_*.deb "$scratch/wolfssl"
wolfssl=$(find "$scratch/wolfssl" -name 'libwolfssl.so.*' -type f | head -n 1)
nm -D --defined-only "$wolfssl" | awk '{print $3}' | sort -u >"$scratch/wolfssl_names"
comm -12 "$scratch/exported_names" "$scratch/wolfssl_names" >"$scratch/shared_names"
if [[ -s $scratch/shared_names ]]; then
  echo "check-symbols: names wolfSSL exports too:"
  sed 's/^/  /' "$scratch/shared_names"
  failures=$((failures + 1))
fi
if ((failures)); then exit 1; fi
echo "check-symbols: $(wc -l <"$scratch/exported_names") exports, all declared WC_API, all at WARPCRYPT_0.1;" \
  "none among wolfSSL's $(wc -l <"$scratch/wolfssl_names") ($(basename "$wolfssl"))"
