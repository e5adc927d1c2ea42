"""Whole-file calls: encrypt_file / decrypt_file against the one-shot calls
and pyca/cryptography, seal_file / open_file against a reader of
docs/format.md written here on pyca/cryptography's AEADs, and every failure
leaving no output behind."""

from __future__ import annotations

import os
import struct

import pytest

import warpcrypt

CHUNK = 4096
HEADER = 48


@pytest.fixture
def files(tmp_path):
    """Writes `data` to a fresh input file; returns (input, output) paths."""

    def make(data: bytes, name: str = "plain"):
        source = tmp_path / name
        source.write_bytes(data)
        return source, tmp_path / (name + ".out")

    return make


def leftovers(directory) -> list[str]:
    """Temporary files a job left behind."""
    return [p.name for p in directory.iterdir() if ".warpcrypt-" in p.name]


# ---- encrypt_file / decrypt_file --------------------------------------------

@pytest.mark.parametrize("cipher", ["aes-256-ctr", "aes-128-cbc", "chacha20", "aes-192-cfb"])
@pytest.mark.parametrize("size", [0, 1, 4095, (1 << 20) + 3])
def test_encrypt_file_equals_one_shot(cipher, size, files, rng):
    info = warpcrypt.cipher_info(cipher)
    key, iv = rng.randbytes(info.key_size), rng.randbytes(info.iv_size)
    plaintext = rng.randbytes(size)
    source, target = files(plaintext)
    stats = warpcrypt.encrypt_file(cipher, key, iv, source, target, threads=2)
    ciphertext = target.read_bytes()
    assert ciphertext == warpcrypt.encrypt(cipher, key, iv, plaintext)
    assert (stats.bytes_in, stats.bytes_out) == (size, len(ciphertext))
    back = target.with_suffix(".back")
    warpcrypt.decrypt_file(cipher, key, iv, target, back)
    assert back.read_bytes() == plaintext


def test_encrypt_file_matches_cryptography(files, rng):
    ciphers = pytest.importorskip("cryptography.hazmat.primitives.ciphers")
    key, iv = rng.randbytes(32), rng.randbytes(16)
    plaintext = rng.randbytes(3 * (1 << 20) + 5)
    source, target = files(plaintext)
    warpcrypt.encrypt_file("aes-256-ctr", key, iv, source, target)
    encryptor = ciphers.Cipher(ciphers.algorithms.AES(key), ciphers.modes.CTR(iv)).encryptor()
    assert target.read_bytes() == encryptor.update(plaintext) + encryptor.finalize()


def test_wrong_key_on_padded_decrypt_leaves_nothing(files, rng, tmp_path):
    key, iv = rng.randbytes(16), rng.randbytes(16)
    source, target = files(rng.randbytes(1000))
    warpcrypt.encrypt_file("aes-128-cbc", key, iv, source, target)
    with pytest.raises(warpcrypt.BadDecrypt):
        warpcrypt.decrypt_file("aes-128-cbc", bytes(16), iv, target, tmp_path / "back")
    assert not (tmp_path / "back").exists() and not leftovers(tmp_path)


def test_missing_input_is_an_os_error(tmp_path):
    with pytest.raises(warpcrypt.IOFailure, match="No such file") as raised:
        warpcrypt.encrypt_file("aes-128-ctr", bytes(16), bytes(16), tmp_path / "absent", tmp_path / "out")
    assert isinstance(raised.value, OSError)
    assert not (tmp_path / "out").exists()


def test_bad_key_length(files):
    source, target = files(b"data")
    with pytest.raises(warpcrypt.InvalidKey):
        warpcrypt.encrypt_file("aes-256-ctr", bytes(16), bytes(16), source, target)


# ---- seal_file / open_file --------------------------------------------------

def reference_open(sealed: bytes, key: bytes) -> bytes:
    """docs/format.md on pyca/cryptography, for files sealed with a key."""
    aead_module = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    hkdf_module = pytest.importorskip("cryptography.hazmat.primitives.kdf.hkdf")
    hashes = pytest.importorskip("cryptography.hazmat.primitives.hashes")
    header = sealed[:HEADER]
    assert header[:9] == b"WARPSEAL\x01" and header[12] == 2
    aead_class, key_len = {1: ("AESGCM", 16), 2: ("AESGCM", 24), 3: ("AESGCM", 32),
                           4: ("ChaCha20Poly1305", 32)}[header[9]]
    file_key = hkdf_module.HKDF(hashes.SHA256() if header[13] == 1 else hashes.SHA512(), key_len,
                                salt=header[20:36], info=b"warpcrypt seal v1 file key").derive(key)
    aead = getattr(aead_module, aead_class)(file_key)
    chunk = 1 << header[10]
    body = sealed[HEADER:]
    pieces = [body[i:i + chunk + 16] for i in range(0, len(body), chunk + 16)]
    plaintext = b""
    for index, piece in enumerate(pieces):
        nonce = header[36:43] + struct.pack(">I", index) + bytes([index == len(pieces) - 1])
        plaintext += aead.decrypt(nonce, piece, header)
    return plaintext


@pytest.mark.parametrize("aead", ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"])
@pytest.mark.parametrize("size", [0, 1, CHUNK, 5 * CHUNK + 17])
def test_seal_file_reads_back_with_an_independent_reader(aead, size, files, rng):
    key_len = 16 if aead == "aes-128-gcm" else 32
    key = rng.randbytes(key_len)
    plaintext = rng.randbytes(size)
    source, target = files(plaintext)
    stats = warpcrypt.seal_file(source, target, key=key, aead=aead, chunk_size=CHUNK, threads=3)
    sealed = target.read_bytes()
    assert stats.bytes_in == size and stats.bytes_out == len(sealed)
    assert reference_open(sealed, key) == plaintext
    back = target.with_suffix(".back")
    warpcrypt.open_file(target, back, key=key)
    assert back.read_bytes() == plaintext


def test_passphrase_round_trip_and_info(files, rng):
    plaintext = rng.randbytes(3 * CHUNK + 5)
    source, target = files(plaintext)
    warpcrypt.seal_file(source, target, passphrase="correct horse", iterations=1000, digest="sha512",
                        chunk_size=CHUNK, aead="chacha20-poly1305")
    info = warpcrypt.sealed_info(target)
    assert (info.aead, info.key_source, info.digest, info.iterations) == ("chacha20-poly1305", "passphrase",
                                                                          "sha512", 1000)
    assert (info.chunk_size, info.chunks, info.plaintext_len) == (CHUNK, 4, len(plaintext))
    assert len(info.salt) == 16 and len(info.nonce_prefix) == 7
    back = target.with_suffix(".back")
    warpcrypt.open_file(target, back, passphrase=b"correct horse")
    assert back.read_bytes() == plaintext


def test_every_file_gets_a_fresh_salt_and_nonce_prefix(files):
    source, target = files(b"same plaintext")
    seen = set()
    for _ in range(20):
        warpcrypt.seal_file(source, target, key=bytes(32))
        info = warpcrypt.sealed_info(target)
        seen.add((info.salt, info.nonce_prefix))
    assert len(seen) == 20


@pytest.mark.parametrize("offset,length", [(0, 1), (CHUNK - 1, 2), (CHUNK, CHUNK), (100, 3 * CHUNK),
                                           (5 * CHUNK + 16, 10), (10 ** 9, 5), (7, None), (2 * CHUNK, 0)])
def test_random_access_equals_slice(offset, length, files, rng):
    plaintext = rng.randbytes(5 * CHUNK + 17)
    source, target = files(plaintext)
    warpcrypt.seal_file(source, target, key=bytes(32), chunk_size=CHUNK)
    back = target.with_suffix(".back")
    warpcrypt.open_file(target, back, key=bytes(32), offset=offset, length=length)
    end = None if length is None else offset + length
    assert back.read_bytes() == plaintext[offset:end]


@pytest.mark.parametrize("where", ["first chunk", "middle chunk", "last tag"])
def test_tampering_raises_invalid_tag_and_writes_nothing(where, files, rng, tmp_path):
    source, target = files(rng.randbytes(4 * CHUNK + 100))
    warpcrypt.seal_file(source, target, key=bytes(32), chunk_size=CHUNK)
    sealed = bytearray(target.read_bytes())
    offset, chunk = {"first chunk": (HEADER + 3, 0), "middle chunk": (HEADER + 2 * (CHUNK + 16) + 9, 2),
                     "last tag": (len(sealed) - 1, 4)}[where]
    sealed[offset] ^= 0x40
    target.write_bytes(bytes(sealed))
    with pytest.raises(warpcrypt.InvalidTag, match=rf"authentication failed at chunk {chunk}\b"):
        warpcrypt.open_file(target, tmp_path / "back", key=bytes(32), threads=2)
    assert not (tmp_path / "back").exists() and not leftovers(tmp_path)


def test_truncation_is_detected(files, rng, tmp_path):
    source, target = files(rng.randbytes(3 * CHUNK))
    warpcrypt.seal_file(source, target, key=bytes(32), chunk_size=CHUNK)
    target.write_bytes(target.read_bytes()[:HEADER + 2 * (CHUNK + 16)])
    with pytest.raises(warpcrypt.InvalidTag):
        warpcrypt.open_file(target, tmp_path / "back", key=bytes(32))
    assert not (tmp_path / "back").exists()


def test_not_a_sealed_file(files, tmp_path):
    source, _ = files(b"just some bytes, long enough to hold a header of 48 bytes")
    with pytest.raises(warpcrypt.FormatError, match="bad magic number"):
        warpcrypt.open_file(source, tmp_path / "back", key=bytes(32))
    with pytest.raises(warpcrypt.FormatError, match="bad magic number"):
        warpcrypt.sealed_info(source)
    assert not (tmp_path / "back").exists()


def test_the_other_kind_of_secret_is_refused(files, tmp_path):
    source, target = files(b"data")
    warpcrypt.seal_file(source, target, passphrase="pw", iterations=1000)
    with pytest.raises(warpcrypt.InvalidArgument, match="sealed with a passphrase"):
        warpcrypt.open_file(target, tmp_path / "back", key=bytes(32))
    with pytest.raises(warpcrypt.InvalidArgument, match="exactly one of key= and passphrase="):
        warpcrypt.open_file(target, tmp_path / "back")


def test_bad_seal_parameters(files):
    source, target = files(b"data")
    with pytest.raises(warpcrypt.InvalidArgument, match="power of two"):
        warpcrypt.seal_file(source, target, key=bytes(32), chunk_size=5000)
    with pytest.raises(warpcrypt.UnknownDigest):
        warpcrypt.seal_file(source, target, passphrase="pw", kdf="pbkdf2", digest="md5")
    with pytest.raises(warpcrypt.InvalidArgument, match="PBKDF2's"):
        warpcrypt.seal_file(source, target, passphrase="pw", digest="sha512")
    with pytest.raises(warpcrypt.InvalidKey, match="the AEAD takes a 32-byte key"):
        warpcrypt.seal_file(source, target, key=bytes(16))
    with pytest.raises(warpcrypt.UnknownCipher):
        warpcrypt.seal_file(source, target, key=bytes(32), aead="aes-256-ctr")
    assert not target.exists()


def test_progress_reports_and_cancels(files, rng, tmp_path):
    source, target = files(rng.randbytes(8 << 20))
    calls = []
    warpcrypt.seal_file(source, target, key=bytes(32), progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (8 << 20, 8 << 20)
    with pytest.raises(warpcrypt.Cancelled):
        warpcrypt.open_file(target, tmp_path / "back", key=bytes(32), progress=lambda done, total: True)
    assert not (tmp_path / "back").exists() and not leftovers(tmp_path)


def test_an_exception_in_progress_cancels_and_propagates(files, tmp_path):
    source, target = files(bytes(1 << 20))

    def explode(done, total):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        warpcrypt.seal_file(source, target, key=bytes(32), progress=explode)
    assert not target.exists() and not leftovers(tmp_path)


def test_paths_may_be_strings(files, tmp_path):
    source, target = files(b"hello")
    warpcrypt.seal_file(os.fspath(source), os.fspath(target), key=bytes(32))
    warpcrypt.open_file(str(target), str(tmp_path / "back"), key=bytes(32))
    assert (tmp_path / "back").read_bytes() == b"hello"


# ---- regressions from the adversarial review ---------------------------------

@pytest.mark.parametrize("kept_chunks", [1, 2])
def test_open_file_refuses_a_file_cut_at_a_chunk_boundary_with_bytes_appended(kept_chunks, files, rng, tmp_path):
    """The review's critical forgery: it once opened as the first chunks."""
    source, target = files(rng.randbytes(3 * CHUNK + 7))
    warpcrypt.seal_file(source, target, key=bytes(32), chunk_size=CHUNK)
    target.write_bytes(target.read_bytes()[:HEADER + kept_chunks * (CHUNK + 16)] + bytes(16))
    for offset, length in [(0, None), (CHUNK // 2, None)]:
        with pytest.raises(warpcrypt.FormatError, match="empty final chunk"):
            warpcrypt.open_file(target, tmp_path / "back", key=bytes(32), offset=offset, length=length)
    assert not (tmp_path / "back").exists() and not leftovers(tmp_path)


@pytest.mark.parametrize("call", ["open_file", "seal_file", "encrypt_file", "sealed_info"])
def test_a_path_with_an_embedded_nul_is_a_value_error(call, files, tmp_path):
    """A C string ends at the NUL and would name another file, as
    open_file(src + "\\0x") once opened src and encrypt_file(..., "a.bin\\0/../../x")
    wrote a.bin."""
    source, target = files(b"data")
    warpcrypt.seal_file(source, target, key=bytes(32))
    calls = {
        "open_file": lambda: warpcrypt.open_file(str(target) + "\0x", tmp_path / "back", key=bytes(32)),
        "seal_file": lambda: warpcrypt.seal_file(source, str(tmp_path / "a.bin") + "\0/../../x", key=bytes(32)),
        "encrypt_file": lambda: warpcrypt.encrypt_file("aes-256-ctr", bytes(32), bytes(16), source,
                                                       str(tmp_path / "a.bin") + "\0/../../x"),
        "sealed_info": lambda: warpcrypt.sealed_info(str(target) + "\0x"),
    }
    with pytest.raises(ValueError, match="embedded null byte"):
        calls[call]()
    assert not (tmp_path / "back").exists() and not (tmp_path / "a.bin").exists()


@pytest.mark.parametrize("parameter", [{"chunk_size": 0}, {"iterations": 0}])
def test_zero_is_an_invalid_seal_parameter_not_the_default(parameter, files):
    source, target = files(b"data")
    with pytest.raises(warpcrypt.InvalidArgument):
        warpcrypt.seal_file(source, target, passphrase="pw", **parameter)
    assert not target.exists()


@pytest.mark.parametrize("passphrase", ["", b""])
def test_seal_file_refuses_an_empty_passphrase(passphrase, files):
    source, target = files(b"data")
    with pytest.raises(warpcrypt.InvalidArgument, match="empty passphrase"):
        warpcrypt.seal_file(source, target, passphrase=passphrase)
    assert not target.exists()


def test_open_file_bounds_the_iterations_a_header_may_ask_for(files, tmp_path):
    source, target = files(b"checkpoint")
    warpcrypt.seal_file(source, target, passphrase="pw", iterations=3000)
    with pytest.raises(warpcrypt.FormatError, match="iterations"):
        warpcrypt.open_file(target, tmp_path / "back", passphrase="pw", max_iterations=2999)
    warpcrypt.open_file(target, tmp_path / "back", passphrase="pw", max_iterations=3000)
    assert (tmp_path / "back").read_bytes() == b"checkpoint"
    # A forged count far above the default limit fails before PBKDF2 runs.
    forged = bytearray(target.read_bytes())
    forged[16:20] = struct.pack(">I", 100_000_000)
    target.write_bytes(bytes(forged))
    with pytest.raises(warpcrypt.FormatError, match="iterations"):
        warpcrypt.open_file(target, tmp_path / "again", passphrase="pw")
    with pytest.raises(warpcrypt.InvalidArgument):
        warpcrypt.open_file(target, tmp_path / "again", passphrase="pw", max_iterations=0)


def test_a_dangling_symlink_output_is_refused_with_the_librarys_reason(files, tmp_path):
    """The library and the CLI share one output rule (wc_output_open); the
    Python calls say why, not only errno's words."""
    source, _ = files(b"data")
    (tmp_path / "link").symlink_to(tmp_path / "missing" / "file")
    with pytest.raises(OSError, match="symlink to a file that does not exist"):
        warpcrypt.seal_file(source, tmp_path / "link", key=bytes(32))
    assert not (tmp_path / "missing").exists()


def test_an_output_that_is_the_file_being_read_is_refused(tmp_path):
    """Opening a sealed stream into the very file it reads, by another path
    (a hard link), would replace the sealed file with its own plaintext:
    refused, and the file left as it was. The path-to-path calls refuse the
    same through the library's file jobs."""
    sealed = tmp_path / "sealed"
    (tmp_path / "plain").write_bytes(b"data" * 1000)
    warpcrypt.seal_file(tmp_path / "plain", sealed, key=bytes(32))
    os.link(sealed, tmp_path / "alias")
    before = sealed.read_bytes()
    with open(sealed, "rb") as stream, pytest.raises(warpcrypt.InvalidArgument, match="a file this command reads"):
        warpcrypt.open_file(stream, tmp_path / "alias", key=bytes(32))
    with pytest.raises(warpcrypt.InvalidArgument, match="a file this command reads"):
        warpcrypt.open_file(sealed, tmp_path / "alias", key=bytes(32))
    assert sealed.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["alias", "plain", "sealed"]
