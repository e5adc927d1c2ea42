"""`warpcrypt seal` / `warpcrypt open`: round trips, the file format as
docs/format.md specifies it (checked by a second reader written here against
OpenSSL's libcrypto), the attacks the format must detect without writing any
plaintext, and random access.

Files are sealed with 4 KiB chunks and 1000 PBKDF2 iterations so that small
inputs span several chunks and each run is fast."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import hmac
import struct
from pathlib import Path

import pytest

from wc_support import assert_same_bytes

PASSPHRASE = "correct horse battery staple"
CHUNK = 4096
SEALED_CHUNK = CHUNK + 16
HEADER = 48
FAST = ("-iter", "1000", "--chunk-size", "4K")
AEADS = ("aes-128-gcm", "aes-192-gcm", "aes-256-gcm", "chacha20-poly1305")
AEAD_IDS = {1: "aes-128-gcm", 2: "aes-192-gcm", 3: "aes-256-gcm", 4: "chacha20-poly1305"}
KEY_LENS = {"aes-128-gcm": 16, "aes-192-gcm": 24, "aes-256-gcm": 32, "chacha20-poly1305": 32}
AUTH_FAILED = r"authentication failed at chunk \d+: wrong (passphrase|key), or the file was modified"


# ----------------------------------------------------------------------------
# A second reader of the format, from docs/format.md alone
# ----------------------------------------------------------------------------


class LibCrypto:
    """The AEAD decryption a reader needs, from OpenSSL's libcrypto."""

    SET_IVLEN, SET_TAG = 0x9, 0x11

    def __init__(self) -> None:
        lib = ctypes.CDLL(ctypes.util.find_library("crypto") or "libcrypto.so.3")
        ptr, num = ctypes.c_void_p, ctypes.c_int
        signatures = {
            "EVP_CIPHER_fetch": (ptr, [ptr, ctypes.c_char_p, ctypes.c_char_p]),
            "EVP_CIPHER_free": (None, [ptr]),
            "EVP_CIPHER_CTX_new": (ptr, []),
            "EVP_CIPHER_CTX_free": (None, [ptr]),
            "EVP_DecryptInit_ex": (num, [ptr, ptr, ptr, ctypes.c_char_p, ctypes.c_char_p]),
            "EVP_CIPHER_CTX_ctrl": (num, [ptr, num, num, ptr]),
            "EVP_DecryptUpdate": (num, [ptr, ptr, ctypes.POINTER(num), ctypes.c_char_p, num]),
            "EVP_DecryptFinal_ex": (num, [ptr, ptr, ctypes.POINTER(num)]),
        }
        for name, (restype, argtypes) in signatures.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib

    def open(self, aead: str, key: bytes, nonce: bytes, aad: bytes, sealed: bytes) -> bytes | None:
        """The plaintext, or None when the tag does not match."""
        ciphertext = sealed[:-16]
        tag = ctypes.create_string_buffer(sealed[-16:], 16)
        out = ctypes.create_string_buffer(len(ciphertext) + 16)
        written = ctypes.c_int(0)
        lib = self.lib
        cipher = lib.EVP_CIPHER_fetch(None, aead.encode(), None)
        ctx = lib.EVP_CIPHER_CTX_new()
        try:
            assert lib.EVP_DecryptInit_ex(ctx, cipher, None, None, None) == 1
            assert lib.EVP_CIPHER_CTX_ctrl(ctx, self.SET_IVLEN, len(nonce), None) == 1
            assert lib.EVP_DecryptInit_ex(ctx, None, None, key, nonce) == 1
            assert lib.EVP_DecryptUpdate(ctx, None, ctypes.byref(written), aad, len(aad)) == 1
            assert lib.EVP_DecryptUpdate(ctx, ctypes.addressof(out), ctypes.byref(written), ciphertext,
                                         len(ciphertext)) == 1
            length = written.value
            assert lib.EVP_CIPHER_CTX_ctrl(ctx, self.SET_TAG, 16, ctypes.addressof(tag)) == 1
            if lib.EVP_DecryptFinal_ex(ctx, ctypes.addressof(out) + length, ctypes.byref(written)) != 1:
                return None
            return out.raw[:length]
        finally:
            lib.EVP_CIPHER_CTX_free(ctx)
            lib.EVP_CIPHER_free(cipher)


@functools.lru_cache(maxsize=None)
def libcrypto() -> LibCrypto:
    return LibCrypto()


def hkdf(digest: str, ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869."""
    prk = hmac.new(salt, ikm, digest).digest()
    okm, block, counter = b"", b"", 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([counter]), digest).digest()
        okm += block
        counter += 1
    return okm[:length]


def reference_open(sealed: bytes, *, passphrase: str | None = None, key_file: bytes | None = None) -> bytes:
    """Reads a sealed file the way docs/format.md says; raises on any flaw."""
    header = sealed[:HEADER]
    magic, version, aead_id, chunk_log2, tag_len, source, digest_id, reserved1, iterations = struct.unpack(
        ">8sBBBBBBHI", header[:20])
    salt, prefix, lanes, memory_kib = header[20:36], header[36:43], header[43], header[44:48]
    assert magic == b"WARPSEAL" and version == 1 and tag_len == 16 and reserved1 == 0
    aead = AEAD_IDS[aead_id]
    if source == 3:
        # Argon2id through OpenSSL (pyca/cryptography), not libsodium.
        from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
        assert digest_id == 0 and lanes == 1
        key = Argon2id(salt=salt, length=KEY_LENS[aead], iterations=iterations, lanes=lanes,
                       memory_cost=int.from_bytes(memory_kib, "big")).derive(passphrase.encode())
    elif source == 1:
        assert header[43:48] == bytes(5)
        digest = {1: "sha256", 2: "sha512"}[digest_id]
        key = hashlib.pbkdf2_hmac(digest, passphrase.encode(), salt, iterations, KEY_LENS[aead])
    else:
        assert header[43:48] == bytes(5)
        digest = {1: "sha256", 2: "sha512"}[digest_id]
        assert iterations == 0 and len(key_file) == KEY_LENS[aead]
        key = hkdf(digest, key_file, salt, b"warpcrypt seal v1 file key", KEY_LENS[aead])
    chunk, body = 1 << chunk_log2, sealed[HEADER:]
    count = -(-len(body) // (chunk + 16))
    plaintext = b""
    for i in range(count):
        piece = body[i * (chunk + 16):(i + 1) * (chunk + 16)]
        nonce = prefix + struct.pack(">I", i) + bytes([1 if i == count - 1 else 0])
        opened = libcrypto().open(aead, key, nonce, header, piece)
        assert opened is not None, f"chunk {i} does not authenticate"
        plaintext += opened
    return plaintext


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def seal(run_cli, plaintext: bytes, *args: str, tmp: Path) -> bytes:
    (tmp / "plain").write_bytes(plaintext)
    run_cli("seal", *args, "-in", tmp / "plain", "-out", tmp / "sealed").check()
    return (tmp / "sealed").read_bytes()


def open_file(run_cli, sealed: bytes, *args: str, tmp: Path):
    (tmp / "to-open").write_bytes(sealed)
    return run_cli("open", *args, "-in", tmp / "to-open")


@pytest.fixture(scope="module")
def sample(run_cli, tmp_path_factory, random_bytes):
    """Five and a half chunks sealed with aes-256-gcm and a passphrase."""
    tmp = tmp_path_factory.mktemp("seal-sample")
    plaintext = random_bytes(5 * CHUNK + 2000, "seal-sample")
    sealed = seal(run_cli, plaintext, "-pass", f"pass:{PASSPHRASE}", *FAST, tmp=tmp)
    return plaintext, sealed


@pytest.fixture
def rejects(expect_failure, workdir):
    """`rejects(sealed_bytes, message)`: open fails with `message`, writes no
    output file and leaves the directory as it was."""

    def check(sealed: bytes, message: str = AUTH_FAILED, *args: str) -> None:
        (workdir / "in.sealed").write_bytes(sealed)
        open_args = args or ("-pass", f"pass:{PASSPHRASE}")
        expect_failure("open", *open_args, "-in", "in.sealed", "-out", "out.bin", cwd=workdir, message=message,
                       secrets=[PASSPHRASE])

    return check


# ----------------------------------------------------------------------------
# Round trips and the format
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("aead", AEADS)
@pytest.mark.parametrize("size", (0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5))
def test_round_trip_and_second_reader(aead, size, run_cli, random_bytes, tmp_path):
    plaintext = random_bytes(size, f"seal-{aead}-{size}")
    sealed = seal(run_cli, plaintext, f"-{aead}", "-pass", f"pass:{PASSPHRASE}", *FAST, tmp=tmp_path)
    chunks = max(1, -(-size // CHUNK))
    assert len(sealed) == HEADER + size + 16 * chunks
    assert_same_bytes(reference_open(sealed, passphrase=PASSPHRASE), plaintext, "the format's second reader")
    opened = open_file(run_cli, sealed, "-pass", f"pass:{PASSPHRASE}", tmp=tmp_path).check().stdout
    assert_same_bytes(opened, plaintext, "warpcrypt open")


@pytest.mark.parametrize("aead", ("aes-128-gcm", "chacha20-poly1305"))
def test_key_file_sha512_and_pipes(aead, run_cli, random_bytes, tmp_path):
    key = random_bytes(KEY_LENS[aead], f"kfile-{aead}")
    (tmp_path / "key").write_bytes(key)
    plaintext = random_bytes(3 * CHUNK + 17, f"kfile-plain-{aead}")
    sealed = run_cli("seal", "-c", aead, "-kfile", tmp_path / "key", "-md", "sha512", "--chunk-size", "4K",
                     stdin=plaintext).check().stdout
    assert sealed[12:14] == bytes([2, 2]) and sealed[16:20] == bytes(4), "key file, SHA-512, no iterations"
    assert_same_bytes(reference_open(sealed, key_file=key), plaintext, "second reader")
    opened = run_cli("open", "-kfile", tmp_path / "key", stdin=sealed).check().stdout
    assert_same_bytes(opened, plaintext, "open through pipes")


def test_header_fields_and_fresh_salt(run_cli, random_bytes, tmp_path):
    plaintext = random_bytes(100, "header-fields")
    first = seal(run_cli, plaintext, "-chacha20-poly1305", "-pass", "pass:x", "-iter", "1234", "--chunk-size", "64K",
                 tmp=tmp_path)
    second = seal(run_cli, plaintext, "-chacha20-poly1305", "-pass", "pass:x", "-iter", "1234", "--chunk-size", "64K",
                  tmp=tmp_path)
    assert first[:8] == b"WARPSEAL"
    assert list(first[8:14]) == [1, 4, 16, 16, 1, 1]
    assert first[14:16] == bytes(2) and first[43:48] == bytes(5)
    assert struct.unpack(">I", first[16:20])[0] == 1234
    assert first[20:43] != second[20:43], "salt and nonce prefix are fresh for every file"
    assert first[HEADER:] != second[HEADER:]


def test_default_is_aes_256_gcm_and_pbkdf2_defaults_to_600000_iterations(run_cli, tmp_path):
    # Argon2id, the default KDF, and its costs: tests/cli/test_seal_kdf.py.
    sealed = seal(run_cli, b"hello", "-pass", "pass:x", "--kdf", "pbkdf2", tmp=tmp_path)
    assert sealed[9] == 3 and sealed[10] == 20, "aes-256-gcm, 1 MiB chunks"
    assert sealed[12] == 1 and struct.unpack(">I", sealed[16:20])[0] == 600000


def test_verbose_reports_chunks(run_cli, random_bytes, tmp_path):
    (tmp_path / "plain").write_bytes(random_bytes(3 * CHUNK, "verbose"))
    result = run_cli("seal", "-pass", "pass:x", *FAST, "-v", "-in", tmp_path / "plain", "-out",
                     tmp_path / "sealed").check()
    assert "3 chunks" in result.stderr_text and "aes-256-gcm" in result.stderr_text


# ----------------------------------------------------------------------------
# Attacks: each detected, no plaintext written
# ----------------------------------------------------------------------------

HEADER_FIELDS = {  # field: (byte offset to flip a bit in, expected message)
    "magic": (0, "bad magic number"),
    "version": (8, "unsupported sealed-file version"),
    "aead": (9, AUTH_FAILED + "|unknown AEAD|key file"),
    "chunk size": (10, AUTH_FAILED + "|chunk size"),
    "tag length": (11, "tag length"),
    "key source": (12, "key source|sealed with a key file"),
    "digest": (13, AUTH_FAILED + "|unknown digest"),
    "reserved 14": (15, "reserved"),
    "iterations": (19, AUTH_FAILED),
    "iterations high byte": (16, "iteration count"),
    "salt": (27, AUTH_FAILED),
    "nonce prefix": (40, AUTH_FAILED),
    "reserved 43": (47, "reserved"),
}


@pytest.mark.parametrize("field", HEADER_FIELDS)
def test_bit_flip_in_each_header_field(field, sample, rejects):
    _, sealed = sample
    offset, message = HEADER_FIELDS[field]
    damaged = bytearray(sealed)
    damaged[offset] ^= 0x01 if field != "iterations high byte" else 0x80
    rejects(bytes(damaged), message)


@pytest.mark.parametrize("chunk", range(6))
@pytest.mark.parametrize("where", ("first byte", "middle", "tag"))
def test_bit_flip_in_each_chunk(chunk, where, sample, rejects):
    _, sealed = sample
    start = HEADER + chunk * SEALED_CHUNK
    end = min(start + SEALED_CHUNK, len(sealed))
    offset = {"first byte": start, "middle": (start + end) // 2, "tag": end - 3}[where]
    damaged = bytearray(sealed)
    damaged[offset] ^= 0x10
    rejects(bytes(damaged), rf"authentication failed at chunk {chunk}: wrong passphrase, or the file was modified")


@pytest.mark.parametrize("boundary", range(1, 6))
def test_truncation_at_every_chunk_boundary(boundary, sample, rejects):
    _, sealed = sample
    rejects(sealed[:HEADER + boundary * SEALED_CHUNK])


@pytest.mark.parametrize("cut", (HEADER, HEADER + 1, HEADER + 15, HEADER + 16, HEADER + 2000,
                                 HEADER + 2 * SEALED_CHUNK + 10, HEADER + 5 * SEALED_CHUNK + 1,
                                 -1, -16, -17))
def test_truncation_inside_a_chunk(cut, sample, rejects):
    _, sealed = sample
    rejects(sealed[:cut], AUTH_FAILED + "|truncated")


@pytest.mark.parametrize("length", (0, 10, HEADER - 1))
def test_shorter_than_the_header(length, sample, rejects):
    _, sealed = sample
    rejects(sealed[:length], "not a sealed file")


def chunks_of(sealed: bytes) -> list[bytes]:
    body = sealed[HEADER:]
    return [body[i:i + SEALED_CHUNK] for i in range(0, len(body), SEALED_CHUNK)]


@pytest.mark.parametrize("order", ((1, 0, 2, 3, 4, 5), (0, 2, 1, 3, 4, 5), (0, 1, 2, 3, 5, 4),
                                   (0, 1, 1, 2, 3, 4, 5), (0, 2, 3, 4, 5), (0, 1, 2, 3, 4)))
def test_reordered_duplicated_and_dropped_chunks(order, sample, rejects):
    _, sealed = sample
    chunks = chunks_of(sealed)
    rejects(sealed[:HEADER] + b"".join(chunks[i] for i in order))


def test_appended_bytes(sample, rejects):
    _, sealed = sample
    rejects(sealed + b"\x00")
    rejects(sealed + chunks_of(sealed)[1])


def test_chunk_from_another_file(sample, run_cli, rejects, random_bytes, tmp_path):
    """Same passphrase, same size: only the salt and nonce prefix differ."""
    plaintext, sealed = sample
    other = seal(run_cli, plaintext, "-pass", f"pass:{PASSPHRASE}", *FAST, tmp=tmp_path)
    mine, theirs = chunks_of(sealed), chunks_of(other)
    rejects(sealed[:HEADER] + b"".join(mine[:2] + theirs[2:3] + mine[3:]))
    rejects(other[:HEADER] + b"".join(mine))


def test_wrong_passphrase(sample, rejects):
    _, sealed = sample
    rejects(sealed, r"authentication failed at chunk 0: wrong passphrase, or the file was modified",
            "-pass", "pass:not the passphrase")


def test_wrong_key_source(sample, rejects, workdir):
    _, sealed = sample
    (workdir.parent / "key").write_bytes(bytes(32))
    rejects(sealed, "sealed with a passphrase", "-kfile", str(workdir.parent / "key"))


def test_wrong_key_file(run_cli, rejects, random_bytes, tmp_path, workdir):
    (tmp_path / "key").write_bytes(random_bytes(32, "right key"))
    (tmp_path / "other").write_bytes(random_bytes(32, "wrong key"))
    sealed = seal(run_cli, random_bytes(9000, "kfile"), "-kfile", tmp_path / "key", "--chunk-size", "4K",
                  tmp=tmp_path)
    rejects(sealed, AUTH_FAILED, "-kfile", str(tmp_path / "other"))


def test_failure_keeps_an_existing_output(sample, expect_failure, workdir):
    """A failed open leaves whatever the output path held before."""
    _, sealed = sample
    damaged = bytearray(sealed)
    damaged[-1] ^= 1
    (workdir / "in.sealed").write_bytes(bytes(damaged))
    (workdir / "out.bin").write_bytes(b"precious")
    expect_failure("open", "-pass", f"pass:{PASSPHRASE}", "-in", "in.sealed", "-out", "out.bin", cwd=workdir,
                   message=r"authentication failed at chunk 5: wrong passphrase, or the file was modified")
    assert (workdir / "out.bin").read_bytes() == b"precious"


# ----------------------------------------------------------------------------
# Random access
# ----------------------------------------------------------------------------

RANGES = ((0, 1), (0, CHUNK), (CHUNK - 1, 2), (CHUNK, CHUNK), (100, 3 * CHUNK), (5 * CHUNK, 2000),
          (5 * CHUNK + 1999, 10), (2 * CHUNK + 7, 0), (5 * CHUNK + 2000, 5), (10 ** 9, 5), (3, None), (None, 7))


@pytest.mark.parametrize("offset,length", RANGES)
def test_random_access_equals_slice_of_full_open(offset, length, sample, run_cli, tmp_path):
    plaintext, sealed = sample
    args = ["-pass", f"pass:{PASSPHRASE}"]
    if offset is not None:
        args += ["--offset", str(offset)]
    if length is not None:
        args += ["--length", str(length)]
    got = open_file(run_cli, sealed, *args, tmp=tmp_path).check().stdout
    start = offset or 0
    expected = plaintext[start:] if length is None else plaintext[start:start + length]
    assert_same_bytes(got, expected, f"--offset {offset} --length {length}")


def test_random_access_reads_only_the_chunks_it_needs(sample, run_cli, rejects, tmp_path):
    plaintext, sealed = sample
    damaged = bytearray(sealed)
    damaged[HEADER + 3 * SEALED_CHUNK + 5] ^= 1  # chunk 3
    args = ["-pass", f"pass:{PASSPHRASE}"]
    clean = open_file(run_cli, bytes(damaged), *args, "--offset", str(CHUNK), "--length", str(2 * CHUNK),
                      tmp=tmp_path).check().stdout
    assert_same_bytes(clean, plaintext[CHUNK:3 * CHUNK], "chunks 1 and 2 only")
    rejects(bytes(damaged), r"authentication failed at chunk 3: wrong passphrase, or the file was modified", *args,
            "--offset", str(3 * CHUNK), "--length", "1")


def test_random_access_past_the_end_still_checks_the_key(sample, rejects):
    _, sealed = sample
    rejects(sealed, AUTH_FAILED, "-pass", "pass:wrong", "--offset", str(10 ** 9))


def test_random_access_needs_a_regular_file(sample, expect_failure, workdir):
    _, sealed = sample
    expect_failure("open", "-pass", f"pass:{PASSPHRASE}", "--offset", "5", cwd=workdir, stdin=sealed,
                   message="regular input file")


# ----------------------------------------------------------------------------
# Backends and bad invocations
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("window", ("4K", "12K", "1M"))
def test_worker_windows_change_nothing_but_speed(window, run_cli, random_bytes, tmp_path):
    plaintext = random_bytes(9 * 4096 + 5, f"window-{window}")
    args = ("-pass", "pass:x", "-iter", "1000", "--threads", "3", "--window", window)
    sealed = seal(run_cli, plaintext, "--chunk-size", "4K", *args, tmp=tmp_path)
    assert_same_bytes(reference_open(sealed, passphrase="x"), plaintext, f"sealed with --window {window}")
    opened = open_file(run_cli, sealed, *args[:2], *args[4:], tmp=tmp_path).check().stdout
    assert_same_bytes(opened, plaintext, f"opened with --window {window}")


@pytest.mark.parametrize("aead", ("aes-256-gcm", "chacha20-poly1305"))
def test_gpu_backend_interoperates(aead, run_cli, backend_args, random_bytes, tmp_path):
    plaintext = random_bytes(3 * (1 << 20) + 11, f"gpu-seal-{aead}")
    on_gpu = backend_args("gpu")
    sealed = seal(run_cli, plaintext, f"-{aead}", "-pass", "pass:x", "-iter", "1000", *on_gpu, tmp=tmp_path)
    assert_same_bytes(reference_open(sealed, passphrase="x"), plaintext, "sealed on the GPU")
    cpu_sealed = seal(run_cli, plaintext, f"-{aead}", "-pass", "pass:x", "-iter", "1000", "--backend", "cpu",
                      tmp=tmp_path)
    opened = open_file(run_cli, cpu_sealed, "-pass", "pass:x", *on_gpu, tmp=tmp_path).check().stdout
    assert_same_bytes(opened, plaintext, "opened on the GPU")


@pytest.mark.parametrize("aead", ("aes-256-gcm", "chacha20-poly1305"))
def test_two_devices_seal_what_one_opens(aead, run_cli, cuda_device_count, random_bytes, tmp_path):
    """Sealed by devices 0 and 1 at once (windows of four chunks, so each
    gets many), the file opens on device 1 alone and in the reference; and
    one the CPU sealed opens on both devices at once."""
    if cuda_device_count < 2:
        pytest.skip(f"needs two CUDA devices; `warpcrypt devices` lists {cuda_device_count}")
    plaintext = random_bytes(40 * (1 << 16) + 3, f"two-devices-{aead}")
    both = ("--backend", "gpu", "--devices", "0,1", "--window", "256K")
    args = (f"-{aead}", "-pass", "pass:x", "-iter", "1000", "--chunk-size", "64K")
    sealed = seal(run_cli, plaintext, *args, *both, tmp=tmp_path)
    assert_same_bytes(reference_open(sealed, passphrase="x"), plaintext, "sealed on devices 0 and 1")
    opened = open_file(run_cli, sealed, "-pass", "pass:x", "--backend", "gpu", "--devices", "1",
                       tmp=tmp_path).check().stdout
    assert_same_bytes(opened, plaintext, "opened on device 1")
    cpu_sealed = seal(run_cli, plaintext, *args, "--backend", "cpu", tmp=tmp_path)
    opened = open_file(run_cli, cpu_sealed, "-pass", "pass:x", *both, tmp=tmp_path).check().stdout
    assert_same_bytes(opened, plaintext, "opened on devices 0 and 1")


def test_gpu_backend_without_a_device(cuda_device_present, expect_failure, workdir):
    if cuda_device_present:
        pytest.skip("a CUDA device is present")
    (workdir / "plain").write_bytes(b"data")
    expect_failure("seal", "-pass", "pass:x", "--backend", "gpu", "-in", "plain", "-out", "sealed", cwd=workdir,
                   message="run on the CPU with backend cpu")


@pytest.mark.parametrize("args,message", (
    (("-pass", "pass:x", "-kfile", "k"), "one of -pass and -keyfile, not both"),
    (("-pass", "pass:x", "-c", "aes-256-ctr"), "unknown AEAD"),
    (("-pass", "pass:x", "--chunk-size", "5000"), "power of two"),
    (("-pass", "pass:x", "--chunk-size", "2K"), "power of two"),
    (("-pass", "pass:x", "-iter", "0"), "at least 1"),
    (("-pass", "pass:x", "-md", "md5"), "sha256 or sha512"),
    (("-pass", "pass:x", "--window", "5000"), "chunk size must be a multiple of 4 KiB"),
    (("-pass", "pass:x", "--window", "2G"), "chunk size must be a multiple of 4 KiB, at most 1 GiB"),
    (("-passpass:secret",), "starting with '-pass'"),
))
def test_bad_seal_invocations(args, message, expect_failure, workdir):
    (workdir / "plain").write_bytes(b"data")
    expect_failure("seal", *args, "-in", "plain", "-out", "sealed", cwd=workdir, message=message,
                   secrets=["secret"])


def test_key_file_of_the_wrong_length(expect_failure, workdir):
    (workdir / "plain").write_bytes(b"data")
    (workdir.parent / "short-key").write_bytes(bytes(16))
    expect_failure("seal", "-kfile", str(workdir.parent / "short-key"), "-in", "plain", "-out", "sealed",
                   cwd=workdir, message="exactly 32 bytes, not 16")


def test_open_takes_no_seal_options(sample, expect_failure, workdir):
    _, sealed = sample
    (workdir / "in.sealed").write_bytes(sealed)
    expect_failure("open", "-pass", "pass:x", "-iter", "5", "-in", "in.sealed", cwd=workdir,
                   message="unknown option '-iter'")


def test_open_takes_the_same_size_suffixes_as_enc(run_cli, tmp_path):
    """The README's `open --offset 1G --length 4K` once failed: open parsed
    plain numbers only."""
    plaintext = bytes(range(256)) * 64  # 16 KiB
    (tmp_path / "p").write_bytes(plaintext)
    (tmp_path / "key").write_bytes(bytes(range(32)))
    run_cli("seal", "-kfile", "key", "--chunk-size", "4K", "-in", "p", "-out", "s", cwd=tmp_path).check()
    opened = run_cli("open", "-kfile", "key", "-in", "s", "--offset", "1K", "--length", "4k", cwd=tmp_path).check()
    assert opened.stdout == plaintext[1024:1024 + 4096]
