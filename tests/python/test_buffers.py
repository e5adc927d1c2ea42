"""What the package accepts as data and as out=, and how it refuses the rest:
every kind of host buffer, DLPack exports, non-contiguous and read-only
buffers, empty inputs, sizes past what memory can hold, and GPU-looking
arrays where host memory is needed. No GPU is needed."""

from __future__ import annotations

import pytest

import warpcrypt
from warpcrypt import algorithms, modes

np = pytest.importorskip("numpy", reason="NumPy is not installed: buffer tests skipped")

KEY, IV = bytes(range(32)), bytes(range(16))
NAME = "aes-256-ctr"


def expected(data: bytes, name: str = NAME) -> bytes:
    return warpcrypt.encrypt(name, KEY[: warpcrypt.cipher_info(name).key_size], IV, data)


class DLPackOnly:
    """An array that speaks only DLPack, as a JAX or PyTorch CPU array does."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class PreDLPack1(DLPackOnly):
    """A producer from before DLPack 1.0: no max_version, unversioned capsules."""

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__(stream=stream)


class FakeDeviceArray:
    """A __cuda_array_interface__ with the given fields, pointing nowhere: the
    checks under test run before any device is asked about the pointer."""

    def __init__(self, **fields):
        self.__cuda_array_interface__ = {
            "version": 3, "typestr": "|u1", "shape": (64,), "strides": None,
            "data": (0x7F0000000000, False), **fields}


def plaintext(n: int = 100) -> bytes:
    return bytes((7 * i + 3) % 256 for i in range(n))


@pytest.mark.parametrize("make", [
    bytes, bytearray, memoryview,
    lambda b: memoryview(bytearray(b)),
    lambda b: np.frombuffer(b, dtype=np.uint8),
    lambda b: np.frombuffer(b, dtype=np.float64).reshape(4, 5),
    lambda b: DLPackOnly(np.frombuffer(b, dtype=np.uint8)),
    lambda b: PreDLPack1(np.frombuffer(bytearray(b), dtype=np.uint8)),  # unversioned: no read-only flag
], ids=["bytes", "bytearray", "memoryview", "memoryview-bytearray", "numpy-u8", "numpy-f8-2d", "dlpack",
        "dlpack-pre-1.0"])
def test_every_input_kind_encrypts_its_bytes(make):
    data = plaintext(160)
    assert warpcrypt.encrypt(NAME, KEY, IV, make(data)) == expected(data)


@pytest.mark.parametrize("make", [
    bytearray,
    lambda n: memoryview(bytearray(n)),
    lambda n: np.zeros(n, dtype=np.uint8),
    lambda n: np.zeros(n // 4, dtype=np.float32),
    lambda n: DLPackOnly(np.zeros(n, dtype=np.uint8)),
    lambda n: PreDLPack1(np.zeros(n, dtype=np.uint8)),
], ids=["bytearray", "memoryview", "numpy-u8", "numpy-f4", "dlpack", "dlpack-pre-1.0"])
def test_every_out_kind_receives_the_result(make):
    data = plaintext(160)
    out = make(len(data))
    assert warpcrypt.encrypt(NAME, KEY, IV, data, out=out) == len(data)
    target = out._array if isinstance(out, DLPackOnly) else out
    assert bytes(memoryview(target).cast("B")) == expected(data)


@pytest.mark.parametrize("make", [
    bytearray,
    lambda b: np.frombuffer(bytearray(b), dtype=np.uint32),
    lambda b: DLPackOnly(np.frombuffer(bytearray(b), dtype=np.uint8)),
], ids=["bytearray", "numpy", "dlpack"])
def test_in_place_round_trip(make):
    data = plaintext(256)
    buffer = make(data)
    assert warpcrypt.encrypt(NAME, KEY, IV, buffer, out=buffer) == len(data)
    target = buffer._array if isinstance(buffer, DLPackOnly) else buffer
    assert bytes(memoryview(target).cast("B")) == expected(data)
    warpcrypt.decrypt(NAME, KEY, IV, buffer, out=buffer)
    assert bytes(memoryview(target).cast("B")) == data


def test_padded_encryption_in_place_uses_room_after_the_data():
    data = plaintext(40)
    buffer = bytearray(data) + bytearray(8)
    assert warpcrypt.encrypt("aes-128-cbc", KEY[:16], IV, memoryview(buffer)[:40], out=buffer) == 48
    assert bytes(buffer) == warpcrypt.encrypt("aes-128-cbc", KEY[:16], IV, data)


def test_partly_overlapping_host_buffers_are_refused():
    buffer = bytearray(64)
    with pytest.raises(warpcrypt.InvalidArgument):
        warpcrypt.encrypt(NAME, KEY, IV, memoryview(buffer)[:32], out=memoryview(buffer)[8:48])


STRIDED = {
    "numpy-step": lambda: np.arange(64, dtype=np.uint8)[::2],
    "numpy-fortran": lambda: np.asfortranarray(np.arange(64, dtype=np.uint8).reshape(8, 8)),
    "numpy-transposed": lambda: np.arange(64, dtype=np.uint32).reshape(8, 8).T,
    "memoryview-step": lambda: memoryview(bytearray(64))[::2],
    "dlpack-step": lambda: DLPackOnly(np.arange(64, dtype=np.uint8)[::2]),
    "cuda-array-interface": lambda: FakeDeviceArray(shape=(32,), strides=(2,)),
}


@pytest.mark.parametrize("make", STRIDED.values(), ids=STRIDED.keys())
def test_non_contiguous_arrays_are_refused_clearly(make):
    array = make()
    with pytest.raises(warpcrypt.InvalidArgument, match="not C-contiguous"):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)


def _read_only(array):
    array.flags.writeable = False
    return array


READ_ONLY = {
    "bytes": lambda: bytes(16),
    "memoryview-bytes": lambda: memoryview(bytes(16)),
    "numpy": lambda: _read_only(np.zeros(16, dtype=np.uint8)),
    "dlpack": lambda: DLPackOnly(_read_only(np.zeros(16, dtype=np.uint8))),
    "cuda-array-interface": lambda: FakeDeviceArray(shape=(16,), data=(0x7F0000000000, True)),
}


@pytest.mark.parametrize("make", READ_ONLY.values(), ids=READ_ONLY.keys())
def test_read_only_buffers_are_refused_for_output(make):
    buffer = make()
    with pytest.raises(warpcrypt.InvalidArgument, match="read-only"):
        warpcrypt.encrypt(NAME, KEY, IV, buffer, out=buffer)


def test_read_only_input_is_fine():
    data = plaintext(32)
    out = bytearray(32)
    warpcrypt.encrypt(NAME, KEY, IV, _read_only(np.frombuffer(data, dtype=np.uint8).copy()), out=out)
    assert bytes(out) == expected(data)


@pytest.mark.parametrize("name", [c.name for c in warpcrypt.ciphers()])
def test_empty_input_works_for_every_cipher(name):
    info = warpcrypt.cipher_info(name)
    key, iv = bytes(info.key_size), bytes(info.iv_size)
    ciphertext = warpcrypt.encrypt(name, key, iv, b"")
    # PKCS#7 always adds a block, so an empty message encrypts to one.
    assert len(ciphertext) == (16 if info.padded else 0)
    assert warpcrypt.decrypt(name, key, iv, ciphertext) == b""
    assert warpcrypt.encrypt(name, key, iv, np.empty(0, dtype=np.uint8)) == ciphertext
    assert warpcrypt.encrypt(name, key, iv, b"", out=bytearray(16)) == len(ciphertext)
    encryptor = warpcrypt.Cipher(*_algorithm_and_mode(name, key, iv)).encryptor()
    assert encryptor.update(b"") == b""
    assert encryptor.finalize() == ciphertext


def _algorithm_and_mode(name, key, iv):
    if name == "chacha20":
        return algorithms.ChaCha20(key, iv), None
    if name.startswith("salsa20"):
        return algorithms.Salsa20(key, iv), None
    mode = getattr(modes, name.rsplit("-", 1)[1].upper())
    return algorithms.AES(key), mode() if mode is modes.ECB else mode(iv)


@pytest.mark.parametrize("shape, message", [
    ((1 << 40, 1 << 40), "too large"),
    ((1 << 62, 4), "too large"),
    ((1 << 64,), "64-bit"),
    ((-1,), "negative"),
], ids=["2**80-bytes", "2**64-bytes", "extent-past-int64", "negative"])
def test_sizes_past_any_memory_are_refused(shape, message):
    array = FakeDeviceArray(shape=shape)
    with pytest.raises(warpcrypt.InvalidArgument, match=message):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)


def test_too_small_outputs_say_how_much_is_needed():
    with pytest.raises(warpcrypt.OutputTooSmall, match="needs 48"):
        warpcrypt.encrypt("aes-128-cbc", KEY[:16], IV, plaintext(40), out=bytearray(47))
    encryptor = warpcrypt.Cipher(algorithms.AES(KEY), modes.CTR(IV)).encryptor()
    with pytest.raises(warpcrypt.OutputTooSmall):
        encryptor.update_into(plaintext(32), bytearray(31))
    # Refused before any work: the context goes on as if the call never happened.
    assert encryptor.update(plaintext(32)) + encryptor.finalize() == expected(plaintext(32))


def test_gpu_arrays_are_refused_where_host_memory_is_needed():
    array = FakeDeviceArray()
    with pytest.raises(warpcrypt.InvalidArgument, match="GPU memory"):
        warpcrypt.encrypt(NAME, KEY, IV, array)
    encryptor = warpcrypt.Cipher(algorithms.AES(KEY), modes.CTR(IV)).encryptor()
    with pytest.raises(warpcrypt.InvalidArgument, match="GPU memory"):
        encryptor.update(array)


def test_masked_cuda_arrays_are_refused():
    array = FakeDeviceArray(mask=object())
    with pytest.raises(warpcrypt.InvalidArgument, match="mask"):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)


def test_cuda_array_without_a_device(require_no_device):
    array = FakeDeviceArray()
    with pytest.raises(warpcrypt.NoDevice):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)


class ElsewhereDevice(DLPackOnly):
    def __dlpack_device__(self):
        return (14, 0)  # kDLOneAPI


def test_arrays_on_other_devices_are_refused():
    array = ElsewhereDevice(np.zeros(16, dtype=np.uint8))
    with pytest.raises(warpcrypt.InvalidArgument, match="cannot reach"):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)


@pytest.mark.parametrize("argument", ["data", "key", "iv", "out"])
def test_objects_that_are_not_buffers_raise_type_error(argument):
    call = {"data": plaintext(16), "key": KEY, "iv": IV, "out": bytearray(16)}
    call[argument] = "not bytes" if argument != "out" else 12345
    with pytest.raises(TypeError, match=argument):
        warpcrypt.encrypt(NAME, call["key"], call["iv"], call["data"], out=call["out"])


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    data = plaintext(64)
    tensor = torch.frombuffer(bytearray(data), dtype=torch.float32)
    assert warpcrypt.encrypt(NAME, KEY, IV, tensor) == expected(data)
    warpcrypt.encrypt(NAME, KEY, IV, tensor, out=tensor)
    assert tensor.numpy().tobytes() == expected(data)
    # Read from, not written to: a tensor that requires grad is fine as data.
    assert warpcrypt.encrypt(NAME, KEY, IV, torch.zeros(16, requires_grad=True)) == expected(bytes(64))


def test_torch_tensors_that_cannot_be_written_as_bytes_are_refused():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    refused = {
        "requires grad": torch.zeros(16, requires_grad=True),
        "not C-contiguous": torch.zeros(8, 8).t(),
        "conjugate": torch.zeros(4, dtype=torch.complex64).conj(),
        "cannot reach": torch.zeros(16, device="meta"),
    }
    for message, tensor in refused.items():
        with pytest.raises(warpcrypt.InvalidArgument, match=message):
            warpcrypt.encrypt(NAME, KEY, IV, tensor, out=tensor)
