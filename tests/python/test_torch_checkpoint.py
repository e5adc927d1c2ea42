"""warpcrypt.torch: checkpoints whose tensors are sealed on their own device.
Skipped without PyTorch; the CUDA cases also without a device. The format's
parsing and its attacks without PyTorch: test_torch_checkpoint_format.py."""

from __future__ import annotations

import io
import json
import os
import pickle

import pytest

import warpcrypt
from gpu_support import NO_DEVICE_REASON
from warpcrypt import _checkpoint

torch = pytest.importorskip("torch", reason="PyTorch is not installed: warpcrypt.torch tests skipped")
checkpoint = pytest.importorskip("warpcrypt.torch")

KEY = bytes(range(32))


def state(device: str) -> dict:
    generator = torch.Generator().manual_seed(0)
    return {
        "linear.weight": torch.randn(64, 32, generator=generator).to(device),
        "linear.bias": torch.randn(32, generator=generator).to(device),
        "norm.num_batches_tracked": torch.tensor(7, device=device),
        "strided": torch.arange(100, dtype=torch.float16).reshape(10, 10).t().to(device),
        "empty": torch.empty(0, 3, device=device),
        "mask": torch.tensor([True, False, True], device=device),
        "bf16": torch.randn(5, generator=generator).to(torch.bfloat16).to(device),
    }


def devices() -> list[str]:
    found = ["cpu"]
    if torch.cuda.is_available() and warpcrypt.devices():
        found.append("cuda")
    return found


def assert_same(loaded, original) -> None:
    assert list(loaded) == list(original)
    for name, tensor in original.items():
        assert loaded[name].device == tensor.device and loaded[name].dtype == tensor.dtype
        assert torch.equal(loaded[name], tensor), name


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_round_trip_on_each_device(device, tmp_path):
    if device not in devices():
        pytest.skip(NO_DEVICE_REASON)
    original = state(device)
    checkpoint.save(original, tmp_path / "ckpt.pt", key=KEY)
    assert_same(checkpoint.load(tmp_path / "ckpt.pt", key=KEY), original)


def test_no_plaintext_reaches_the_file(tmp_path):
    weight = torch.full((4096,), 1.2345, dtype=torch.float32)
    checkpoint.save({"w": weight}, tmp_path / "ckpt.pt", key=KEY)
    assert weight.numpy().tobytes()[:64] not in (tmp_path / "ckpt.pt").read_bytes()


def test_map_location_moves_each_tensor_before_it_is_opened(tmp_path):
    if "cuda" not in devices():
        pytest.skip(NO_DEVICE_REASON)
    checkpoint.save(state("cuda"), tmp_path / "ckpt.pt", key=KEY)
    loaded = checkpoint.load(tmp_path / "ckpt.pt", key=KEY, map_location="cpu")
    assert all(t.device.type == "cpu" for t in loaded.values())
    assert torch.equal(loaded["linear.weight"], state("cpu")["linear.weight"])
    loaded = checkpoint.load(tmp_path / "ckpt.pt", key=KEY, map_location={"cuda:0": "cpu"})
    assert all(t.device.type == "cpu" for t in loaded.values())


@pytest.mark.parametrize("map_location", ["cpu", torch.device("cpu"), {"cuda:0": "cpu"},
                                          lambda storage, location: storage])
def test_map_location_as_torch_load_takes_it(map_location, tmp_path):
    """A checkpoint saved on cuda:0, written here without a GPU through the
    format's own writer, opens where map_location says."""
    weight = torch.arange(6, dtype=torch.float32)
    _checkpoint.write_raw(tmp_path / "ckpt.pt", {"w": _checkpoint.RawTensor(
        "float32", (6,), weight.numpy().tobytes(), "cuda:0")}, KEY)
    loaded = checkpoint.load(tmp_path / "ckpt.pt", key=KEY, map_location=map_location)
    assert loaded["w"].device.type == "cpu" and torch.equal(loaded["w"], weight)
    if "cuda" not in devices():
        with pytest.raises(warpcrypt.InvalidArgument, match="saved on cuda:0 and no CUDA device .* map_location"):
            checkpoint.load(tmp_path / "ckpt.pt", key=KEY)
    with pytest.raises(warpcrypt.InvalidArgument, match="on meta"):
        checkpoint.load(tmp_path / "ckpt.pt", key=KEY, map_location="meta")


def test_wrong_key_and_tampering(tmp_path):
    checkpoint.save(state("cpu"), tmp_path / "ckpt.pt", key=KEY)
    with pytest.raises(warpcrypt.InvalidTag, match="header did not authenticate: wrong key"):
        checkpoint.load(tmp_path / "ckpt.pt", key=bytes(32))
    data = bytearray((tmp_path / "ckpt.pt").read_bytes())
    data[-20] ^= 1  # in the last tensor's ciphertext
    with pytest.raises(warpcrypt.InvalidTag, match="tensor 'bf16' does not authenticate"):
        checkpoint.load(io.BytesIO(bytes(data)), key=KEY)


def test_optimizer_state_round_trip(tmp_path):
    """Non-tensor state lives in the authenticated header: an optimizer's
    state_dict (int keys, floats, tuples, tensors nested) comes back whole."""
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95))
    model(torch.randn(2, 8)).sum().backward()
    optimizer.step()
    saved = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3, "loss": float("nan")}
    checkpoint.save(saved, tmp_path / "ckpt.pt", key=KEY)
    loaded = checkpoint.load(tmp_path / "ckpt.pt", key=KEY)
    assert loaded["epoch"] == 3 and loaded["loss"] != loaded["loss"]
    assert loaded["optimizer"]["param_groups"] == saved["optimizer"]["param_groups"]
    restored = torch.optim.AdamW(torch.nn.Linear(8, 4).parameters())
    restored.load_state_dict(loaded["optimizer"])
    for index, values in saved["optimizer"]["state"].items():
        assert all(torch.equal(loaded["optimizer"]["state"][index][k], v) for k, v in values.items())
    torch.nn.Linear(8, 4).load_state_dict(loaded["model"])


def test_conjugate_and_negative_views_keep_their_values(tmp_path):
    values = torch.tensor([1 + 2j, 3 - 4j])
    saved = {"conj": values.conj(), "neg": torch._neg_view(values)}
    checkpoint.save(saved, tmp_path / "ckpt.pt", key=KEY)
    loaded = checkpoint.load(tmp_path / "ckpt.pt", key=KEY)
    assert torch.equal(loaded["conj"], values.conj()) and torch.equal(loaded["neg"], -values)


def test_a_malicious_pickle_is_never_unpickled(tmp_path, monkeypatch):
    """Issue 34: version 1 handed the file to torch.load before any tag was
    checked. With weights_only bypassed, as before torch 2.6
    (CVE-2025-32434), a pickle's __reduce__ ran; now nothing unpickles."""
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    torch.save({"format": checkpoint.FORMAT, "version": 1, "tensors": Exploit()}, tmp_path / "evil.pt")
    unsafe_load = torch.load
    monkeypatch.setattr(torch, "load", lambda *args, **kwargs: unsafe_load(*args, **{**kwargs, "weights_only": False}))
    with pytest.raises(warpcrypt.FormatError, match="refused unread"):
        checkpoint.load(tmp_path / "evil.pt", key=KEY)
    assert not marker.exists()


def test_loading_calls_neither_torch_load_nor_pickle(tmp_path, monkeypatch):
    checkpoint.save(state("cpu"), tmp_path / "ckpt.pt", key=KEY)
    for module, name in ((torch, "load"), (pickle, "load"), (pickle, "loads"), (pickle, "Unpickler")):
        monkeypatch.setattr(module, name, _forbidden)
    assert_same(checkpoint.load(tmp_path / "ckpt.pt", key=KEY), state("cpu"))


def _forbidden(*args, **kwargs):
    raise AssertionError("the checkpoint loader unpickled")


def guard_allocations(monkeypatch) -> None:
    """torch.empty refuses more than a MiB: nothing here needs more."""
    empty = torch.empty

    def small_empty(*size, **kwargs):
        shape = size[0] if len(size) == 1 and isinstance(size[0], (list, tuple, torch.Size)) else size
        assert torch.Size(shape).numel() < 1 << 20, f"torch.empty({list(shape)}) from an unauthenticated size"
        return empty(*size, **kwargs)

    monkeypatch.setattr(torch, "empty", small_empty)


def test_huge_shapes_allocate_nothing(tmp_path, monkeypatch):
    # Version 1's layout with a shape of 2**50 elements and 4 bytes of ciphertext.
    torch.save({"format": checkpoint.FORMAT, "version": 1, "aead": "aes-256-gcm",
                "salt": torch.zeros(16, dtype=torch.uint8),
                "tensors": {"w": {"dtype": "float32", "shape": [2**20, 2**20, 2**10],
                                  "ciphertext": torch.zeros(4, dtype=torch.uint8),
                                  "tag": torch.zeros(16, dtype=torch.uint8)}}}, tmp_path / "huge.pt")
    guard_allocations(monkeypatch)
    with pytest.raises(warpcrypt.FormatError):
        checkpoint.load(tmp_path / "huge.pt", key=KEY)
    # Version 2's header is sealed: its shape changes only with the key, and
    # then is refused for what it is before anything is allocated.
    header = {"tensors": [{"name": "w", "dtype": "float32", "shape": [2**20, 2**20, 2**10], "device": "cpu",
                           "nbytes": 2**52}], "state": {"dict": [["w", {"tensor": 0}]]}}
    sealed, _ = _checkpoint.sealed_header(KEY, "aes-256-gcm", json.dumps(header).encode(), os.urandom(16),
                                          os.urandom(16))
    with pytest.raises(warpcrypt.FormatError, match="over 68719476704 bytes"):
        checkpoint.load(io.BytesIO(sealed + bytes(20)), key=KEY)
    header["tensors"][0].update(shape=[2**20, 2**10], nbytes=2**32)
    sealed, _ = _checkpoint.sealed_header(KEY, "aes-256-gcm", json.dumps(header).encode(), os.urandom(16),
                                          os.urandom(16))
    with pytest.raises(warpcrypt.FormatError, match="truncated"):
        checkpoint.load(io.BytesIO(sealed + bytes(20)), key=KEY)


def loader(source: str, tmp_path):
    """Loads bytes as a file at a path (the pinned, parallel loader) or as a
    stream (read in order)."""
    def load(data: bytes, **kwargs):
        if source == "stream":
            return checkpoint.load(io.BytesIO(data), key=KEY, **kwargs)
        (tmp_path / "loaded.pt").write_bytes(data)
        return checkpoint.load(tmp_path / "loaded.pt", key=KEY, **kwargs)
    return load


SOURCES = ["path", "stream"]


@pytest.mark.parametrize("source", SOURCES)
def test_truncated_extended_and_reordered_files_are_refused(tmp_path, source):
    load = loader(source, tmp_path)
    checkpoint.save(state("cpu"), tmp_path / "ckpt.pt", key=KEY)
    data = (tmp_path / "ckpt.pt").read_bytes()
    for bad in (data[:-1], data[:len(data) // 2], data[:100], data + b"\0", data + data):
        with pytest.raises(warpcrypt.FormatError):
            load(bad)
    # Two tensors of one size, so that swapping them keeps every length.
    same = {"a": torch.randn(8), "b": torch.randn(8)}
    checkpoint.save(same, tmp_path / "two.pt", key=KEY)
    data = (tmp_path / "two.pt").read_bytes()
    block = 8 * 4 + _checkpoint.TAG_LEN
    head, a, b = data[:-2 * block], data[-2 * block:-block], data[-block:]
    with pytest.raises(warpcrypt.InvalidTag, match="tensor 'a' does not authenticate"):
        load(head + b + a)


def tensor_bytes(data: bytes) -> dict[str, tuple[int, int]]:
    """Each tensor's ciphertext as [start, end) of the file; its tag follows."""
    reader = _checkpoint.Reader(io.BytesIO(data), KEY)
    return {info.name: (reader.body_start + offset, reader.body_start + offset + info.nbytes)
            for info, offset in zip(reader.tensors, _checkpoint.body_offsets(reader.tensors))}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("source", SOURCES)
def test_a_changed_tensor_or_tag_is_named_and_nothing_is_returned(tmp_path, source, device):
    if device not in devices():
        pytest.skip(NO_DEVICE_REASON)
    load = loader(source, tmp_path)
    checkpoint.save(state("cpu"), tmp_path / "ckpt.pt", key=KEY)
    data = (tmp_path / "ckpt.pt").read_bytes()
    places = tensor_bytes(data)
    for name, at in (("linear.weight", places["linear.weight"][0] + 100), ("bf16", places["bf16"][1]),
                     ("empty", places["empty"][1] + 3)):  # a ciphertext byte, a tag's first byte, an empty one's tag
        bad = bytearray(data)
        bad[at] ^= 1
        with pytest.raises(warpcrypt.InvalidTag, match=f"tensor {name!r} does not authenticate"):
            load(bytes(bad), map_location=device)


def test_a_path_and_a_stream_write_and_read_one_format(tmp_path):
    checkpoint.save(state("cpu"), tmp_path / "by-path.pt", key=KEY)
    stream = io.BytesIO()
    checkpoint.save(state("cpu"), stream, key=KEY)
    (tmp_path / "by-stream.pt").write_bytes(stream.getvalue())
    assert len(stream.getvalue()) == os.path.getsize(tmp_path / "by-path.pt")
    assert_same(checkpoint.load(io.BytesIO((tmp_path / "by-path.pt").read_bytes()), key=KEY), state("cpu"))
    assert_same(checkpoint.load(tmp_path / "by-stream.pt", key=KEY), state("cpu"))


def test_inside_a_sealed_file_and_bad_arguments(tmp_path):
    with warpcrypt.SealedWriter(tmp_path / "ckpt.sealed", key=KEY) as writer:
        checkpoint.save(state("cpu"), writer, key=KEY)
    with warpcrypt.SealedReader(tmp_path / "ckpt.sealed", key=KEY) as reader:
        assert_same(checkpoint.load(reader, key=KEY), state("cpu"))
    with pytest.raises(warpcrypt.InvalidKey):
        checkpoint.save(state("cpu"), tmp_path / "x.pt", key=bytes(16))
    with pytest.raises(TypeError, match="step is a device: warpcrypt.torch stores"):
        checkpoint.save({"step": torch.device("cpu")}, tmp_path / "x.pt", key=KEY)
    with pytest.raises(TypeError, match="on meta"):
        checkpoint.save({"m": torch.empty(2, device="meta")}, tmp_path / "x.pt", key=KEY)
    with pytest.raises(TypeError, match="sparse"):
        checkpoint.save({"s": torch.eye(2).to_sparse()}, tmp_path / "x.pt", key=KEY)
    assert not (tmp_path / "x.pt").exists()
    torch.save({"plain": torch.zeros(2)}, tmp_path / "plain.pt")
    with pytest.raises(warpcrypt.FormatError, match="torch.save file"):
        checkpoint.load(tmp_path / "plain.pt", key=KEY)
