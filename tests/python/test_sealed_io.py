"""warpcrypt.SealedWriter and SealedReader: sealed data as binary file
objects, and seal_file/open_file on streams. What they write is checked
with the independent reader of test_files (pyca/cryptography), and with the
library's own path-to-path open_file."""

from __future__ import annotations

import gc
import io
import pickle

import pytest

import warpcrypt
from test_files import reference_open

CHUNK = 4096
SEALED_CHUNK = CHUNK + 16
HEADER = 48


class Pipe(io.RawIOBase):
    """A stream that cannot seek and returns at most `step` bytes a read, as
    a pipe or socket may."""

    def __init__(self, data: bytes, step: int = 1000) -> None:
        self._data, self._at, self._step = data, 0, step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._step, len(self._data) - self._at)
        buffer[:n] = self._data[self._at:self._at + n]
        self._at += n
        return n


def sealed_bytes(plaintext: bytes, key: bytes, **options) -> bytes:
    target = io.BytesIO()
    with warpcrypt.SealedWriter(target, key=key, chunk_size=CHUNK, **options) as writer:
        # Uneven writes: chunk boundaries fall inside them.
        for at in range(0, len(plaintext), 1000):
            assert writer.write(plaintext[at:at + 1000]) == len(plaintext[at:at + 1000])
        assert writer.tell() == len(plaintext)
    return target.getvalue()


@pytest.mark.parametrize("size", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 5])
def test_writer_output_is_the_sealed_format(size, rng):
    key, plaintext = rng.randbytes(32), rng.randbytes(size)
    sealed = sealed_bytes(plaintext, key)
    assert reference_open(sealed, key) == plaintext
    chunks = max(1, -(-size // CHUNK))
    assert len(sealed) == HEADER + size + 16 * chunks


@pytest.mark.parametrize("size", [0, 1, CHUNK, 3 * CHUNK + 5])
@pytest.mark.parametrize("seekable", [True, False])
def test_reader_opens_what_seal_file_wrote(size, seekable, tmp_path, rng):
    key, plaintext = rng.randbytes(32), rng.randbytes(size)
    (tmp_path / "plain").write_bytes(plaintext)
    warpcrypt.seal_file(tmp_path / "plain", tmp_path / "sealed", key=key, chunk_size=CHUNK)
    sealed = (tmp_path / "sealed").read_bytes()
    source = io.BytesIO(sealed) if seekable else Pipe(sealed)
    with warpcrypt.SealedReader(source, key=key) as reader:
        assert reader.seekable() == seekable
        assert reader.read() == plaintext
        assert reader.read() == b""
    with warpcrypt.SealedReader(tmp_path / "sealed", key=key) as reader:
        assert reader.read(5) + reader.read() == plaintext


def test_passphrase_round_trip_through_a_path(tmp_path, rng):
    plaintext = rng.randbytes(2 * CHUNK + 3)
    with warpcrypt.SealedWriter(tmp_path / "f.sealed", passphrase="pw", iterations=1000, chunk_size=CHUNK) as w:
        w.write(plaintext)
    assert warpcrypt.sealed_info(tmp_path / "f.sealed").key_source == "passphrase"
    warpcrypt.open_file(tmp_path / "f.sealed", tmp_path / "back", passphrase="pw")
    assert (tmp_path / "back").read_bytes() == plaintext


def test_seeking_reads_and_authenticates_only_the_chunks_read(rng):
    key, plaintext = rng.randbytes(32), rng.randbytes(4 * CHUNK + 100)
    sealed = bytearray(sealed_bytes(plaintext, key))
    sealed[HEADER + 2 * SEALED_CHUNK + 7] ^= 1  # chunk 2 is damaged
    reader = warpcrypt.SealedReader(io.BytesIO(bytes(sealed)), key=key)
    for offset, length in [(0, 10), (CHUNK - 3, 6), (3 * CHUNK + 1, CHUNK + 50)]:
        reader.seek(offset)
        assert reader.read(length) == plaintext[offset:offset + length]
    assert reader.seek(-10, io.SEEK_END) == len(plaintext) - 10
    assert reader.read() == plaintext[-10:]
    reader.seek(2 * CHUNK + 100)
    buffer = bytearray(50)
    with pytest.raises(warpcrypt.InvalidTag, match="chunk 2"):
        reader.readinto(buffer)
    assert buffer == bytearray(50)  # nothing of the damaged chunk came out


@pytest.mark.parametrize("seekable", [True, False])
@pytest.mark.parametrize("kept", [1, 2])
def test_a_file_cut_at_a_chunk_boundary_fails_at_the_end(kept, seekable, rng):
    key, plaintext = rng.randbytes(32), rng.randbytes(3 * CHUNK)
    cut = sealed_bytes(plaintext, key)[:HEADER + kept * SEALED_CHUNK]
    reader = warpcrypt.SealedReader(io.BytesIO(cut) if seekable else Pipe(cut), key=key)
    with pytest.raises(warpcrypt.InvalidTag, match=f"chunk {kept - 1}"):
        reader.read()


def test_reading_past_the_end_still_opens_the_final_chunk(rng):
    """A seek to the end and a read of nothing must not pass a cut file."""
    key = rng.randbytes(32)
    cut = sealed_bytes(rng.randbytes(3 * CHUNK), key)[:HEADER + 2 * SEALED_CHUNK]
    reader = warpcrypt.SealedReader(io.BytesIO(cut), key=key)
    reader.seek(0, io.SEEK_END)
    with pytest.raises(warpcrypt.InvalidTag):
        reader.read(1)


@pytest.mark.parametrize("seekable", [True, False])
def test_an_empty_final_chunk_appended_after_a_cut_is_a_format_error(seekable, rng):
    key = rng.randbytes(32)
    sealed = sealed_bytes(rng.randbytes(3 * CHUNK), key)
    forged = sealed[:HEADER + SEALED_CHUNK] + bytes(16)
    # A seekable reader sees it in the size at once, a pipe when it gets there.
    with pytest.raises(warpcrypt.FormatError, match="empty final chunk"):
        warpcrypt.SealedReader(io.BytesIO(forged) if seekable else Pipe(forged), key=key).read()


def test_wrong_key_and_not_a_sealed_stream(rng):
    sealed = sealed_bytes(b"secret", rng.randbytes(32))
    with pytest.raises(warpcrypt.InvalidTag, match="chunk 0"):
        warpcrypt.SealedReader(io.BytesIO(sealed), key=rng.randbytes(32)).read()
    with pytest.raises(warpcrypt.FormatError, match="magic"):
        warpcrypt.SealedReader(io.BytesIO(b"x" * 100), key=bytes(32))
    with pytest.raises(warpcrypt.FormatError, match="48-byte header"):
        warpcrypt.SealedReader(io.BytesIO(sealed[:20]), key=bytes(32))
    with pytest.raises(warpcrypt.InvalidArgument, match="sealed with a key"):
        warpcrypt.SealedReader(io.BytesIO(sealed), passphrase="pw")


def test_a_pipe_is_read_in_order(rng):
    key = rng.randbytes(32)
    reader = warpcrypt.SealedReader(Pipe(sealed_bytes(b"abc", key)), key=key)
    with pytest.raises(io.UnsupportedOperation):
        reader.seek(0)


def test_writer_to_a_path_leaves_nothing_when_the_block_raises(tmp_path):
    with pytest.raises(RuntimeError):
        with warpcrypt.SealedWriter(tmp_path / "out", key=bytes(32)) as writer:
            writer.write(b"half")
            raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_a_writer_collected_unclosed_finishes_nothing(tmp_path):
    writer = warpcrypt.SealedWriter(tmp_path / "out", key=bytes(32))
    writer.write(b"part of it")
    del writer
    gc.collect()
    assert list(tmp_path.iterdir()) == []
    stream = io.BytesIO()
    writer = warpcrypt.SealedWriter(stream, key=bytes(32))
    writer.write(b"part of it")
    del writer
    gc.collect()
    # No last chunk was sealed: the reader refuses what the stream holds.
    with pytest.raises((warpcrypt.InvalidTag, warpcrypt.FormatError)):
        warpcrypt.SealedReader(io.BytesIO(stream.getvalue()), key=bytes(32)).read()


def test_writer_refuses_bad_parameters_and_closed_use():
    with pytest.raises(warpcrypt.InvalidArgument, match="exactly one"):
        warpcrypt.SealedWriter(io.BytesIO())
    with pytest.raises(warpcrypt.InvalidArgument):
        warpcrypt.SealedWriter(io.BytesIO(), key=bytes(32), chunk_size=1000)
    with pytest.raises(warpcrypt.InvalidKey, match="the AEAD takes a 32-byte key"):
        warpcrypt.SealedWriter(io.BytesIO(), key=bytes(5))
    writer = warpcrypt.SealedWriter(io.BytesIO(), key=bytes(32))
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(b"late")


def test_seal_file_and_open_file_take_streams(tmp_path, rng):
    key, plaintext = rng.randbytes(32), rng.randbytes(2 * CHUNK + 9)
    sealed = io.BytesIO()
    stats = warpcrypt.seal_file(io.BytesIO(plaintext), sealed, key=key, chunk_size=CHUNK)
    assert stats.bytes_in == len(plaintext) and stats.bytes_out == len(sealed.getvalue())
    assert reference_open(sealed.getvalue(), key) == plaintext
    (tmp_path / "sealed").write_bytes(sealed.getvalue())
    back = io.BytesIO()
    warpcrypt.open_file(tmp_path / "sealed", back, key=key)
    assert back.getvalue() == plaintext
    warpcrypt.open_file(io.BytesIO(sealed.getvalue()), tmp_path / "back", key=key, offset=CHUNK - 2, length=9)
    assert (tmp_path / "back").read_bytes() == plaintext[CHUNK - 2:CHUNK + 7]
    # The last byte flipped: set to zero, it stays as it was one run in 256
    # (the file's nonce is random).
    damaged = sealed.getvalue()[:-1] + bytes([sealed.getvalue()[-1] ^ 1])
    with pytest.raises(warpcrypt.InvalidTag):
        warpcrypt.open_file(io.BytesIO(damaged), tmp_path / "bad", key=key)
    assert not (tmp_path / "bad").exists()


def test_pickle(rng):
    key = rng.randbytes(32)
    state = {"weights": [rng.random() for _ in range(3000)], "name": "model"}
    target = io.BytesIO()
    with warpcrypt.SealedWriter(target, key=key, chunk_size=CHUNK) as writer:
        pickle.dump(state, writer)
    assert pickle.load(warpcrypt.SealedReader(io.BytesIO(target.getvalue()), key=key)) == state


def test_numpy_save_and_load(tmp_path, rng):
    np = pytest.importorskip("numpy")
    array = np.arange(10_000, dtype=np.float32).reshape(100, 100)
    with warpcrypt.SealedWriter(tmp_path / "a.npy.sealed", key=bytes(32), chunk_size=CHUNK) as writer:
        np.save(writer, array)
    with warpcrypt.SealedReader(tmp_path / "a.npy.sealed", key=bytes(32)) as reader:
        assert np.array_equal(np.load(reader), array)


def test_safetensors(tmp_path):
    np = pytest.importorskip("numpy")
    st = pytest.importorskip("safetensors.numpy", reason="safetensors is not installed")
    tensors = {"w": np.ones((64, 64), dtype=np.float16), "b": np.arange(7, dtype=np.int64)}
    with warpcrypt.SealedWriter(tmp_path / "m.safetensors.sealed", key=bytes(32), chunk_size=CHUNK) as writer:
        writer.write(st.save(tensors))
    with warpcrypt.SealedReader(tmp_path / "m.safetensors.sealed", key=bytes(32)) as reader:
        loaded = st.load(reader.read())
    assert loaded.keys() == tensors.keys() and all(np.array_equal(loaded[k], tensors[k]) for k in tensors)


def test_torch_save_and_load(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    state = {"layer.weight": torch.randn(64, 32), "layer.bias": torch.zeros(32), "step": 7}
    with warpcrypt.SealedWriter(tmp_path / "ckpt.sealed", key=bytes(32), chunk_size=CHUNK) as writer:
        torch.save(state, writer)
    with warpcrypt.SealedReader(tmp_path / "ckpt.sealed", key=bytes(32)) as reader:
        loaded = torch.load(reader, weights_only=True)
    assert loaded["step"] == 7 and all(torch.equal(loaded[k], state[k]) for k in ("layer.weight", "layer.bias"))


@pytest.mark.parametrize("seekable", [True, False])
def test_a_forged_chunk_size_costs_no_memory_before_authentication(seekable, tmp_path):
    """The header's chunk size (up to 1 GiB) is not authenticated until a
    chunk opens: reading a small file that claims huge chunks must allocate
    what arrives, not what the header asks for."""
    import tracemalloc

    sealed = bytearray(sealed_bytes(b"x" * 100, bytes(32)))
    sealed[10] = 30  # 1 GiB chunks
    (tmp_path / "forged").write_bytes(sealed)
    tracemalloc.start()
    try:
        with pytest.raises(warpcrypt.InvalidTag):
            source = open(tmp_path / "forged", "rb") if seekable else Pipe(bytes(sealed))
            with source, warpcrypt.SealedReader(source, key=bytes(32)) as reader:
                reader.read()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak} bytes allocated for a {len(sealed)}-byte file"
