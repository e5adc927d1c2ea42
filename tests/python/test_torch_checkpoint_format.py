"""warpcrypt.torch's checkpoint format, read and attacked without PyTorch
(warpcrypt._checkpoint), so these run in CI where PyTorch is not installed.

Issue 34, item 4: version 1 handed the whole file to torch.load before any
tag was checked, and allocated tensors by shapes the file chose. Here
nothing is parsed before the header's tag matched, nothing is unpickled, and
nothing is allocated by a size before the header listing it authenticated
and the file's length matched it."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import tracemalloc

import pytest

import warpcrypt
from warpcrypt import _checkpoint as ckpt

KEY = bytes(range(32))
F32 = ckpt.RawTensor("float32", (2, 3), bytes(range(24)))


def state() -> dict:
    """A model's tensors beside an optimizer's state, which nests tensors in
    dicts with int keys among floats, tuples and lists."""
    return {
        "linear.weight": ckpt.RawTensor("float32", (4, 2), os.urandom(32)),
        "linear.bias": ckpt.RawTensor("float32", (2,), os.urandom(8)),
        "empty": ckpt.RawTensor("float16", (0, 3), b""),
        "steps": ckpt.RawTensor("int64", (), os.urandom(8), "cuda:0"),
        "optimizer": {
            "state": {0: {"step": ckpt.RawTensor("float32", (), os.urandom(4)), "exp_avg": F32}},
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": float("inf"), "params": [0, 1],
                              "amsgrad": False, "name": "dense", "foreach": None, "huge": 2**70}],
        },
    }


def saved(value: dict | None = None, key: bytes = KEY) -> bytes:
    buffer = io.BytesIO()
    ckpt.write_raw(buffer, state() if value is None else value, key)
    return buffer.getvalue()


def blocks(data: bytes) -> tuple[bytes, list[bytes]]:
    """The prefix and sealed header, and each tensor's ciphertext and tag,
    cut where the authenticated header says."""
    header_len = struct.unpack(">I", data[44:48])[0]
    head = data[:ckpt.PREFIX_LEN + header_len + ckpt.TAG_LEN]
    reader = ckpt.Reader(io.BytesIO(data), KEY)
    parts, at = [], len(head)
    for info in reader.tensors:
        parts.append(data[at:at + info.nbytes + ckpt.TAG_LEN])
        at += info.nbytes + ckpt.TAG_LEN
    return head, parts


def forged(header: object, body: bytes = b"", key: bytes = KEY) -> bytes:
    """A checkpoint whose header is `header` (JSON, or bytes as they are),
    sealed under `key`: what only a key holder can write."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    sealed, _ = ckpt.sealed_header(key, "aes-256-gcm", raw, os.urandom(16), os.urandom(16))
    return sealed + body


class CountingStream(io.BytesIO):
    """Records the most bytes any one read asked for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.largest_read = 0

    def read(self, size: int | None = -1) -> bytes:
        self.largest_read = max(self.largest_read, len(self.getbuffer()) if size is None or size < 0 else size)
        return super().read(size)


def test_round_trip_keeps_the_state_its_order_and_its_types(tmp_path):
    original = state()
    ckpt.write_raw(tmp_path / "ckpt", original, KEY)
    loaded = ckpt.read_raw(tmp_path / "ckpt", KEY)
    assert loaded == original and list(loaded) == list(original)
    groups = loaded["optimizer"]["param_groups"][0]
    assert isinstance(groups["betas"], tuple) and type(groups["lr"]) is float and groups["huge"] == 2**70
    assert list(loaded["optimizer"]["state"]) == [0]
    with open(tmp_path / "ckpt", "rb") as unseekable:
        assert ckpt.read_raw(io.BufferedReader(_Pipe(unseekable.read())), KEY) == original


class _Pipe(io.RawIOBase):
    """A stream that cannot seek, as a pipe or socket."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)


def test_nothing_is_written_in_plaintext_names_and_state_included():
    data = saved({"secret.layer.name": F32, "note": "hyperparameter 0.123456"})
    assert b"secret.layer.name" not in data and b"0.123456" not in data and bytes(range(24)) not in data


def test_a_pickle_is_never_unpickled(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    payload = pickle.dumps({"tensors": Exploit()})
    # Whatever unpickles would fail the test, and the marker would appear.
    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, _unpickling_forbidden)
    for data in (payload, ckpt.MAGIC + payload, b"PK\x03\x04" + payload):
        with pytest.raises((warpcrypt.FormatError, warpcrypt.InvalidTag)) as raised:
            ckpt.read_raw(io.BytesIO(data), KEY)
        assert "\n" not in str(raised.value)
    with pytest.raises(warpcrypt.FormatError, match="torch.save file .* refused unread"):
        ckpt.read_raw(io.BytesIO(payload), KEY)
    assert not marker.exists()
    assert ckpt.read_raw(io.BytesIO(saved()), KEY)["linear.bias"].shape == (2,)


def _unpickling_forbidden(*args, **kwargs):
    raise AssertionError("the checkpoint reader unpickled something")


def test_wrong_key_fails_on_the_header_and_names_no_key():
    with pytest.raises(warpcrypt.InvalidTag, match="header did not authenticate: wrong key") as raised:
        ckpt.read_raw(io.BytesIO(saved()), bytes(32))
    assert KEY.hex() not in str(raised.value) and bytes(32).hex() not in str(raised.value)
    # The AEAD the prefix names is not authenticated yet: another key length is a wrong key too.
    with pytest.raises(warpcrypt.InvalidTag, match="names aes-256-gcm, which takes a 32-byte key, not 16 bytes"):
        ckpt.read_raw(io.BytesIO(saved()), bytes(16))
    changed = bytearray(saved())
    changed[10] = 2
    with pytest.raises(warpcrypt.InvalidTag, match="names aes-192-gcm"):
        ckpt.read_raw(io.BytesIO(bytes(changed)), KEY)


def test_every_truncation_is_refused_before_any_tensor_is_released():
    data = saved()
    for length in range(len(data)):
        with pytest.raises((warpcrypt.FormatError, warpcrypt.InvalidTag)):
            ckpt.read_raw(io.BytesIO(data[:length]), KEY)
        with pytest.raises((warpcrypt.FormatError, warpcrypt.InvalidTag)):
            ckpt.read_raw(io.BufferedReader(_Pipe(data[:length])), KEY)


@pytest.mark.parametrize("extra", [b"\0", bytes(16), b"PK\x03\x04", "copy"])
def test_appended_bytes_are_refused(extra):
    data = saved()
    longer = data + (data if extra == "copy" else extra)
    with pytest.raises(warpcrypt.FormatError, match="extended"):
        ckpt.read_raw(io.BytesIO(longer), KEY)
    with pytest.raises(warpcrypt.FormatError, match="extended"):
        ckpt.read_raw(io.BufferedReader(_Pipe(longer)), KEY)


@pytest.mark.parametrize("change", ["swap", "duplicate", "drop", "drop-last", "repeat"])
def test_tensors_reordered_dropped_or_duplicated_are_refused(change):
    # Three tensors of one size, so that a swap keeps every length right.
    value = {name: ckpt.RawTensor("float32", (4,), os.urandom(16)) for name in ("a", "b", "c")}
    head, (a, b, c) = blocks(saved(value))
    body = {"swap": b + a + c, "duplicate": a + a + c, "drop": a + c, "drop-last": a + b,
            "repeat": a + b + c + c}[change]
    with pytest.raises((warpcrypt.InvalidTag, warpcrypt.FormatError)) as raised:
        ckpt.read_raw(io.BytesIO(head + body), KEY)
    # The first tensor out of its place is named.
    first_wrong = {"swap": "a", "duplicate": "b"}.get(change)
    if first_wrong:
        assert raised.type is warpcrypt.InvalidTag
        assert f"tensor {first_wrong!r} does not authenticate" in str(raised.value)


def test_a_header_or_tensor_from_another_checkpoint_is_refused():
    value = {"w": ckpt.RawTensor("float32", (4,), os.urandom(16))}
    first, second = saved(value), saved(value)
    head_1, (w_1,) = blocks(first)
    head_2, (w_2,) = blocks(second)
    # The same state, key and lengths, saved twice: neither part moves.
    with pytest.raises(warpcrypt.InvalidTag, match="tensor 'w' does not authenticate"):
        ckpt.read_raw(io.BytesIO(head_2 + w_1), KEY)
    with pytest.raises(warpcrypt.InvalidTag, match="tensor 'w' does not authenticate"):
        ckpt.read_raw(io.BytesIO(head_1 + w_2), KEY)
    # The salt, id or AEAD of the prefix changed: the header fails.
    for offset in (12, 30, 44 - 1):
        changed = bytearray(first)
        changed[offset] ^= 1
        with pytest.raises(warpcrypt.InvalidTag, match="header did not authenticate"):
            ckpt.read_raw(io.BytesIO(bytes(changed)), KEY)


def test_every_bit_of_a_checkpoint_is_authenticated():
    data = saved({"w": F32, "n": 3})
    for offset in range(len(data)):
        changed = bytearray(data)
        changed[offset] ^= 0x80
        with pytest.raises((warpcrypt.FormatError, warpcrypt.InvalidTag)):
            ckpt.read_raw(io.BytesIO(bytes(changed)), KEY)


@pytest.mark.parametrize("field, value, message", [
    ("magic", b"WCTORCH\1", "not a warpcrypt.torch checkpoint"),
    ("version", 1, "unsupported warpcrypt.torch checkpoint version 1"),
    ("version", 65535, "version 65535"),
    ("aead", 0, "unknown AEAD 0"),
    ("aead", 255, "unknown AEAD 255"),
    ("zero", 1, "flags 1"),
    ("length", ckpt.MAX_HEADER_LEN + 1, "over the limit"),
    ("length", 2**32 - 1, "over the limit"),
    ("length", ckpt.MAX_HEADER_LEN, "ends inside its header"),
])
def test_the_prefix_is_checked_before_more_is_read(field, value, message):
    """Only the 48-byte prefix is read before the header length is checked
    against its limit and the file's size."""
    fields = dict(zip(("magic", "version", "aead", "zero", "salt", "id", "length"),
                      struct.unpack(">8sHBB16s16sI", saved()[:48])))
    fields[field] = value
    data = struct.pack(">8sHBB16s16sI", *fields.values()) + bytes(100)
    stream = CountingStream(data)
    with pytest.raises(warpcrypt.FormatError, match=message):
        ckpt.read_raw(stream, KEY)
    assert stream.largest_read <= max(ckpt.PREFIX_LEN, 1 << 20)
    # On a stream of unknown size, a claimed length is read a step at a time.
    with pytest.raises(warpcrypt.FormatError, match=message):
        ckpt.read_raw(io.BufferedReader(_Pipe(data)), KEY)


def test_version_1_checkpoints_are_refused_unread():
    # What torch.save writes starts with a zip header; an old-style pickle with b"\x80".
    for start in (b"PK\x03\x04", b"\x80\x02"):
        with pytest.raises(warpcrypt.FormatError, match="version 1 checkpoint.*refused unread"):
            ckpt.read_raw(io.BytesIO(start + bytes(200)), KEY)


def _header(shape=(2, 3), dtype="float32", nbytes=24, device="cpu", name="w", state=None, **extra):
    entry = {"name": name, "dtype": dtype, "shape": list(shape), "device": device, "nbytes": nbytes, **extra}
    return {"tensors": [entry],
            "state": state if state is not None else {"dict": [["w", {"tensor": 0}]]}}


HOSTILE_HEADERS = {
    "huge shape": _header(shape=(2**40, 2**40), nbytes=2**82),
    "over the GCM limit": _header(shape=(2**34 + 1,), nbytes=2**36 + 4),
    "huge dimension beside a zero": _header(shape=(0, 2**62), nbytes=0),
    "negative dimension": _header(shape=(-2, -3), nbytes=24),
    "negative length": _header(shape=(0,), nbytes=-16),
    "length that does not match": _header(nbytes=2**40),
    "bool dimension": _header(shape=(True, 3), nbytes=12),
    "float dimension": _header(shape=(2.0, 3), nbytes=24),
    "too many dimensions": _header(shape=(1,) * 65, nbytes=4),
    "unknown dtype": _header(dtype="object"),
    "dtype by its torch name": _header(dtype="torch.float32"),
    "device": _header(device="cuda:0; rm -rf /"),
    "extra field": _header(offset=0),
    "name not its path": _header(name="v"),
    "tensor not in the state": _header(state={"dict": []}),
    "tensor twice": _header(state={"dict": [["w", {"tensor": 0}], ["v", {"tensor": 0}]]}),
    "tensor out of range": _header(state={"dict": [["w", {"tensor": 1}]]}),
    "duplicate key": {"tensors": [], "state": {"dict": [["a", 1], ["a", 2]]}},
    "float key": {"tensors": [], "state": {"dict": [[1.5, 1]]}},
    "unknown tag": {"tensors": [], "state": {"dict": [["a", {"set": [1]}]]}},
    "state not a dict": {"tensors": [], "state": [1, 2]},
    "missing table": {"state": {"dict": []}},
    "deep nesting": {"tensors": [], "state": {"dict": [["a", json.loads("[" * 70 + "]" * 70)]]}},
    "NaN constant": b'{"tensors": [], "state": {"dict": [["a", NaN]]}}',
    "not UTF-8": b'{"tensors": [], "state": {"dict": [["\xff", 1]]}}',
    "not JSON": b"\x80\x04K\x01.",
    "4,301-digit int": b'{"tensors": [], "state": {"dict": [["a", ' + b"9" * 4301 + b"]]}}",
    "JSON nested past the recursion limit": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("name", HOSTILE_HEADERS)
def test_hostile_authenticated_headers_are_refused_before_allocation(name):
    """A header that authenticates but lists what no save writes (only a key
    holder can make one) is refused, with one line, before any tensor's
    bytes are read or allocated."""
    data = forged(HOSTILE_HEADERS[name], body=bytes(40))
    tracemalloc.start()
    try:
        with pytest.raises(warpcrypt.FormatError) as raised:
            ckpt.read_raw(io.BytesIO(data), KEY)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 400
    assert peak < 8 * len(data) + (1 << 20), f"{peak} bytes allocated"


def test_lengths_are_checked_against_the_file_before_tensors_are_read():
    body = bytes(24 + ckpt.TAG_LEN)
    assert ckpt.Reader(io.BytesIO(forged(_header(), body)), KEY).tensors[0].nbytes == 24
    with pytest.raises(warpcrypt.FormatError, match="truncated .* 39 bytes follow its header, which lists 40"):
        ckpt.read_raw(io.BytesIO(forged(_header(), body[:-1])), KEY)
    # Within the limits but far beyond the file: refused before allocation.
    large = _header(shape=(2**30, 15), nbytes=2**30 * 60)
    tracemalloc.start()
    try:
        with pytest.raises(warpcrypt.FormatError, match="truncated"):
            ckpt.read_raw(io.BytesIO(forged(large, body)), KEY)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_save_refuses_what_it_cannot_store_before_writing(tmp_path):
    target = tmp_path / "ckpt"
    for bad in ({"w": object()}, {"w": {1.5: 2}}, {"w": {True: 2}}, {"w": b"bytes"}, {"w": {3, 4}}):
        with pytest.raises(TypeError, match="warpcrypt.torch stores"):
            ckpt.write_raw(target, bad, KEY)
    deep: list = []
    for _ in range(ckpt.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(warpcrypt.InvalidArgument, match="nests deeper"):
        ckpt.write_raw(target, {"deep": deep}, KEY)
    with pytest.raises(warpcrypt.InvalidArgument, match="cannot save it"):
        ckpt.write_raw(target, {"w": ckpt.RawTensor("float32", (0, 2**62), b"")}, KEY)
    with pytest.raises(warpcrypt.InvalidArgument, match="unknown checkpoint AEAD"):
        ckpt.write_raw(target, {"w": F32}, KEY, aead="aes-256-ctr")
    with pytest.raises(warpcrypt.InvalidKey):
        ckpt.write_raw(target, {"w": F32}, bytes(16))
    assert not target.exists()
    ckpt.write_raw(target, {"w": F32}, bytes(16), aead="aes-128-gcm")
    assert ckpt.read_raw(target, bytes(16)) == {"w": F32}
