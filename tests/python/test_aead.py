"""warpcrypt.aead: AES-GCM and ChaCha20-Poly1305 shaped as pyca/cryptography's
AEAD classes. The NIST CAVP GCM vectors (cryptography-vectors; every
IV, tag, plaintext and AAD length, FAIL entries included), the RFC 8439
ChaCha20-Poly1305 example, differential tests against pyca/cryptography
(skipped without it), forgeries and misuse, batches, and GPU arrays in place
(skipped without a device, or per framework without CuPy or PyTorch)."""

from __future__ import annotations

import pickle
import threading
from collections import Counter
from pathlib import Path

import pytest

import warpcrypt
from gpu_support import NO_DEVICE_REASON
from warpcrypt import _native
from warpcrypt.aead import AESGCM, BatchInvalidTag, ChaCha20Poly1305

KEY = bytes(range(32))
NONCE = bytes(range(100, 112))
# Every AEAD of the library, by how the tests make one from a key.
MAKERS = {
    "aes-128-gcm": lambda key, **kw: AESGCM(key[:16], **kw),
    "aes-192-gcm": lambda key, **kw: AESGCM(key[:24], **kw),
    "aes-256-gcm": lambda key, **kw: AESGCM(key, **kw),
    "chacha20-poly1305": lambda key, **kw: ChaCha20Poly1305(key, **kw),
}
# Host memory on the CPU, and through the GPU (skipped without a device).
BACKENDS = ("cpu", "gpu")


def backend_or_skip(backend: str, has_device: bool) -> str:
    if backend == "gpu" and not has_device:
        pytest.skip(NO_DEVICE_REASON)
    return backend


@pytest.fixture(scope="module")
def pyca():
    return pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead",
                               reason="the `cryptography` package is not installed: differential tests skipped")


def test_the_table_and_exports():
    assert sorted(row[0] for row in _native.aead_table()) == sorted(MAKERS)
    assert all(warpcrypt.aead._INFOS[row[0]] == row for row in _native.aead_table())
    assert warpcrypt.aead.AESGCM is AESGCM and "aead" in warpcrypt.__all__
    assert issubclass(BatchInvalidTag, warpcrypt.InvalidTag)
    assert (_native.AEAD_MIN_TAG_SIZE, _native.AEAD_MAX_TAG_SIZE, _native.AEAD_MAX_NONCE_SIZE) == (4, 16, 128)


def test_repr_names_the_aead_and_tag_length_and_no_key():
    key = bytes(range(32))
    assert repr(AESGCM(key, tag_length=12)) == "<warpcrypt.aead.AESGCM aes-256-gcm, 12-byte tags>"
    assert repr(ChaCha20Poly1305(key)) == "<warpcrypt.aead.ChaCha20Poly1305 chacha20-poly1305, 16-byte tags>"
    assert key.hex() not in repr(AESGCM(key)) and "1f" not in repr(AESGCM(key))


# ---------------------------------------------------------------------------
# NIST CAVP GCM (gcmEncryptExtIV*.rsp, gcmDecrypt*.rsp)
# ---------------------------------------------------------------------------

GCM_FILES = [f"gcm{kind}{bits}.rsp" for kind in ("EncryptExtIV", "Decrypt") for bits in (128, 192, 256)]
# Through the GPU, each [Keylen, IVlen, PTlen, AADlen, Taglen] group of
# fifteen vectors is cut to this many, plus its first FAIL entry: every
# length the files cover, in a fraction of the time.
GPU_PER_GROUP = 2


def read_gcm(path: Path) -> list[dict[str, str]]:
    """The records of a CAVP GCM file: Key, IV, PT, AAD, CT and Tag as hex,
    "FAIL" where opening must fail, and the record's line for messages.
    vector_files.read_records does not take the bare FAIL lines."""
    records: list[dict[str, str]] = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if line == "FAIL":
            records[-1]["FAIL"] = ""
            continue
        name, equals, value = line.partition("=")
        if not equals or line.startswith(("#", "[")):
            continue
        name = name.strip()
        if name == "Count":
            records.append({"line": str(number)})
        else:
            records[-1][name] = value.strip()
    return records


def lengths(record: dict[str, str]) -> tuple[int, ...]:
    # CT, not PT, which FAIL records lack.
    return tuple(len(record[name]) for name in ("Key", "IV", "CT", "AAD", "Tag"))


def sample(records: list[dict[str, str]], per_group: int) -> list[dict[str, str]]:
    """The first `per_group` records of each length group, and its first
    FAIL record."""
    picked, taken, failing = [], Counter(), set()
    for record in records:
        group = lengths(record)
        fails = "FAIL" in record
        if taken[group] < per_group or (fails and group not in failing):
            picked.append(record)
            taken[group] += 1
        if fails:
            failing.add(group)
    return picked


@pytest.fixture(scope="module")
def gcm_vectors(vectors_dir) -> dict[str, list[dict[str, str]]]:
    return {name: read_gcm(vectors_dir / "ciphers" / "AES" / "GCM" / name) for name in GCM_FILES}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", GCM_FILES)
def test_nist_gcm(name, backend, gcm_vectors, has_device):
    backend_or_skip(backend, has_device)
    records = gcm_vectors[name] if backend == "cpu" else sample(gcm_vectors[name], GPU_PER_GROUP)
    counts = {"sealed": 0, "opened": 0, "refused": 0}
    tag_lengths, iv_lengths = set(), set()
    for record in records:
        key, iv, aad, ct, tag = (bytes.fromhex(record[n]) for n in ("Key", "IV", "AAD", "CT", "Tag"))
        where = f"{name} line {record['line']}"
        aead = AESGCM(key, tag_length=len(tag), backend=backend)
        tag_lengths.add(len(tag))
        iv_lengths.add(len(iv))
        if "FAIL" in record:
            with pytest.raises(warpcrypt.InvalidTag):
                aead.decrypt(iv, ct + tag, aad)
            counts["refused"] += 1
            continue
        pt = bytes.fromhex(record["PT"])
        assert aead.decrypt(iv, ct + tag, aad) == pt, where
        counts["opened"] += 1
        if name.startswith("gcmEncrypt"):
            assert aead.encrypt(iv, pt, aad) == ct + tag, where
            counts["sealed"] += 1
    # Guards the parser: every file has each kind, and all seven tag lengths.
    assert counts["opened"] and (counts["sealed"] if "Encrypt" in name else counts["refused"])
    assert tag_lengths == {16, 15, 14, 13, 12, 8, 4}
    assert min(iv_lengths) == 1 and max(iv_lengths) == 128


def test_nist_gcm_detached_and_in_place(gcm_vectors):
    """The detached-tag form on a sample: in place in a bytearray, and a
    failed open zeroes what it wrote."""
    for record in sample(gcm_vectors["gcmDecrypt256.rsp"], 1):
        key, iv, aad, ct, tag = (bytes.fromhex(record[n]) for n in ("Key", "IV", "AAD", "CT", "Tag"))
        aead = AESGCM(key, tag_length=len(tag))
        buf = bytearray(ct)
        if "FAIL" in record:
            with pytest.raises(warpcrypt.InvalidTag):
                aead.decrypt_into(iv, buf, aad, buf, tag=tag)
            assert buf == bytes(len(ct))
        else:
            assert aead.decrypt_into(iv, buf, aad, buf, tag=tag) == len(ct)
            assert buf == bytes.fromhex(record["PT"])


# ---------------------------------------------------------------------------
# RFC 8439, section 2.8.2: the ChaCha20-Poly1305 example
# ---------------------------------------------------------------------------

RFC8439_KEY = bytes(range(0x80, 0xA0))
RFC8439_NONCE = bytes.fromhex("07000000") + bytes(range(0x40, 0x48))
RFC8439_AAD = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
RFC8439_PLAINTEXT = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
                     b"sunscreen would be it.")
RFC8439_CIPHERTEXT = bytes.fromhex(
    "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
    "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
    "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
    "3ff4def08e4b7a9de576d26586cec64b6116")
RFC8439_TAG = bytes.fromhex("1ae10b594f09e26a7e902ecbd0600691")


@pytest.mark.parametrize("backend", BACKENDS)
def test_rfc8439_chacha20_poly1305(backend, has_device):
    aead = ChaCha20Poly1305(RFC8439_KEY, backend=backend_or_skip(backend, has_device))
    sealed = RFC8439_CIPHERTEXT + RFC8439_TAG
    assert aead.encrypt(RFC8439_NONCE, RFC8439_PLAINTEXT, RFC8439_AAD) == sealed
    assert aead.decrypt(RFC8439_NONCE, sealed, RFC8439_AAD) == RFC8439_PLAINTEXT
    with pytest.raises(warpcrypt.InvalidTag):
        aead.decrypt(RFC8439_NONCE, sealed, RFC8439_AAD[:-1])


# ---------------------------------------------------------------------------
# Against pyca/cryptography
# ---------------------------------------------------------------------------

def reference_for(pyca, name: str, key: bytes):
    return pyca.ChaCha20Poly1305(key) if name == "chacha20-poly1305" else pyca.AESGCM(key[: int(name[4:7]) // 8])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MAKERS)
def test_matches_cryptography(name, backend, pyca, rng, has_device):
    """Random keys, nonces, AAD and lengths 0..4096, and one of 3 MiB: both
    seal the same bytes and each opens what the other sealed."""
    backend_or_skip(backend, has_device)
    sizes = [0, 1, 15, 16, 17, 63, 64, 65, 4096] + [rng.randrange(4097) for _ in range(40)] + [3 * 2**20 + 5]
    for size in sizes:
        key, nonce = rng.randbytes(32), rng.randbytes(12)
        data, aad = rng.randbytes(size), rng.randbytes(rng.choice((0, 1, 13, 16, 300)))
        ours, theirs = MAKERS[name](key, backend=backend), reference_for(pyca, name, key)
        sealed = ours.encrypt(nonce, data, aad)
        assert sealed == theirs.encrypt(nonce, data, aad), f"{name}, {size} bytes"
        assert theirs.decrypt(nonce, sealed, aad) == data
        assert ours.decrypt(nonce, sealed, aad) == data


def test_gcm_nonce_lengths_match_cryptography(pyca, rng):
    """Nonces other than 12 bytes go through GHASH first; pyca/cryptography
    takes 8 to 128 bytes."""
    key = rng.randbytes(32)
    for size in (8, 11, 13, 16, 64, 128):
        nonce, data, aad = rng.randbytes(size), rng.randbytes(100), rng.randbytes(20)
        assert AESGCM(key).encrypt(nonce, data, aad) == pyca.AESGCM(key).encrypt(nonce, data, aad)


def test_into_forms_match_cryptographys_layout(pyca, rng):
    np = pytest.importorskip("numpy")
    key, nonce, aad = rng.randbytes(32), rng.randbytes(12), rng.randbytes(40)
    data = rng.randbytes(1000)
    aead, expected = AESGCM(key), pyca.AESGCM(key).encrypt(nonce, data, aad)

    buf = bytearray(len(data) + 16)
    assert aead.encrypt_into(nonce, data, aad, buf) == len(buf) and buf == expected
    # More room than needed is fine; the count says what was written.
    roomy = np.zeros(len(data) + 100, dtype=np.uint8)
    assert aead.encrypt_into(nonce, data, aad, roomy) == len(expected) and roomy[:len(expected)].tobytes() == expected
    plain = bytearray(len(data))
    assert aead.decrypt_into(nonce, expected, aad, plain) == len(data) and plain == data

    # Attached tag in place: data is a view of buf's first bytes.
    work = bytearray(data) + bytearray(16)
    aead.encrypt_into(nonce, memoryview(work)[: len(data)], aad, work)
    assert work == expected
    assert aead.decrypt_into(nonce, work, aad, memoryview(work)[: len(data)]) == len(data)
    assert work[: len(data)] == data

    # Detached tag, in place, in a NumPy array.
    array, tag = np.frombuffer(bytearray(data), dtype=np.uint8), bytearray(16)
    assert aead.encrypt_into(nonce, array, aad, array, tag=tag) == len(data)
    assert array.tobytes() + tag == expected
    aead.decrypt_into(nonce, array, aad, array, tag=tag)
    assert array.tobytes() == data


# ---------------------------------------------------------------------------
# Forgeries and misuse
# ---------------------------------------------------------------------------

def flip(data: bytes, bit: int) -> bytes:
    changed = bytearray(data)
    changed[bit // 8] ^= 1 << (bit % 8)
    return bytes(changed)


@pytest.mark.parametrize("name", MAKERS)
def test_any_change_raises_invalid_tag_and_releases_nothing(name, rng):
    aead = MAKERS[name](KEY)
    data, aad = rng.randbytes(200), rng.randbytes(30)
    sealed = aead.encrypt(NONCE, data, aad)
    forgeries = [
        (MAKERS[name](flip(KEY, 0)), NONCE, sealed, aad),  # wrong key
        (aead, flip(NONCE, 95), sealed, aad),               # wrong nonce
        (aead, NONCE, sealed, flip(aad, 7)),                # wrong associated data
        (aead, NONCE, sealed, None),                        # none at all
        (aead, NONCE, sealed[:-1], aad),                    # truncated
        (aead, NONCE, sealed + b"\0", aad),                 # extended
        (aead, NONCE, sealed[:15], aad),                    # shorter than the tag
    ] + [(aead, NONCE, flip(sealed, rng.randrange(8 * len(sealed))), aad) for _ in range(20)] + [
        (aead, NONCE, flip(sealed, 8 * len(sealed) - 1 - bit), aad) for bit in range(0, 128, 9)  # the tag
    ]
    for opener, nonce, forged, forged_aad in forgeries:
        with pytest.raises(warpcrypt.InvalidTag):
            opener.decrypt(nonce, forged, forged_aad)
        buf = bytearray(b"\xaa" * max(len(forged) - 16, 0))
        with pytest.raises(warpcrypt.InvalidTag):
            opener.decrypt_into(nonce, forged, forged_aad, buf)
        assert buf == bytes(len(buf)), "a failed open leaves zeros, not plaintext"


def test_truncated_gcm_tags_are_prefixes(rng):
    data, aad = rng.randbytes(77), rng.randbytes(5)
    full = AESGCM(KEY).encrypt(NONCE, data, aad)
    for length in range(_native.AEAD_MIN_TAG_SIZE, _native.AEAD_MAX_TAG_SIZE + 1):
        aead = AESGCM(KEY, tag_length=length)
        assert aead.tag_length == length
        sealed = aead.encrypt(NONCE, data, aad)
        assert sealed == full[: len(data) + length]
        assert aead.decrypt(NONCE, sealed, aad) == data
        with pytest.raises(warpcrypt.InvalidTag):
            aead.decrypt(NONCE, flip(sealed, 8 * len(sealed) - 1), aad)


def test_wrong_sizes_raise_the_right_errors():
    for size in (0, 15, 17, 31, 33):
        with pytest.raises(warpcrypt.InvalidKey, match=f"not {size} bytes"):
            AESGCM(bytes(size))
    with pytest.raises(warpcrypt.InvalidKey, match="32-byte key, not 16 bytes"):
        ChaCha20Poly1305(bytes(16))
    for bad in (0, 129):
        with pytest.raises(warpcrypt.InvalidIV, match=f"1 to 128 bytes .*not {bad} bytes"):
            AESGCM(KEY).encrypt(bytes(bad), b"data", None)
    for bad in (8, 11, 13, 16):
        with pytest.raises(warpcrypt.InvalidIV, match=f"12-byte nonce, not {bad} bytes"):
            ChaCha20Poly1305(KEY).decrypt(bytes(bad), bytes(32), None)
    for bad in (0, 3, 17):
        with pytest.raises(warpcrypt.InvalidArgument, match="tags are 4 to 16 bytes"):
            AESGCM(KEY, tag_length=bad)
    # All ValueErrors, as pyca/cryptography raises for the same mistakes.
    assert issubclass(warpcrypt.InvalidKey, ValueError) and issubclass(warpcrypt.InvalidIV, ValueError)
    with pytest.raises(TypeError):
        AESGCM("k" * 32)
    with pytest.raises(TypeError):
        AESGCM(KEY).encrypt(None, b"data", None)
    with pytest.raises(TypeError):
        AESGCM(KEY).encrypt_into(NONCE, b"data", None, None)
    with pytest.raises(warpcrypt.InvalidArgument, match="unknown backend"):
        AESGCM(KEY, backend="tpu")


def test_generate_key():
    assert [len(AESGCM.generate_key(bits)) for bits in (128, 192, 256)] == [16, 24, 32]
    assert len(ChaCha20Poly1305.generate_key()) == 32
    assert AESGCM.generate_key(256) != AESGCM.generate_key(256)
    with pytest.raises(ValueError):
        AESGCM.generate_key(512)
    with pytest.raises(TypeError):
        AESGCM.generate_key("256")


def test_misused_buffers_are_refused():
    aead, data = AESGCM(KEY), b"x" * 64
    with pytest.raises(warpcrypt.OutputTooSmall, match="^buffer must be 80 bytes$"):
        aead.encrypt_into(NONCE, data, None, bytearray(79))
    with pytest.raises(warpcrypt.OutputTooSmall, match="in place, pass the tag an array of its own"):
        work = bytearray(data)
        aead.encrypt_into(NONCE, work, None, work)
    with pytest.raises(warpcrypt.InvalidArgument, match="tag holds 12 bytes"):
        aead.encrypt_into(NONCE, data, None, bytearray(64), tag=bytearray(12))
    with pytest.raises(warpcrypt.InvalidArgument, match="read-only"):
        aead.encrypt_into(NONCE, data, None, bytes(80))
    work = bytearray(100)
    with pytest.raises(warpcrypt.InvalidArgument, match="overlap"):
        aead.encrypt_into(NONCE, memoryview(work)[1:65], None, memoryview(work)[0:80])
    with pytest.raises(warpcrypt.InvalidArgument, match="buf and tag overlap"):  # the tag inside the ciphertext
        aead.encrypt_into(NONCE, data, None, memoryview(work)[0:64], tag=memoryview(work)[50:66])
    with pytest.raises(warpcrypt.InvalidArgument, match="buf and nonce overlap"):
        aead.encrypt_into(memoryview(work)[0:12], data, None, memoryview(work)[0:80])
    with pytest.raises(warpcrypt.InvalidArgument, match="verified is in host memory"):
        aead.decrypt_into(NONCE, bytes(80), None, bytearray(64), verified=bytearray(4))


def test_gpu_backend_without_a_device_is_an_error(require_no_device):
    with pytest.raises(warpcrypt.NoDevice):
        AESGCM(KEY, backend="gpu").encrypt(NONCE, b"data", None)


def test_the_gpu_reference_kernels_are_no_backend():
    assert "gpu-ref" not in warpcrypt.backends()
    with pytest.raises(ValueError):
        AESGCM(KEY, backend="gpu-ref")


def test_threads_sharing_one_object_agree(rng):
    aead, data = ChaCha20Poly1305(KEY, threads=1), rng.randbytes(1 << 20)
    expected = aead.encrypt(NONCE, data, b"aad")
    results: list[bytes] = []
    workers = [threading.Thread(target=lambda: results.append(aead.encrypt(NONCE, data, b"aad"))) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == [expected] * 4


@pytest.mark.parametrize("name", MAKERS)
def test_a_keyed_object_survives_failures_nonce_lengths_and_threads(name, pyca, rng):
    # One key serves every message from contexts keyed once and reused: a
    # failed tag, a nonce of another length, or messages from several
    # threads at once must leave none of them in a state the next message
    # sees. pyca, keyed afresh, is the reference for every result.
    key = rng.randbytes(32)
    ours, reference = MAKERS[name](key), reference_for(pyca, name, key)
    nonce_lengths = (12,) if name == "chacha20-poly1305" else (12, 8, 16, 12)
    for length in nonce_lengths:
        nonce, data = rng.randbytes(length), rng.randbytes(rng.randrange(2000))
        sealed = ours.encrypt(nonce, data, b"aad")
        assert sealed == reference.encrypt(nonce, data, b"aad")
        with pytest.raises(warpcrypt.InvalidTag):
            ours.decrypt(nonce, sealed[:-1] + bytes([sealed[-1] ^ 1]), b"aad")
        assert ours.decrypt(nonce, sealed, b"aad") == data
    jobs = [(rng.randbytes(12), rng.randbytes(rng.randrange(3000))) for _ in range(400)]
    expected = [reference.encrypt(nonce, data, None) for nonce, data in jobs]
    results: dict[int, bytes] = {}

    def work(first: int) -> None:
        for i in range(first, len(jobs), 4):
            nonce, data = jobs[i]
            sealed = ours.encrypt(nonce, data, None)
            if i % 7 == 0:  # failures interleaved with the other threads' work
                with pytest.raises(warpcrypt.InvalidTag):
                    ours.decrypt(nonce, sealed, b"other")
            results[i] = sealed

    workers = [threading.Thread(target=work, args=(first,)) for first in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [results[i] for i in range(len(jobs))] == expected


# ---------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------

def batch_of(rng, count: int):
    nonces = [rng.randbytes(12) for _ in range(count)]
    messages = [rng.randbytes(rng.choice((0, 1, 16, 100, 4096, rng.randrange(5000)))) for _ in range(count)]
    aads = [rng.choice((None, b"", rng.randbytes(20))) for _ in range(count)]
    return nonces, messages, aads


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MAKERS)
def test_batch_equals_one_at_a_time(name, backend, rng, has_device):
    aead = MAKERS[name](KEY, backend=backend_or_skip(backend, has_device))
    nonces, messages, aads = batch_of(rng, 33)
    sealed = aead.encrypt_batch(nonces, messages, aads)
    assert sealed == [aead.encrypt(n, m, a) for n, m, a in zip(nonces, messages, aads)]
    assert aead.decrypt_batch(nonces, sealed, aads) == messages
    assert aead.encrypt_batch(nonces, messages) == [aead.encrypt(n, m, None) for n, m in zip(nonces, messages)]
    assert aead.encrypt_batch([], []) == [] and aead.decrypt_batch([], []) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_names_the_messages_that_failed(backend, rng, has_device):
    aead = AESGCM(KEY, backend=backend_or_skip(backend, has_device))
    nonces, messages, aads = batch_of(rng, 20)
    sealed = aead.encrypt_batch(nonces, messages, aads)
    sealed[3] = flip(sealed[3], 8 * len(sealed[3]) - 1)
    sealed[11] = sealed[11][:7]  # shorter than a tag
    with pytest.raises(BatchInvalidTag) as raised:
        aead.decrypt_batch(nonces, sealed, aads)
    assert raised.value.failed == (3, 11)
    assert isinstance(raised.value, warpcrypt.InvalidTag) and raised.value.status == warpcrypt.Status.AUTH
    assert pickle.loads(pickle.dumps(raised.value)).failed == (3, 11)

    # Into bufs: the failed messages' bufs are zeroed, the others opened.
    bufs = [bytearray(b"\xaa" * max(len(s) - 16, 0)) for s in sealed]
    with pytest.raises(BatchInvalidTag):
        aead.decrypt_batch(nonces, sealed, aads, bufs=bufs)
    for i, (buf, message) in enumerate(zip(bufs, messages)):
        assert buf == (bytes(len(buf)) if i in (3, 11) else message), i


def test_batch_detached_tags_in_place(rng):
    aead = ChaCha20Poly1305(KEY)
    nonces, messages, aads = batch_of(rng, 10)
    work = [bytearray(m) for m in messages]
    tags = [bytearray(16) for _ in messages]
    assert aead.encrypt_batch(nonces, work, aads, bufs=work, tags=tags) is None
    assert [bytes(w) + t for w, t in zip(work, tags)] == aead.encrypt_batch(nonces, messages, aads)
    tags[4][0] ^= 1
    with pytest.raises(BatchInvalidTag) as raised:
        aead.decrypt_batch(nonces, work, aads, bufs=work, tags=tags)
    assert raised.value.failed == (4,)
    assert [bytes(w) for w in work] == [bytes(len(m)) if i == 4 else m for i, m in enumerate(messages)]


def test_batch_misuse_is_refused():
    aead = AESGCM(KEY)
    with pytest.raises(warpcrypt.InvalidArgument, match=r"len\(nonces\) is 1 and len\(messages\) 2"):
        aead.encrypt_batch([NONCE], [b"a", b"b"])
    with pytest.raises(warpcrypt.InvalidArgument, match="tags= needs bufs="):
        aead.encrypt_batch([NONCE], [b"a"], tags=[bytearray(16)])
    with pytest.raises(warpcrypt.InvalidIV, match=r"nonces\[1\]"):
        aead.encrypt_batch([NONCE, b""], [b"a", b"b"])
    shared = bytearray(40)
    with pytest.raises(warpcrypt.InvalidArgument, match=r"bufs\[0\] and bufs\[1\] overlap"):
        aead.encrypt_batch([NONCE, NONCE], [b"abc", b"def"], bufs=[shared, memoryview(shared)[10:]])
    with pytest.raises(warpcrypt.InvalidArgument, match=r"bufs\[0\] and messages\[1\] overlap"):
        aead.encrypt_batch([NONCE, NONCE], [b"abc", memoryview(shared)[:3]], bufs=[shared, bytearray(19)])
    # A message too short to open splits the batch, not the check.
    with pytest.raises(warpcrypt.InvalidArgument, match=r"bufs\[0\] and bufs\[2\] overlap"):
        aead.decrypt_batch([NONCE] * 3, [bytes(20), b"short", bytes(20)],
                           bufs=[memoryview(shared)[:4], bytearray(0), memoryview(shared)[2:6]])


# ---------------------------------------------------------------------------
# Chunks: one buffer cut into equal messages, the last one shorter
# ---------------------------------------------------------------------------

def chunk_layout(rng, size: int, chunk: int, tag_len: int = 16):
    count = -(-size // chunk)
    return rng.randbytes(12 * count), count, bytearray(tag_len * count)


def chunks_one_at_a_time(aead, nonces: bytes, data: bytes, chunk: int) -> tuple[bytes, bytes]:
    """What encrypt_chunks must produce: each chunk sealed on its own."""
    sealed = [aead.encrypt(nonces[12 * i:12 * i + 12], data[at:at + chunk], None)
              for i, at in enumerate(range(0, len(data), chunk))]
    return b"".join(s[:-16] for s in sealed), b"".join(s[-16:] for s in sealed)


@pytest.mark.parametrize("size, chunk", [(0, 64), (64, 64), (1000, 64), (4096, 1000), (100, 4096)])
@pytest.mark.parametrize("name", MAKERS)
def test_chunks_equal_each_chunk_sealed_alone(name, size, chunk, rng):
    aead = MAKERS[name](KEY)
    data = rng.randbytes(size)
    nonces, count, tags = chunk_layout(rng, size, chunk)
    expected = chunks_one_at_a_time(aead, nonces, data, chunk)
    work = bytearray(data)
    aead.encrypt_chunks(nonces, work, chunk, tags)
    assert (bytes(work), bytes(tags)) == expected
    aead.decrypt_chunks(nonces, work, chunk, tags)
    assert work == data

    out = bytearray(size)
    aead.encrypt_chunks(nonces, data, chunk, tags, buf=out)
    assert (bytes(out), bytes(tags)) == expected


def test_chunks_name_the_chunks_that_failed_and_zero_them(rng):
    aead, chunk = AESGCM(KEY), 100
    data = rng.randbytes(1050)
    nonces, count, tags = chunk_layout(rng, len(data), chunk)
    work = bytearray(data)
    aead.encrypt_chunks(nonces, work, chunk, tags)
    work[3 * chunk + 5] ^= 1   # a chunk's data
    tags[16 * 10] ^= 1         # the short last chunk's tag
    with pytest.raises(BatchInvalidTag) as raised:
        aead.decrypt_chunks(nonces, work, chunk, tags)
    assert raised.value.failed == (3, 10)
    for i in range(count):
        piece = work[i * chunk:(i + 1) * chunk]
        assert piece == (bytes(len(piece)) if i in (3, 10) else data[i * chunk:(i + 1) * chunk]), i


def test_chunk_misuse_is_refused(rng):
    aead, data = AESGCM(KEY), bytearray(1000)
    nonces, count, tags = chunk_layout(rng, len(data), 100)
    with pytest.raises(warpcrypt.InvalidArgument, match="nonces holds 108 bytes; 10 chunks need 120"):
        aead.encrypt_chunks(nonces[:-12], data, 100, tags)
    with pytest.raises(warpcrypt.InvalidArgument, match="tags holds 144 bytes; 10 chunks need 160"):
        aead.encrypt_chunks(nonces, data, 100, tags[:-16])
    with pytest.raises(warpcrypt.InvalidArgument, match="chunk_size must be positive"):
        aead.encrypt_chunks(nonces, data, 0, tags)
    with pytest.raises(warpcrypt.OutputTooSmall, match="buf holds 999 bytes"):
        aead.encrypt_chunks(nonces, data, 100, tags, buf=bytearray(999))
    with pytest.raises(warpcrypt.InvalidArgument, match="data is read-only"):
        aead.encrypt_chunks(nonces, bytes(data), 100, tags)  # in place, without buf


# ---------------------------------------------------------------------------
# GPU arrays
# ---------------------------------------------------------------------------

@pytest.fixture(params=["torch", "cupy"])
def gpu(request, has_device):
    """test_gpu's framework helpers: arrays from bytes and back, streams,
    and a kernel that holds a stream up."""
    if not has_device:
        pytest.skip(NO_DEVICE_REASON)
    import test_gpu

    return test_gpu.Torch() if request.param == "torch" else test_gpu.CuPy()


def int32_zeros(gpu, count: int):
    return gpu.array(bytes(4 * count), dtype="int32")


@pytest.mark.parametrize("size", [0, 1, 4096 + 7, (1 << 20) + 3])
@pytest.mark.parametrize("name", MAKERS)
def test_gpu_in_place_equals_the_host(gpu, name, size, rng):
    aead, data, aad = MAKERS[name](KEY), rng.randbytes(size), rng.randbytes(24)
    expected = aead.encrypt(NONCE, data, aad)

    array, tag = gpu.array(data), gpu.empty(16)
    assert aead.encrypt_into(NONCE, array, aad, array, tag=tag) == size
    assert gpu.to_bytes(array) + gpu.to_bytes(tag) == expected
    assert aead.decrypt_into(NONCE, array, aad, array, tag=tag) == size
    assert gpu.to_bytes(array) == data

    sealed = gpu.empty(size + 16)
    assert aead.encrypt_into(NONCE, gpu.array(data), aad, sealed) == size + 16
    assert gpu.to_bytes(sealed) == expected
    opened = gpu.empty(size)
    assert aead.decrypt_into(NONCE, sealed, aad, opened) == size
    assert gpu.to_bytes(opened) == data


@pytest.mark.parametrize("backend", ["auto", "hybrid", "gpu"])
def test_gpu_arrays_run_on_their_device_under_every_backend_but_cpu(gpu, backend, rng):
    """One key of the library serves both kinds of memory, by its rule: the
    backend places host memory, GPU arrays run where they live, and the cpu
    backend refuses them."""
    data, aad = rng.randbytes(70000), rng.randbytes(7)
    expected = AESGCM(KEY, backend="cpu").encrypt(NONCE, data, aad)
    aead = AESGCM(KEY, backend=backend)
    assert aead.encrypt(NONCE, data, aad) == expected  # host memory, on the same key
    sealed = gpu.empty(len(data) + 16)
    assert aead.encrypt_into(NONCE, gpu.array(data), aad, sealed) == len(data) + 16
    assert gpu.to_bytes(sealed) == expected
    opened = gpu.empty(len(data))
    assert aead.decrypt_into(NONCE, sealed, aad, opened) == len(data)
    assert gpu.to_bytes(opened) == data


def test_gpu_arrays_are_refused_by_the_cpu_backend(gpu, rng):
    aead, data = ChaCha20Poly1305(KEY, backend="cpu"), rng.randbytes(1000)
    array = gpu.array(data)
    with pytest.raises(warpcrypt.BackendUnavailable):
        aead.encrypt_into(NONCE, array, None, gpu.empty(len(data) + 16))
    assert gpu.to_bytes(array) == data


def test_gpu_failed_open_raises_and_zeroes(gpu, rng):
    aead, data = AESGCM(KEY), rng.randbytes(5000)
    sealed = aead.encrypt(NONCE, data, b"aad")
    array, tag = gpu.array(sealed[:-16]), gpu.array(flip(sealed[-16:], 0))
    with pytest.raises(warpcrypt.InvalidTag):
        aead.decrypt_into(NONCE, array, b"aad", array, tag=tag)
    assert gpu.to_bytes(array) == bytes(len(data))


def test_gpu_verified_keeps_the_open_asynchronous(gpu, rng):
    from test_gpu import stream_done

    aead, data = ChaCha20Poly1305(KEY), rng.randbytes(1 << 20)
    sealed = aead.encrypt(NONCE, data, None)
    good, bad = gpu.array(sealed), gpu.array(flip(sealed, 12345))
    verdicts = int32_zeros(gpu, 2)
    stream = gpu.new_stream()
    gpu.spin(stream)
    aead.decrypt_into(NONCE, good, None, good[: len(data)], stream=stream, verified=verdicts[0:1])
    aead.decrypt_into(NONCE, bad, None, bad[: len(data)], stream=stream, verified=verdicts[1:2])
    assert not stream_done(stream)  # nothing waited for the stream
    stream.synchronize()
    assert gpu.to_bytes(verdicts) == (1).to_bytes(4, "little") + bytes(4)
    assert gpu.to_bytes(good[: len(data)]) == data and gpu.to_bytes(bad[: len(data)]) == bytes(len(data))


def test_gpu_work_is_queued_on_the_callers_stream(gpu, rng):
    from test_gpu import stream_done

    aead, data = AESGCM(KEY), rng.randbytes(1 << 20)
    array, tag = gpu.array(data), gpu.empty(16)
    stream = gpu.new_stream()
    gpu.spin(stream)
    with gpu.current(stream):
        aead.encrypt_into(NONCE, array, None, array, tag=tag)
    assert not stream_done(stream)
    assert gpu.read_elsewhere(array) == data
    stream.synchronize()
    assert gpu.to_bytes(array) + gpu.to_bytes(tag) == aead.encrypt(NONCE, data, None)


def test_gpu_batch_in_one_kernel(gpu, rng):
    aead = AESGCM(KEY)
    nonces, messages, aads = batch_of(rng, 16)
    expected = aead.encrypt_batch(nonces, messages, aads)
    arrays, tags = [gpu.array(m) for m in messages], [gpu.empty(16) for _ in messages]
    assert aead.encrypt_batch(nonces, arrays, aads, bufs=arrays, tags=tags) is None
    assert [gpu.to_bytes(a) + gpu.to_bytes(t) for a, t in zip(arrays, tags)] == expected

    # Attached tags, one forged and one too short; the others open.
    sealed = [gpu.array(s) for s in expected[:5]] + [gpu.array(flip(expected[5], 3))] + [gpu.array(b"short")]
    opened = [gpu.empty(max(len(s) - 16, 0)) for s in expected[:6]] + [gpu.empty(0)]
    with pytest.raises(BatchInvalidTag) as raised:
        aead.decrypt_batch(nonces[:7], sealed, aads[:7], bufs=opened)
    assert raised.value.failed == (5, 6)
    assert [gpu.to_bytes(o) for o in opened[:5]] == messages[:5]
    assert gpu.to_bytes(opened[5]) == bytes(len(messages[5]))

    verdicts = int32_zeros(gpu, 7)
    assert aead.decrypt_batch(nonces[:7], sealed, aads[:7], bufs=opened, verified=verdicts) is None
    assert gpu.to_bytes(verdicts) == b"".join(int(i < 5).to_bytes(4, "little") for i in range(7))


def test_gpu_misuse_is_refused(gpu):
    aead, array = AESGCM(KEY), gpu.array(bytes(64))
    with pytest.raises(warpcrypt.InvalidArgument, match="use encrypt_into"):
        aead.encrypt(NONCE, array, None)
    with pytest.raises(warpcrypt.InvalidArgument, match="host memory"):
        aead.encrypt_into(NONCE, array, None, array, tag=bytearray(16))
    with pytest.raises(warpcrypt.InvalidArgument, match="pass bufs="):
        aead.encrypt_batch([NONCE], [array])
    with pytest.raises(warpcrypt.OutputTooSmall):
        aead.decrypt_into(NONCE, gpu.array(bytes(80)), None, gpu.empty(64), verified=gpu.empty(3))


@pytest.mark.parametrize("size, chunk", [(64 * 5, 64), ((1 << 20) + 3, 1 << 16), (100, 4096)])
@pytest.mark.parametrize("name", MAKERS)
def test_gpu_chunks_equal_the_host(gpu, name, size, chunk, rng):
    aead, data = MAKERS[name](KEY), rng.randbytes(size)
    nonces, count, _ = chunk_layout(rng, size, chunk)
    expected = chunks_one_at_a_time(aead, nonces, data, chunk)
    array, tags, device_nonces = gpu.array(data), gpu.empty(16 * count), gpu.array(nonces)
    aead.encrypt_chunks(device_nonces, array, chunk, tags)
    assert (gpu.to_bytes(array), gpu.to_bytes(tags)) == expected
    aead.decrypt_chunks(device_nonces, array, chunk, tags)
    assert gpu.to_bytes(array) == data

    # A forged chunk: raised without `verified`, its verdict 0 with it.
    sealed = gpu.array(expected[0][:chunk] + flip(expected[0][chunk:], 1) if count > 1 else flip(expected[0], 1))
    tags = gpu.array(expected[1])
    with pytest.raises(BatchInvalidTag) as raised:
        aead.decrypt_chunks(device_nonces, sealed, chunk, tags)
    assert raised.value.failed == ((1,) if count > 1 else (0,))
    verdicts = int32_zeros(gpu, count)
    aead.decrypt_chunks(device_nonces, gpu.array(expected[0]), chunk, tags, verified=verdicts)
    assert gpu.to_bytes(verdicts) == (1).to_bytes(4, "little") * count


def test_gpu_chunks_take_their_nonces_and_tags_on_the_device(gpu, rng):
    aead, data = AESGCM(KEY), rng.randbytes(256)
    nonces, count, tags = chunk_layout(rng, len(data), 64)
    with pytest.raises(warpcrypt.InvalidArgument, match="GPU memory"):
        aead.encrypt_chunks(nonces, gpu.array(data), 64, gpu.empty(16 * count))
