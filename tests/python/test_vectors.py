"""Standard vectors through the Python API: NIST CAVP (AES ECB, CBC, CFB128,
CFB8, OFB), RFC 3686 (AES-CTR) and RFC 7539 (ChaCha20) from the
cryptography-vectors package, and djb's Salsa20 specification. Each vector
runs through the one-shot functions and through a cipher context fed in two
pieces, on every backend that runs it. RFC 5869's vectors check the
library's HKDF as the binding calls it (warpcrypt.dask derives its keys
through it)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

import salsa20_reference
import warpcrypt
from gpu_support import NO_DEVICE_REASON, gpu_runs
from vector_files import read_records
from warpcrypt import Cipher, _native, algorithms, modes

# (folder under ciphers/AES, file prefix, our mode name, the modes class)
CAVP_MODES = [
    ("ECB", "ECB", "ecb", modes.ECB),
    ("CBC", "CBC", "cbc", modes.CBC),
    ("CFB", "CFB128", "cfb", modes.CFB),
    ("CFB", "CFB8", "cfb8", modes.CFB8),
    ("OFB", "OFB", "ofb", modes.OFB),
]
CAVP_KINDS = ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")
BACKENDS = ("cpu", "auto", "gpu")


def _backend_or_skip(backend: str, name: str, encrypting: bool, has_device: bool) -> bool:
    """Whether this direction runs on `backend`; skips GPU runs without a device."""
    if backend != "gpu":
        return True
    if not has_device:
        pytest.skip(NO_DEVICE_REASON)
    return gpu_runs(name, encrypting)


def _both_apis(cipher: Cipher, name: str, key: bytes, iv: bytes, data: bytes, encrypting: bool,
               backend: str) -> list[bytes]:
    """The result through warpcrypt.encrypt/decrypt and through a context
    given the input in two pieces."""
    one_shot = (warpcrypt.encrypt if encrypting else warpcrypt.decrypt)(
        name, key, iv, data, padding=False, backend=backend)
    context = cipher.encryptor() if encrypting else cipher.decryptor()
    half = len(data) // 2
    pieces = context.update(data[:half]) + context.update(data[half:]) + context.finalize()
    return [one_shot, pieces]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bits", (128, 192, 256))
@pytest.mark.parametrize("kind", CAVP_KINDS)
@pytest.mark.parametrize("folder, prefix, mode_name, mode", CAVP_MODES, ids=[m[1] for m in CAVP_MODES])
def test_nist_cavp(folder, prefix, mode_name, mode, kind, bits, backend, vectors_dir, has_device):
    path = vectors_dir / "ciphers" / "AES" / folder / f"{prefix}{kind}{bits}.rsp"
    name = f"aes-{bits}-{mode_name}"
    encrypt_runs = _backend_or_skip(backend, name, True, has_device)
    decrypt_runs = _backend_or_skip(backend, name, False, has_device)
    if not (encrypt_runs or decrypt_runs):
        pytest.skip(f"the GPU runs {name} in neither direction")
    counts = {"ENCRYPT": 0, "DECRYPT": 0}
    for record in read_records(path):
        encrypting = record.section == "ENCRYPT"
        if not (encrypt_runs if encrypting else decrypt_runs):
            continue
        key, plaintext, ciphertext = record.hex("KEY"), record.hex("PLAINTEXT"), record.hex("CIPHERTEXT")
        iv = record.hex("IV") if "IV" in record.fields else b""
        cipher = Cipher(algorithms.AES(key), mode() if mode is modes.ECB else mode(iv),
                        padding=False, backend=backend)
        given, expected = (plaintext, ciphertext) if encrypting else (ciphertext, plaintext)
        for got in _both_apis(cipher, name, key, iv, given, encrypting, backend):
            assert got == expected, f"{path.name} line {record.line}"
        counts[record.section] += 1
    # Every CAVP AES file has both sections; an empty one means a parse error.
    assert (counts["ENCRYPT"] > 0) == encrypt_runs and (counts["DECRYPT"] > 0) == decrypt_runs


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bits", (128, 192, 256))
def test_rfc3686_ctr(bits, backend, vectors_dir, has_device):
    """The RFC gives encryptions only; decrypting the ciphertext is the same
    keystream XOR, so each vector also runs backwards."""
    name = f"aes-{bits}-ctr"
    _backend_or_skip(backend, name, True, has_device)
    records = read_records(vectors_dir / "ciphers" / "AES" / "CTR" / f"{name}.txt")
    assert records
    for record in records:
        key, iv = record.hex("KEY"), record.hex("IV")
        plaintext, ciphertext = record.hex("PLAINTEXT"), record.hex("CIPHERTEXT")
        cipher = Cipher(algorithms.AES(key), modes.CTR(iv), backend=backend)
        for encrypting, given, expected in ((True, plaintext, ciphertext), (False, ciphertext, plaintext)):
            for got in _both_apis(cipher, name, key, iv, given, encrypting, backend):
                assert got == expected, f"{name}.txt line {record.line}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_rfc7539_chacha20(backend, vectors_dir, has_device):
    """The 16-byte nonce is OpenSSL's: the little-endian initial block
    counter, then the RFC's 12-byte nonce."""
    _backend_or_skip(backend, "chacha20", True, has_device)
    records = read_records(vectors_dir / "ciphers" / "ChaCha20" / "rfc7539.txt")
    assert records
    for record in records:
        key = record.hex("KEY")
        nonce = struct.pack("<I", int(record.fields["INITIAL_BLOCK_COUNTER"])) + record.hex("NONCE")
        plaintext, ciphertext = record.hex("PLAINTEXT"), record.hex("CIPHERTEXT")
        cipher = Cipher(algorithms.ChaCha20(key, nonce), None, backend=backend)
        for encrypting, given, expected in ((True, plaintext, ciphertext), (False, ciphertext, plaintext)):
            for got in _both_apis(cipher, "chacha20", key, nonce, given, encrypting, backend):
                assert got == expected, f"rfc7539.txt line {record.line}"


@pytest.mark.parametrize("file_digest, digest, cases", [("SHA256", "sha256", [1, 2, 3]),
                                                        ("SHA1", "sha1", [4, 5, 6, 7])])
def test_rfc5869_hkdf(file_digest, digest, cases, vectors_dir):
    """Appendix A: test cases 1 to 3 use SHA-256, 4 to 7 SHA-1."""
    # Some cases have a blank line before PRK and OKM, where read_records
    # starts a record: such a record belongs to the case before it.
    fields: list[dict[str, str]] = []
    for record in read_records(vectors_dir / "KDF" / f"rfc-5869-HKDF-{file_digest}.txt"):
        if "COUNT" in record.fields:
            fields.append(dict(record.fields))
        else:
            fields[-1].update(record.fields)
    assert [int(case["COUNT"]) for case in fields] == cases
    for case in fields:
        ikm, salt, info, okm = (bytes.fromhex(case[name]) for name in ("IKM", "salt", "info", "OKM"))
        assert _native.hkdf(digest, ikm, salt, info, int(case["L"])) == okm, f"RFC 5869 test case {case['COUNT']}"


# djb, "Salsa20 specification", section 10 (the expansion function), as
# tests/data/salsa20_spec.json holds it for this suite and the CLI one: n is
# the nonce followed by the little-endian block counter.
_SPEC = json.loads((Path(__file__).resolve().parents[1] / "data" / "salsa20_spec.json").read_text())
SPEC_K0, SPEC_K1, SPEC_N, SPEC_32, SPEC_16 = (
    bytes.fromhex(_SPEC[name]) for name in ("k0", "k1", "n", "expansion_32", "expansion_16"))


@pytest.mark.parametrize("key, expected", [(SPEC_K0 + SPEC_K1, SPEC_32), (SPEC_K0, SPEC_16)],
                         ids=["32-byte-key", "16-byte-key"])
def test_salsa20_reference_matches_djb_spec(key, expected):
    """Guards the Python reference the Salsa20 tests compare against."""
    assert salsa20_reference.block(key, SPEC_N[:8], int.from_bytes(SPEC_N[8:], "little")) == expected


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key_size", (32, 16))
def test_salsa20_matches_reference(key_size, backend, rng, has_device):
    name = "salsa20" if key_size == 32 else "salsa20-128"
    _backend_or_skip(backend, name, True, has_device)
    for size in (0, 1, 63, 64, 65, 200, 4096 + 7):
        key, nonce = rng.randbytes(key_size), rng.randbytes(8)
        plaintext = rng.randbytes(size)
        expected = salsa20_reference.xor(key, nonce, plaintext)
        cipher = Cipher(algorithms.Salsa20(key, nonce), None, backend=backend)
        for encrypting, given, want in ((True, plaintext, expected), (False, expected, plaintext)):
            for got in _both_apis(cipher, name, key, nonce, given, encrypting, backend):
                assert got == want, f"{name}, {size} bytes"
