"""The package's shape: errors for every status, the pyca/cryptography-like
objects, backends, devices, and the GIL being released during work."""

from __future__ import annotations

import threading
import time

import pytest

import warpcrypt
from warpcrypt import Cipher, Status, algorithms, exceptions, modes

KEY, IV = bytes(range(32)), bytes(range(16))


def test_every_status_has_its_own_exception_class():
    # A class derived from Error directly stands for its status; subclasses
    # of those (InvalidSignature, an InvalidTag) refine one.
    classes = [cls for cls in vars(exceptions).values() if isinstance(cls, type) and warpcrypt.Error in cls.__bases__]
    assert sorted(cls.status for cls in classes) == [s for s in Status if s != Status.OK]
    for cls in classes:
        assert getattr(warpcrypt, cls.__name__) is cls


def test_the_binding_knows_every_status_of_the_library():
    """Status is the library's list (wc_status_count, wc_status_name): codes
    from 0 without gaps, named as the header names them, and the library
    describes no status past them."""
    from warpcrypt import _native

    assert list(Status) == list(range(len(Status)))
    assert (Status.OK, Status.INVALID_ARGUMENT, Status.AUTH.name) == (0, 1, "AUTH")
    past_the_end = max(Status) + 1
    assert [_native.status_string(code) for code in range(past_the_end, past_the_end + 4)] == ["unknown status"] * 4


def test_hkdf_says_what_it_cannot_derive():
    from warpcrypt import _native

    with pytest.raises(warpcrypt.InvalidArgument, match="not 8161 bytes"):
        _native.hkdf("sha256", b"secret", b"", b"", 255 * 32 + 1)
    with pytest.raises(warpcrypt.InvalidArgument, match="not 0 bytes"):
        _native.hkdf("sha256", b"secret", b"", b"", 0)
    with pytest.raises(warpcrypt.UnknownDigest, match="'sha257'"):
        _native.hkdf("sha257", b"secret", b"", b"", 32)
    assert len(_native.hkdf("sha256", b"secret", b"", b"", 255 * 32)) == 255 * 32


def test_argument_errors_are_value_errors():
    for cls in (warpcrypt.InvalidKey, warpcrypt.InvalidIV, warpcrypt.InvalidArgument, warpcrypt.UnknownCipher,
                warpcrypt.NotBlockAligned, warpcrypt.BadDecrypt, warpcrypt.OutputTooSmall):
        assert issubclass(cls, ValueError) and issubclass(cls, warpcrypt.Error)


def test_wrong_key_and_iv_lengths_say_what_is_expected():
    with pytest.raises(warpcrypt.InvalidKey, match="32-byte key, not 20 bytes") as raised:
        warpcrypt.encrypt("aes-256-ctr", KEY[:20], IV, b"data")
    assert raised.value.status == Status.KEY_LEN
    with pytest.raises(warpcrypt.InvalidIV, match="16-byte IV, not 12 bytes"):
        warpcrypt.encrypt("aes-256-cbc", KEY, IV[:12], b"data")
    with pytest.raises(warpcrypt.InvalidIV, match="takes no IV"):
        warpcrypt.encrypt("aes-128-ecb", KEY[:16], IV, b"data")
    assert warpcrypt.encrypt("aes-128-ecb", KEY[:16], None, b"data") == warpcrypt.encrypt(
        "aes-128-ecb", KEY[:16], b"", b"data")


def test_unknown_names():
    with pytest.raises(warpcrypt.UnknownCipher):
        warpcrypt.encrypt("aes-512-ctr", KEY, IV, b"")
    with pytest.raises(warpcrypt.InvalidArgument, match="unknown backend"):
        warpcrypt.encrypt("aes-256-ctr", KEY, IV, b"", backend="tpu")


def test_names_are_openssls_in_any_case_with_its_aliases():
    data = b"x" * 33
    assert warpcrypt.encrypt("AES-256-CBC", KEY, IV, data) == warpcrypt.encrypt("aes256", KEY, IV, data)


def test_bad_padding_raises_bad_decrypt():
    ciphertext = bytearray(warpcrypt.encrypt("aes-128-cbc", KEY[:16], IV, b"message"))
    ciphertext[-1] ^= 1
    with pytest.raises(warpcrypt.BadDecrypt):
        warpcrypt.decrypt("aes-128-cbc", KEY[:16], IV, bytes(ciphertext))


def test_failed_decryption_into_out_zeroes_it():
    ciphertext = bytearray(warpcrypt.encrypt("aes-128-cbc", KEY[:16], IV, b"message"))
    ciphertext[-1] ^= 1
    out = bytearray(b"\xaa" * 16)
    with pytest.raises(warpcrypt.BadDecrypt):
        warpcrypt.decrypt("aes-128-cbc", KEY[:16], IV, ciphertext, out=out)
    assert out == bytearray(16)


def test_stream_offset_needs_gpu_arrays():
    with pytest.raises(warpcrypt.InvalidArgument, match="stream_offset"):
        warpcrypt.encrypt("aes-256-ctr", KEY, IV, b"data", stream_offset=16)
    with pytest.raises(warpcrypt.InvalidArgument, match="stream_offset"):
        warpcrypt.encrypt("aes-256-ctr", KEY, IV, b"data", out=bytearray(4), stream_offset=16)


def test_algorithms_check_their_sizes():
    assert algorithms.AES(KEY[:24]).key_size == 192
    with pytest.raises(warpcrypt.InvalidKey):
        algorithms.AES(KEY[:20])
    with pytest.raises(warpcrypt.InvalidIV, match="16-byte nonce"):
        algorithms.ChaCha20(KEY, IV[:12])
    with pytest.raises(warpcrypt.InvalidKey):
        algorithms.ChaCha20(KEY[:16], IV)
    assert Cipher(algorithms.Salsa20(KEY[:16], IV[:8])).name == "salsa20-128"
    assert Cipher(algorithms.Salsa20(KEY, IV[:8])).name == "salsa20"
    with pytest.raises(TypeError):
        algorithms.AES("not bytes")


def test_cipher_pairs_algorithms_with_modes():
    assert Cipher(algorithms.AES(KEY), modes.CFB8(IV)).name == "aes-256-cfb8"
    assert modes.CBC(IV).initialization_vector == IV and modes.CTR(IV).nonce == IV
    with pytest.raises(TypeError, match="needs a mode"):
        Cipher(algorithms.AES(KEY))
    with pytest.raises(TypeError, match="stream cipher"):
        Cipher(algorithms.ChaCha20(KEY, IV), modes.CTR(IV))
    with pytest.raises(warpcrypt.InvalidIV, match="16-byte IV, not 8 bytes"):
        Cipher(algorithms.AES(KEY), modes.CBC(IV[:8]))


def test_contexts_end_at_finalize():
    encryptor = Cipher(algorithms.AES(KEY), modes.CBC(IV)).encryptor()
    ciphertext = encryptor.update(b"a" * 20)
    ciphertext += encryptor.finalize()
    assert ciphertext == warpcrypt.encrypt("aes-256-cbc", KEY, IV, b"a" * 20)
    with pytest.raises(warpcrypt.AlreadyFinalized):
        encryptor.update(b"more")
    with pytest.raises(warpcrypt.AlreadyFinalized):
        encryptor.finalize()


def test_a_failed_context_is_finished():
    decryptor = Cipher(algorithms.AES(KEY), modes.CBC(IV), padding=False).decryptor()
    decryptor.update(b"x" * 17)
    with pytest.raises(warpcrypt.NotBlockAligned):
        decryptor.finalize()
    with pytest.raises(warpcrypt.AlreadyFinalized):
        decryptor.update(b"x" * 16)


def test_padding_false_matches_one_shot():
    cipher = Cipher(algorithms.AES(KEY), modes.ECB(), padding=False)
    encryptor = cipher.encryptor()
    assert encryptor.update(b"b" * 32) + encryptor.finalize() == warpcrypt.encrypt(
        "aes-256-ecb", KEY, None, b"b" * 32, padding=False)


def test_backends():
    assert {"auto", "cpu", "gpu"} <= set(warpcrypt.backends())
    assert Cipher(algorithms.AES(KEY), modes.CTR(IV), backend="cpu").encryptor().backend == "cpu"


def test_gpu_backend_without_a_device_is_an_error(require_no_device):
    with pytest.raises(warpcrypt.NoDevice):
        warpcrypt.encrypt("aes-256-ctr", KEY, IV, b"data", backend="gpu")
    with pytest.raises(warpcrypt.NoDevice):
        Cipher(algorithms.AES(KEY), modes.CTR(IV), backend="gpu").encryptor()


def test_gpu_backend_refuses_modes_it_does_not_run(require_device):
    with pytest.raises(warpcrypt.BackendUnavailable):
        warpcrypt.encrypt("aes-256-ofb", KEY, IV, b"data", backend="gpu")
    with pytest.raises(warpcrypt.BackendUnavailable):
        warpcrypt.encrypt("aes-256-cbc", KEY, IV, b"data", backend="gpu")


def test_devices_and_build():
    found = warpcrypt.devices()
    assert isinstance(warpcrypt.built_with_cuda(), bool)
    if not warpcrypt.built_with_cuda():
        assert found == []
    for index, device in enumerate(found):
        assert device.index == index and device.name and device.memory_bytes > 0
        assert device.compute_capability >= (3, 0)


def test_ciphers_list_the_table():
    names = [c.name for c in warpcrypt.ciphers()]
    assert "aes-256-ctr" in names and "chacha20" in names and "salsa20-128" in names
    ctr = warpcrypt.cipher_info("aes-128-ctr")
    assert (ctr.key_size, ctr.iv_size, ctr.block_size, ctr.padded) == (16, 16, 1, False)
    assert warpcrypt.cipher_info("aes-128-cbc").padded


def test_version_is_the_librarys():
    from importlib.metadata import version

    assert warpcrypt.__version__ == version("warpcrypt")


def test_threads_encrypting_at_once_agree():
    data = bytes(range(256)) * (1 << 14)  # 4 MiB
    expected = warpcrypt.encrypt("aes-256-ctr", KEY, IV, data)
    results: list[bytes] = []
    workers = [threading.Thread(target=lambda: results.append(warpcrypt.encrypt("aes-256-ctr", KEY, IV, data)))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == [expected] * 4


def test_work_runs_without_the_gil():
    """While one thread is inside a long call, another keeps running Python;
    were the GIL held, this loop would stall for the whole call."""
    worker = threading.Thread(target=warpcrypt.encrypt, args=("aes-256-ctr", KEY, IV, bytes(128 << 20)),
                              kwargs={"threads": 1})
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    assert ticks > 1000


def test_a_context_refuses_a_second_thread_mid_call():
    """The work runs without the GIL, so a second call on the same context
    would race in C; it is refused instead."""
    encryptor = Cipher(algorithms.AES(KEY), modes.CTR(IV), threads=1).encryptor()
    data = bytes(256 << 20)
    entering = threading.Event()

    def long_update():
        entering.set()
        encryptor.update(data)

    worker = threading.Thread(target=long_update)
    worker.start()
    entering.wait()
    time.sleep(0.05)  # the worker is now inside its 256 MiB update
    with pytest.raises(RuntimeError, match="another thread"):
        encryptor.update(b"x")
    worker.join()
