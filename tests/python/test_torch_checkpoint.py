"""warpcrypt.torch: checkpoints whose tensors are sealed on their own device.
Skipped without PyTorch; the CUDA cases also without a device."""

from __future__ import annotations

import io

import pytest

import warpcrypt
from gpu_support import NO_DEVICE_REASON

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
    }


def devices() -> list[str]:
    found = ["cpu"]
    if torch.cuda.is_available() and warpcrypt.devices():
        found.append("cuda")
    return found


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_round_trip_on_each_device(device, tmp_path):
    if device not in devices():
        pytest.skip(NO_DEVICE_REASON)
    original = state(device)
    checkpoint.save(original, tmp_path / "ckpt.pt", key=KEY)
    loaded = checkpoint.load(tmp_path / "ckpt.pt", key=KEY)
    assert list(loaded) == list(original)
    for name, tensor in original.items():
        assert loaded[name].device == tensor.device and loaded[name].dtype == tensor.dtype
        assert torch.equal(loaded[name], tensor), name


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


def test_wrong_key_and_tampering_name_the_tensor(tmp_path):
    checkpoint.save(state("cpu"), tmp_path / "ckpt.pt", key=KEY)
    with pytest.raises(warpcrypt.InvalidTag, match="'linear.weight'"):
        checkpoint.load(tmp_path / "ckpt.pt", key=bytes(32))
    saved = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    saved["tensors"]["linear.bias"]["ciphertext"][3] ^= 1
    torch.save(saved, tmp_path / "bad.pt")
    with pytest.raises(warpcrypt.InvalidTag, match="'linear.bias'"):
        checkpoint.load(tmp_path / "bad.pt", key=KEY)


@pytest.mark.parametrize("change", ["rename", "swap", "drop"])
def test_tensors_are_bound_to_their_name_and_position(change, tmp_path):
    checkpoint.save(state("cpu"), tmp_path / "ckpt.pt", key=KEY)
    saved = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    tensors = saved["tensors"]
    if change == "rename":
        tensors["linear.weight2"] = tensors.pop("linear.weight")
    elif change == "swap":
        tensors["linear.weight"], tensors["linear.bias"] = tensors["linear.bias"], tensors["linear.weight"]
    else:
        del tensors["mask"]
    torch.save(saved, tmp_path / "changed.pt")
    with pytest.raises((warpcrypt.InvalidTag, warpcrypt.FormatError)):
        checkpoint.load(tmp_path / "changed.pt", key=KEY)


def test_inside_a_sealed_file_and_bad_arguments(tmp_path):
    with warpcrypt.SealedWriter(tmp_path / "ckpt.sealed", key=KEY) as writer:
        checkpoint.save(state("cpu"), writer, key=KEY)
    with warpcrypt.SealedReader(tmp_path / "ckpt.sealed", key=KEY) as reader:
        loaded = checkpoint.load(io.BytesIO(reader.read()), key=KEY)
    assert torch.equal(loaded["strided"], state("cpu")["strided"])
    with pytest.raises(warpcrypt.InvalidKey):
        checkpoint.save(state("cpu"), tmp_path / "x.pt", key=bytes(16))
    with pytest.raises(TypeError, match="not a tensor"):
        checkpoint.save({"step": 3}, tmp_path / "x.pt", key=KEY)
    torch.save({"plain": torch.zeros(2)}, tmp_path / "plain.pt")
    with pytest.raises(warpcrypt.FormatError):
        checkpoint.load(tmp_path / "plain.pt", key=KEY)
