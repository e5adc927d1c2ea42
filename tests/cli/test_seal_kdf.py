"""`warpcrypt seal`'s passphrase KDFs: Argon2id by default (its passes and
memory in the header), PBKDF2 on request, the limits `open` puts on what a
header may ask for, and files sealed with PBKDF2 before Argon2id existed.

The file key is checked against two implementations that are not the
library's code path: libsodium's crypto_pwhash called directly (through
ctypes), and pyca/cryptography's Argon2id, which runs OpenSSL's (through the
second reader of tests/cli/test_seal.py). Costs are overridden to a pass or
three over 8 to 64 KiB, so each seal takes milliseconds; the defaults
(libsodium's MODERATE and SENSITIVE presets) are checked by the unit tests.
"""

from __future__ import annotations

import ctypes
import json
import struct
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from test_seal import AEADS, CHUNK, HEADER, PASSPHRASE, reference_open, seal
from wc_support import Sodium, assert_same_bytes

CHEAP = ("--kdf-ops", "1", "--kdf-memory", "64K")
FIXTURES = Path(__file__).parent / "data" / "sealed-pbkdf2-v1"


def header_fields(sealed: bytes) -> dict:
    """Key source, digest, the 32-bit cost, lanes and memory in KiB."""
    return {"source": sealed[12], "digest": sealed[13], "cost": struct.unpack(">I", sealed[16:20])[0],
            "lanes": sealed[43], "memory_kib": struct.unpack(">I", sealed[44:48])[0]}


def crypto_pwhash(passphrase: bytes, salt: bytes, ops: int, memory: int, length: int) -> bytes:
    """libsodium's crypto_pwhash with Argon2id v1.3, called directly."""
    lib = Sodium().lib
    lib.crypto_pwhash_alg_argon2id13.restype = ctypes.c_int
    out = ctypes.create_string_buffer(length)
    rc = lib.crypto_pwhash(out, ctypes.c_ulonglong(length), passphrase, ctypes.c_ulonglong(len(passphrase)), salt,
                           ctypes.c_ulonglong(ops), ctypes.c_size_t(memory), lib.crypto_pwhash_alg_argon2id13())
    assert rc == 0, "crypto_pwhash failed"
    return out.raw


def first_chunk_opens_with(sealed: bytes, aead: str, key: bytes) -> bool:
    header = sealed[:HEADER]
    sealed_chunk = (1 << header[10]) + 16
    chunks = -(-(len(sealed) - HEADER) // sealed_chunk)
    nonce = header[36:43] + struct.pack(">I", 0) + bytes([1 if chunks == 1 else 0])
    cipher = ChaCha20Poly1305(key) if aead == "chacha20-poly1305" else AESGCM(key)
    try:
        cipher.decrypt(nonce, sealed[HEADER:HEADER + sealed_chunk], header)
        return True
    except InvalidTag:
        return False


# ----------------------------------------------------------------------------
# Argon2id, the default
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("aead", AEADS)
def test_argon2id_is_the_default_and_an_independent_reader_opens_it(run_cli, random_bytes, tmp_path, aead):
    plaintext = random_bytes(2 * CHUNK + 99, aead)
    sealed = seal(run_cli, plaintext, f"-{aead}", "-pass", f"pass:{PASSPHRASE}", *CHEAP, "--chunk-size", "4K",
                  tmp=tmp_path)
    assert header_fields(sealed) == {"source": 3, "digest": 0, "cost": 1, "lanes": 1, "memory_kib": 64}
    assert_same_bytes(reference_open(sealed, passphrase=PASSPHRASE), plaintext, "pyca's Argon2id reader")
    opened = run_cli("open", "-pass", f"pass:{PASSPHRASE}", "-in", tmp_path / "sealed").check().stdout
    assert_same_bytes(opened, plaintext, "warpcrypt open")


@pytest.mark.parametrize("ops, memory, memory_kib", [(1, "8K", 8), (3, "72K", 72), (2, "1M", 1024)])
def test_the_file_key_is_libsodiums_crypto_pwhash(run_cli, tmp_path, ops, memory, memory_kib):
    sealed = seal(run_cli, b"known answer", "-pass", f"pass:{PASSPHRASE}", "--kdf-ops", str(ops), "--kdf-memory",
                  memory, tmp=tmp_path)
    assert header_fields(sealed)["memory_kib"] == memory_kib
    key = crypto_pwhash(PASSPHRASE.encode(), sealed[20:36], ops, memory_kib * 1024, 32)
    assert first_chunk_opens_with(sealed, "aes-256-gcm", key)
    other = crypto_pwhash(PASSPHRASE.encode(), sealed[20:36], ops + 1, memory_kib * 1024, 32)
    assert not first_chunk_opens_with(sealed, "aes-256-gcm", other), "the passes are part of the key"


def test_only_the_costs_given_change(run_cli, tmp_path):
    sealed = seal(run_cli, b"x", "-pass", "pass:x", "--kdf", "argon2id", "--kdf-memory", "16K", tmp=tmp_path)
    assert header_fields(sealed)["cost"] == 3, "libsodium's MODERATE passes by default"
    assert header_fields(sealed)["memory_kib"] == 16


def test_pbkdf2_by_name_or_by_iterations_writes_the_first_format(run_cli, tmp_path):
    by_name = seal(run_cli, b"x", "-pass", "pass:x", "--kdf", "pbkdf2", "-iter", "1000", tmp=tmp_path)
    by_iterations = seal(run_cli, b"x", "-pass", "pass:x", "-iter", "1000", "-md", "sha512", tmp=tmp_path)
    assert header_fields(by_name) == {"source": 1, "digest": 1, "cost": 1000, "lanes": 0, "memory_kib": 0}
    assert header_fields(by_iterations) == {"source": 1, "digest": 2, "cost": 1000, "lanes": 0, "memory_kib": 0}


@pytest.mark.parametrize("args, message", [
    (("--kdf", "scrypt"), r"--kdf: argon2id or pbkdf2, not 'scrypt'"),
    (("--kdf", "argon2id", "-iter", "1000"), r"-iter and -md are PBKDF2's"),
    (("-md", "sha512", *CHEAP), r"-iter and -md are PBKDF2's"),
    (("--kdf", "pbkdf2", "--kdf-memory", "64K"), r"--kdf-ops and --kdf-memory are Argon2id's"),
    (("-iter", "1000", "--kdf-ops", "2"), r"--kdf-ops and --kdf-memory are Argon2id's"),
    (("--kdf-ops", "0", "--kdf-memory", "64K"), r"sealing failed: Argon2id needs at least one pass"),
    (("--kdf-ops", "1", "--kdf-memory", "4K"), r"sealing failed: Argon2id's memory must be a whole number of KiB"),
    (("--kdf-ops", "1", "--kdf-memory", "8193"), r"sealing failed: Argon2id's memory must be a whole number of KiB"),
    (("--kdf-ops", "1", "--kdf-memory", "0"), r"sealing failed: Argon2id's memory must be a whole number of KiB"),
    (("--kdf-ops", "-1"), r"--kdf-ops"),
    (("--kdf-ops", "4294967296"), r"--kdf-ops"),
], ids=["unknown", "argon2id-with-iter", "argon2id-with-md", "pbkdf2-with-memory", "iter-with-ops", "no-passes",
        "under-8k", "not-whole-kib", "no-memory", "negative-ops", "ops-over-32-bits"])
def test_kdf_options_that_cannot_apply_are_refused(expect_failure, workdir, args, message):
    (workdir / "p").write_bytes(b"plaintext")
    expect_failure("seal", "-pass", f"pass:{PASSPHRASE}", *args, "-in", "p", "-out", "s", cwd=workdir,
                   message=message, secrets=[PASSPHRASE])


def test_kdf_options_are_for_passphrases(expect_failure, workdir):
    (workdir / "p").write_bytes(b"plaintext")
    (workdir / "k").write_bytes(bytes(32))
    expect_failure("seal", "-kfile", "k", "--kdf", "argon2id", "-in", "p", "-out", "s", cwd=workdir,
                   message=r"--kdf, --kdf-ops and --kdf-memory are for passphrases, not -keyfile")


# ----------------------------------------------------------------------------
# What open accepts from a header it cannot yet authenticate
# ----------------------------------------------------------------------------


def test_costs_above_opens_limits_need_the_override(run_cli, expect_failure, workdir):
    (workdir / "p").write_bytes(b"needs more passes")
    result = run_cli("seal", "-pass", "pass:pw", "--kdf-ops", "5", "--kdf-memory", "8K", "-in", "p", "-out", "s",
                     cwd=workdir).check()
    assert result.stderr_lines == [
        "warpcrypt: warning: Argon2id costs above open's default limits: open this file with --max-kdf-ops 5"]
    expect_failure("open", "-pass", "pass:pw", "-in", "s", "-out", "o", cwd=workdir,
                   message=r"^warpcrypt: opening failed: the header asks for more Argon2id passes than this "
                           r"reader's limit \(raise the limit only for a file you expect\)$")
    expect_failure("open", "-pass", "pass:pw", "--max-kdf-ops", "4", "-in", "s", "-out", "o", cwd=workdir,
                   message=r"more Argon2id passes")
    opened = run_cli("open", "-pass", "pass:pw", "--max-kdf-ops", "5", "-in", "s", cwd=workdir).check().stdout
    assert opened == b"needs more passes"


def test_a_memory_limit_below_the_files_refuses_it(run_cli, expect_failure, workdir):
    (workdir / "p").write_bytes(b"64 KiB")
    run_cli("seal", "-pass", "pass:pw", *CHEAP, "-in", "p", "-out", "s", cwd=workdir).check()
    expect_failure("open", "-pass", "pass:pw", "--max-kdf-memory", "63K", "-in", "s", "-out", "o", cwd=workdir,
                   message=r"more Argon2id memory than this reader's limit")
    assert run_cli("open", "-pass", "pass:pw", "--max-kdf-memory", "64K", "-in", "s", cwd=workdir).check().stdout \
        == b"64 KiB"


@pytest.mark.parametrize("args, message", [
    (("--max-kdf-ops", "0"), r"--max-kdf-ops must be at least 1"),
    (("--max-kdf-memory", "4K"), r"--max-kdf-memory must be at least 8K"),
    (("--max-kdf-memory", "0"), r"--max-kdf-memory must be at least 8K"),
])
def test_limits_no_file_could_meet_are_refused(expect_failure, workdir, args, message):
    (workdir / "s").write_bytes(b"not read")
    expect_failure("open", "-pass", "pass:pw", *args, "-in", "s", "-out", "o", cwd=workdir, message=message)


def forged(workdir: Path, run_cli, **fields: int) -> Path:
    """A genuine cheap Argon2id file with header fields overwritten: `ops`
    (bytes 16-19), `lanes` (43), `memory_kib` (44-47), `digest` (13)."""
    (workdir / "p").write_bytes(b"genuine")
    run_cli("seal", "-pass", "pass:pw", *CHEAP, "-in", "p", "-out", "genuine", cwd=workdir).check()
    data = bytearray((workdir / "genuine").read_bytes())
    for name, value in fields.items():
        if name == "ops":
            data[16:20] = struct.pack(">I", value)
        elif name == "memory_kib":
            data[44:48] = struct.pack(">I", value)
        else:
            data[{"lanes": 43, "digest": 13}[name]] = value
    path = workdir / "forged"
    path.write_bytes(bytes(data))
    (workdir / "genuine").unlink()
    (workdir / "p").unlink()
    return path


@pytest.mark.parametrize("fields, message", [
    ({"memory_kib": 0xFFFFFFFF}, r"more Argon2id memory than this reader's limit"),
    ({"memory_kib": 2 << 20}, r"more Argon2id memory than this reader's limit"),
    ({"ops": 0xFFFFFFFF}, r"more Argon2id passes than this reader's limit"),
    ({"ops": 0}, r"bad header: Argon2id with no passes"),
    ({"memory_kib": 7}, r"bad header: Argon2id memory below libsodium's minimum of 8 KiB"),
    ({"lanes": 4}, r"bad header: Argon2id lanes other than 1"),
    ({"digest": 2}, r"bad header: Argon2id takes no digest"),
], ids=["4-tib", "2-gib", "2^32-1-passes", "no-passes", "7-kib", "4-lanes", "a-digest"])
def test_a_hostile_argon2id_header_is_refused_before_the_kdf_runs(run_cli, expect_failure, workdir, fields,
                                                                   message):
    forged(workdir, run_cli, **fields)
    expect_failure("open", "-pass", "pass:pw", "-in", "forged", "-out", "o", cwd=workdir, message=message)


def test_a_cost_changed_within_the_limits_fails_authentication(run_cli, expect_failure, workdir):
    forged(workdir, run_cli, ops=2)
    expect_failure("open", "-pass", "pass:pw", "-in", "forged", "-out", "o", cwd=workdir,
                   message=r"authentication failed at chunk 0")


# ----------------------------------------------------------------------------
# Files sealed with PBKDF2 before Argon2id (fixtures made at commit 32f5bca)
# ----------------------------------------------------------------------------


def fixtures() -> list[dict]:
    return json.loads((FIXTURES / "manifest.json").read_text())["files"]


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda f: f["sealed"])
def test_files_sealed_before_argon2id_open_bit_for_bit(run_cli, tmp_path, fixture):
    sealed = (FIXTURES / fixture["sealed"]).read_bytes()
    plaintext = (FIXTURES / fixture["plaintext"]).read_bytes()
    assert sealed[12] == fixture["key_source"], "the fixture is what its manifest says"
    if "passphrase" in fixture:
        secret = ("-pass", f"pass:{fixture['passphrase']}")
        assert_same_bytes(reference_open(sealed, passphrase=fixture["passphrase"]), plaintext, "second reader")
    else:
        secret = ("-kfile", FIXTURES / fixture["key_file"])
    opened = run_cli("open", *secret, "-in", FIXTURES / fixture["sealed"], "-out", tmp_path / "opened").check()
    assert opened.stderr == b""
    assert_same_bytes((tmp_path / "opened").read_bytes(), plaintext, "open of a file sealed before Argon2id")


def test_pbkdf2_files_written_now_have_the_fixtures_layout(run_cli, tmp_path):
    """Sealing with PBKDF2 still writes the first format: the header differs
    from a fixture's only in its random salt and nonce prefix, and the body
    has the same length."""
    fixture = next(f for f in fixtures() if "passphrase" in f)
    old = (FIXTURES / fixture["sealed"]).read_bytes()
    plaintext = (FIXTURES / fixture["plaintext"]).read_bytes()
    new = seal(run_cli, plaintext, *fixture["seal_args"], "-pass", f"pass:{fixture['passphrase']}", tmp=tmp_path)
    assert len(new) == len(old)
    assert new[:20] == old[:20] and new[43:HEADER] == old[43:HEADER]
    assert new[20:43] != old[20:43]
