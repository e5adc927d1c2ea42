#!/usr/bin/env bash
# Run here, before a GPU run: gathers into .deps/ (git-ignored, carried to the
# GPU machine) what that machine lacks and cannot download: libsodium as
# Debian packages, and the NIST/RFC vector files from cryptography-vectors.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
mkdir -p .deps
(cd .deps && apt-get download libsodium23 libsodium-dev >/dev/null)
vectors=$(.venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
rm -rf .deps/vectors && mkdir -p .deps/vectors/cryptography_vectors/ciphers/AES
cp -r "$vectors"/ciphers/AES/{ECB,CBC,CFB,OFB,CTR,GCM} .deps/vectors/cryptography_vectors/ciphers/AES/
cp -r "$vectors"/ciphers/ChaCha20 .deps/vectors/cryptography_vectors/ciphers/
du -sh .deps
