#!/usr/bin/env bash
# Run here, before a GPU run: gathers into .deps/ (git-ignored, carried to the
# GPU machine) what that machine lacks and cannot download: libsodium, CLI11
# (the CLI's argument parser, header-only), the reference `age` and
# ssh-keygen (the SSH key tests make their keys with it) as Debian packages,
# the NIST/RFC vector files from cryptography-vectors, wheels of Dask, Zarr,
# pyca/cryptography, pyrage and cryptotensors, and an archive of the
# committed tree.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
mkdir -p .deps
(cd .deps && apt-get download libsodium23 libsodium-dev libcli11-dev age openssh-client >/dev/null)
vectors=$(.venv/bin/python -c 'import cryptography_vectors, os; print(os.path.dirname(cryptography_vectors.__file__))')
rm -rf .deps/vectors && mkdir -p .deps/vectors/cryptography_vectors/ciphers/AES
cp -r "$vectors"/ciphers/AES/{ECB,CBC,CFB,OFB,CTR,GCM} .deps/vectors/cryptography_vectors/ciphers/AES/
cp -r "$vectors"/ciphers/ChaCha20 .deps/vectors/cryptography_vectors/ciphers/
mkdir -p .deps/vectors/cryptography_vectors/KDF .deps/vectors/cryptography_vectors/asymmetric
cp "$vectors"/KDF/rfc-5869-HKDF-SHA{1,256}.txt .deps/vectors/cryptography_vectors/KDF/
cp -r "$vectors"/asymmetric/{Ed25519,OpenSSH} .deps/vectors/cryptography_vectors/asymmetric/
# ML-KEM-768's known answers only: the three KAT files are 35 MiB, and what
# is carried must stay under 64 MiB.
mkdir -p .deps/vectors/cryptography_vectors/asymmetric/MLKEM
cp "$vectors"/asymmetric/MLKEM/kat_MLKEM_768.rsp .deps/vectors/cryptography_vectors/asymmetric/MLKEM/
# The HPKE vector of age's post-quantum suite (tests/cli/test_age_pq_reference.py).
mkdir -p .deps/vectors/cryptography_vectors/HPKE
cp "$vectors"/HPKE/hpke-pq-test-vectors.json .deps/vectors/cryptography_vectors/HPKE/
# Dask, distributed and zarr for the GPU machine's Python 3.12, which lacks
# them: its Dask, Zarr and CuPy-chunk tests run on them; pyca/cryptography
# and pyrage, the independent implementations the differential, sealed-file
# and age tests check against, and cryptotensors, the reference the
# encrypted-safetensors tests and benchmark compare with (gpu-check.sh
# installs only what that machine does not already have).
rm -rf .deps/wheels
.venv/bin/python -m pip download -q --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any -d .deps/wheels \
  dask distributed zarr numcodecs cryptography pyrage cryptotensors
# NumPy comes along as their dependency, and the GPU machine has it already
# (with its PyTorch and CuPy): without its 15 MiB wheel, .deps stays under
# the 64 MiB a run carries.
rm -f .deps/wheels/numpy-*.whl
# The committed tree, for a run that must test exactly what was committed:
# the GPU machine's copy of .git can lag behind this checkout. There:
#   mkdir -p /tmp/wc && tar -xzf .deps/head.tar.gz -C /tmp/wc && cp -r .deps /tmp/wc/ && cd /tmp/wc && scripts/gpu-check.sh ...
# Compressed: with the working tree, what a run carries must stay under 64 MiB.
rm -f .deps/head.tar
git archive --format=tar.gz HEAD >.deps/head.tar.gz
# The commit the GPU machine's benchmarks record (gpu-check.sh, bench/run_record.py).
git describe --always --dirty --abbrev=7 >.deps/commit
du -sh .deps
