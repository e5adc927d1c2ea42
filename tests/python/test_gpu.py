"""GPU arrays, zero-copy: CuPy arrays and PyTorch CUDA tensors encrypted in
place and into out=, on the caller's current stream or an explicit one, equal
to the CPU's result. Skips without a CUDA device, and per framework without
CuPy or PyTorch."""

from __future__ import annotations

import random

import pytest

import warpcrypt
from gpu_support import NO_DEVICE_REASON

np = pytest.importorskip("numpy", reason="NumPy is not installed: GPU tests skipped")

KEY, IV = bytes(range(32)), bytes(range(16))
NAME = "aes-256-ctr"
# Enough GPU clock cycles to hold a stream up for a tenth of a second or more.
SPIN_CYCLES = 300_000_000


class Torch:
    def __init__(self):
        self.torch = pytest.importorskip("torch", reason="PyTorch is not installed: its GPU tests skipped")
        if not self.torch.cuda.is_available():
            pytest.skip("PyTorch sees no CUDA device")

    def array(self, data: bytes, dtype=None):
        host = self.torch.frombuffer(bytearray(data), dtype=self.torch.uint8) if data else self.torch.empty(
            0, dtype=self.torch.uint8)
        return (host if dtype is None else host.view(getattr(self.torch, dtype))).cuda()

    def empty(self, size: int):
        return self.torch.empty(size, dtype=self.torch.uint8, device="cuda")

    def to_bytes(self, array) -> bytes:
        return array.reshape(-1).view(self.torch.uint8).cpu().numpy().tobytes()

    def new_stream(self):
        return self.torch.cuda.Stream()

    def current(self, stream):
        return self.torch.cuda.stream(stream)

    def spin(self, stream):
        with self.torch.cuda.stream(stream):
            self.torch.cuda._sleep(SPIN_CYCLES)

    def read_elsewhere(self, array) -> bytes:
        """The array's bytes, copied on a stream of its own."""
        with self.torch.cuda.stream(self.torch.cuda.Stream()):
            return self.to_bytes(array)

    def strided(self, size: int):
        return self.empty(2 * size)[::2]


class CuPy:
    def __init__(self):
        self.cupy = pytest.importorskip("cupy", reason="CuPy is not installed: its GPU tests skipped")
        self._spin = self.cupy.RawKernel(
            r'extern "C" __global__ void spin(long long cycles) {'
            r'  long long start = clock64(); while (clock64() - start < cycles) {} }', "spin")

    def array(self, data: bytes, dtype=None):
        host = np.frombuffer(data, dtype=np.uint8)
        return self.cupy.asarray(host if dtype is None else host.view(dtype))

    def empty(self, size: int):
        return self.cupy.empty(size, dtype=self.cupy.uint8)

    def to_bytes(self, array) -> bytes:
        return self.cupy.asnumpy(array).tobytes()

    def new_stream(self):
        return self.cupy.cuda.Stream(non_blocking=True)

    def current(self, stream):
        return stream

    def spin(self, stream):
        self._spin((1,), (1,), (np.int64(SPIN_CYCLES),), stream=stream)

    def read_elsewhere(self, array) -> bytes:
        stream = self.cupy.cuda.Stream(non_blocking=True)
        return self.cupy.asnumpy(array, stream=stream).tobytes()

    def strided(self, size: int):
        return self.empty(2 * size)[::2]


@pytest.fixture(params=["torch", "cupy"])
def gpu(request, has_device):
    if not has_device:
        pytest.skip(NO_DEVICE_REASON)
    return Torch() if request.param == "torch" else CuPy()


def stream_done(stream) -> bool:
    return stream.query() if hasattr(stream, "query") else stream.done


def cpu(name: str, data: bytes, encrypting: bool = True, iv: bytes = IV) -> bytes:
    info = warpcrypt.cipher_info(name)
    call = warpcrypt.encrypt if encrypting else warpcrypt.decrypt
    return call(name, KEY[: info.key_size], iv[: info.iv_size], data, padding=False, backend="cpu")


def key_iv(name: str) -> tuple[bytes, bytes]:
    info = warpcrypt.cipher_info(name)
    return KEY[: info.key_size], IV[: info.iv_size]


BOTH_WAYS = ["aes-128-ecb", "aes-256-ecb", "aes-128-ctr", "aes-256-ctr", "chacha20", "salsa20", "salsa20-128"]
DECRYPT_ONLY = ["aes-256-cbc", "aes-128-cfb"]
SIZES = [0, 16, 4096, (1 << 20) + 16 * 7 + 5]


def sized_for(name: str, size: int) -> int:
    return size - size % 16 if name.endswith(("-ecb", "-cbc", "-cfb")) else size


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", BOTH_WAYS)
def test_in_place_and_into_out_equal_the_cpu(gpu, name, size):
    size = sized_for(name, size)
    data = random.Random(f"{name}{size}").randbytes(size)
    key, iv = key_iv(name)

    array = gpu.array(data)
    assert warpcrypt.encrypt(name, key, iv, array, out=array, padding=False) == size
    assert gpu.to_bytes(array) == cpu(name, data)

    source, out = gpu.array(data), gpu.empty(size)
    warpcrypt.encrypt(name, key, iv, source, out=out, padding=False)
    assert gpu.to_bytes(out) == cpu(name, data)
    assert gpu.to_bytes(source) == data

    warpcrypt.decrypt(name, key, iv, array, out=array, padding=False)
    assert gpu.to_bytes(array) == data


@pytest.mark.parametrize("name", DECRYPT_ONLY)
def test_cbc_and_cfb_decrypt_on_the_gpu(gpu, name):
    data = random.Random(name).randbytes(1 << 20)
    key, iv = key_iv(name)
    array = gpu.array(cpu(name, data))
    warpcrypt.decrypt(name, key, iv, array, out=array, padding=False)
    assert gpu.to_bytes(array) == data
    with pytest.raises(warpcrypt.BackendUnavailable):
        warpcrypt.encrypt(name, key, iv, array, out=array, padding=False)


def test_any_dtype_is_encrypted_as_its_bytes(gpu):
    data = random.Random("dtype").randbytes(4000)
    array = gpu.array(data, dtype="float32")
    warpcrypt.encrypt(NAME, KEY, IV, array, out=array)
    assert gpu.to_bytes(array) == cpu(NAME, data)


def test_64_mib_in_place(gpu):
    data = np.random.default_rng(64).integers(0, 256, 64 << 20, dtype=np.uint8).tobytes()
    array = gpu.array(data)
    warpcrypt.encrypt(NAME, KEY, IV, array, out=array)
    assert gpu.to_bytes(array) == cpu(NAME, data)


def test_pieces_at_stream_offsets_equal_the_whole(gpu):
    data = random.Random("pieces").randbytes(100_003)
    whole = cpu(NAME, data)
    array = gpu.array(data)
    cut = 12_345  # not a block boundary: CTR resumes mid-block
    warpcrypt.encrypt(NAME, KEY, IV, array[:cut], out=array[:cut])
    warpcrypt.encrypt(NAME, KEY, IV, array[cut:], out=array[cut:], stream_offset=cut)
    assert gpu.to_bytes(array) == whole


def test_cbc_pieces_chain_through_the_iv(gpu):
    data = random.Random("cbc").randbytes(16 * 1000)
    ciphertext = cpu("aes-256-cbc", data)
    array = gpu.array(ciphertext)
    cut = 16 * 377
    warpcrypt.decrypt("aes-256-cbc", KEY, IV, array[:cut], out=array[:cut], padding=False)
    warpcrypt.decrypt("aes-256-cbc", KEY, ciphertext[cut - 16:cut], array[cut:], out=array[cut:], padding=False,
                      stream_offset=cut)
    assert gpu.to_bytes(array) == data


def test_work_is_queued_on_the_callers_current_stream(gpu):
    data = random.Random("stream").randbytes(1 << 20)
    array = gpu.array(data)
    stream = gpu.new_stream()
    gpu.spin(stream)
    with gpu.current(stream):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)
    # Queued behind the spin: the call returned at once, and a copy on another
    # stream still sees the plaintext.
    assert not stream_done(stream)
    assert gpu.read_elsewhere(array) == data
    stream.synchronize()
    assert gpu.to_bytes(array) == cpu(NAME, data)


def test_work_is_queued_on_an_explicit_stream(gpu):
    data = random.Random("explicit").randbytes(1 << 20)
    array = gpu.array(data)
    stream = gpu.new_stream()
    gpu.spin(stream)
    warpcrypt.encrypt(NAME, KEY, IV, array, out=array, stream=stream)
    assert not stream_done(stream)
    assert gpu.read_elsewhere(array) == data
    stream.synchronize()
    assert gpu.to_bytes(array) == cpu(NAME, data)


class CudaArrayInterfaceOnly:
    """An array that speaks only __cuda_array_interface__, as Numba's do."""

    def __init__(self, array):
        self.__cuda_array_interface__ = array.__cuda_array_interface__


def test_cuda_array_interface(gpu):
    data = random.Random("cai").randbytes(50_000)
    array = gpu.array(data)
    view = CudaArrayInterfaceOnly(array)
    warpcrypt.encrypt(NAME, KEY, IV, view, out=view)
    assert gpu.to_bytes(array) == cpu(NAME, data)


def test_gpu_misuse_is_refused_clearly(gpu):
    array = gpu.array(bytes(64))
    with pytest.raises(warpcrypt.InvalidArgument, match="not C-contiguous"):
        strided = gpu.strided(64)
        warpcrypt.encrypt(NAME, KEY, IV, strided, out=strided)
    with pytest.raises(warpcrypt.InvalidArgument, match="GPU memory"):
        warpcrypt.encrypt(NAME, KEY, IV, array)
    with pytest.raises(warpcrypt.InvalidArgument, match="both"):
        warpcrypt.encrypt(NAME, KEY, IV, bytes(64), out=array)
    with pytest.raises(warpcrypt.InvalidArgument, match="padding=False"):
        warpcrypt.encrypt("aes-256-ecb", KEY, None, array, out=array)
    with pytest.raises(warpcrypt.InvalidArgument, match="2\\*\\*64"):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array, stream_offset=2**64 - 1)
    with pytest.raises(warpcrypt.OutputTooSmall):
        warpcrypt.encrypt(NAME, KEY, IV, array, out=gpu.empty(63))
    with pytest.raises(warpcrypt.NotBlockAligned):
        warpcrypt.encrypt("aes-256-ecb", KEY, None, array[:60], out=array[:60], padding=False)


def two_devices():
    torch = Torch().torch
    if torch.cuda.device_count() < 2:
        pytest.skip(f"{torch.cuda.device_count()} CUDA device(s): multi-device tests need two")
    return torch


def test_second_device():
    torch = two_devices()
    data = random.Random("second").randbytes(10_000)
    with torch.cuda.device(1):
        array = torch.frombuffer(bytearray(data), dtype=torch.uint8).to("cuda:1")
        warpcrypt.encrypt(NAME, KEY, IV, array, out=array)
        assert array.cpu().numpy().tobytes() == cpu(NAME, data)


def test_tensors_are_worked_on_their_own_device():
    """A tensor on cuda:1 while cuda:0 is current: the work runs on cuda:1, on
    its current stream or an explicit stream of it, and cuda:0 stays current."""
    from warpcrypt.aead import AESGCM

    torch = two_devices()
    torch.cuda.set_device(0)
    data = random.Random("elsewhere").randbytes((1 << 20) + 5)
    array = torch.frombuffer(bytearray(data), dtype=torch.uint8).to("cuda:1")
    warpcrypt.encrypt(NAME, KEY, IV, array, out=array)
    torch.cuda.synchronize(1)
    assert array.cpu().numpy().tobytes() == cpu(NAME, data)

    stream = torch.cuda.Stream(device=1)
    again = torch.frombuffer(bytearray(data), dtype=torch.uint8).to("cuda:1")
    torch.cuda.synchronize(1)
    warpcrypt.encrypt(NAME, KEY, IV, again, out=again, stream=stream)
    stream.synchronize()
    assert again.cpu().numpy().tobytes() == cpu(NAME, data)

    aead = AESGCM(KEY)
    sealed = torch.empty(len(data) + 16, dtype=torch.uint8, device="cuda:1")
    plain = torch.frombuffer(bytearray(data), dtype=torch.uint8).to("cuda:1")
    aead.encrypt_into(IV[:12], plain, b"aad", sealed)
    torch.cuda.synchronize(1)
    assert sealed.cpu().numpy().tobytes() == aead.encrypt(IV[:12], data, b"aad")
    assert torch.cuda.current_device() == 0
