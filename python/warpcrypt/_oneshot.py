"""One-shot encryption and decryption, of host memory and of GPU arrays."""

from __future__ import annotations

from typing import Optional

from warpcrypt import _native, _streams, _table
from warpcrypt._typing import Secret, overload
from warpcrypt.exceptions import InvalidArgument


# Without out= the result is bytes; with it, the number of bytes written.
@overload
def encrypt(cipher: str, key: Secret, iv: Optional[Secret], data: object, *, out: None = None,
            padding: bool = True, backend: str = "auto", threads: int = 0, stream: object = None,
            stream_offset: int = 0) -> bytes: ...
@overload
def encrypt(cipher: str, key: Secret, iv: Optional[Secret], data: object, *, out: object,
            padding: bool = True, backend: str = "auto", threads: int = 0, stream: object = None,
            stream_offset: int = 0) -> int: ...

def encrypt(
    cipher: str,
    key: Secret,
    iv: Optional[Secret],
    data: object,
    *,
    out: object = None,
    padding: bool = True,
    backend: str = "auto",
    threads: int = 0,
    stream: object = None,
    stream_offset: int = 0,
) -> bytes | int:
    """Encrypts `data` with `cipher`, an ``openssl enc`` name such as
    "aes-256-ctr" (``warpcrypt.ciphers()`` lists them).

    `key` and `iv` are bytes-like and must have the cipher's exact lengths;
    `iv` is None (or empty) for ECB. `data` is bytes-like (bytes, bytearray,
    memoryview), a NumPy array, or any array with ``__dlpack__`` or
    ``__cuda_array_interface__``; arrays must be C-contiguous, and are
    encrypted as the bytes they hold, whatever their dtype.

    Without `out`, `data` must be in host memory and the ciphertext comes back
    as bytes. With `out`, a writable buffer or array, the ciphertext is
    written there and the number of bytes written is returned; ``out=data``
    works in place. On failure whatever `out` would have received is zeroed.

    GPU arrays (CuPy, PyTorch CUDA tensors, anything with ``__dlpack__`` or
    ``__cuda_array_interface__`` in device memory) need `out` on the same
    device, and are never copied: the work is queued on `stream` (a
    ``torch.cuda.Stream``, ``cupy.cuda.Stream`` or int ``cudaStream_t``),
    by default the caller's current PyTorch or CuPy stream, and the call
    returns at once, as a framework operation does. `stream_offset` is the
    byte of the cipher's stream that ``data[0]`` is at, for working on a
    large message in pieces: any value for CTR, ChaCha20 and Salsa20, a
    multiple of 16 for ECB, and for CBC and CFB decryption, where `iv` is then
    the ciphertext block before the piece. GPU arrays are never padded: pass
    ``padding=False`` for ECB and CBC.

    `padding` (ECB and CBC): PKCS#7, as OpenSSL; False requires whole 16-byte
    blocks, as pyca/cryptography. `backend`: "auto", "cpu", "gpu", ... (see
    ``warpcrypt.backends()``). `threads`: CPU workers, 0 for every core.
    """
    return _crypt(_native.ENCRYPT, cipher, key, iv, data, out, padding, backend, threads, stream, stream_offset)


@overload
def decrypt(cipher: str, key: Secret, iv: Optional[Secret], data: object, *, out: None = None,
            padding: bool = True, backend: str = "auto", threads: int = 0, stream: object = None,
            stream_offset: int = 0) -> bytes: ...
@overload
def decrypt(cipher: str, key: Secret, iv: Optional[Secret], data: object, *, out: object,
            padding: bool = True, backend: str = "auto", threads: int = 0, stream: object = None,
            stream_offset: int = 0) -> int: ...


def decrypt(
    cipher: str,
    key: Secret,
    iv: Optional[Secret],
    data: object,
    *,
    out: object = None,
    padding: bool = True,
    backend: str = "auto",
    threads: int = 0,
    stream: object = None,
    stream_offset: int = 0,
) -> bytes | int:
    """Decrypts `data`; the arguments are :func:`encrypt`'s. With padding on,
    a wrong key or a corrupt ciphertext raises BadDecrypt, and ``out``, if
    given, is zeroed."""
    return _crypt(_native.DECRYPT, cipher, key, iv, data, out, padding, backend, threads, stream, stream_offset)


def _crypt(direction: int, cipher: str, key: Secret, iv: Optional[Secret], data: object, out: object,
           padding: bool, backend: str, threads: int, stream: object, stream_offset: int) -> bytes | int:
    info, backend_value = _table.cipher_info(cipher), _table.backend_value(backend)
    if out is None:
        if stream_offset:
            raise InvalidArgument("stream_offset applies to GPU arrays only, which need out=")
        return _native.crypt(direction, info, key, iv, data, padding, backend_value, threads)
    return _native.crypt_into(direction, info, key, iv, data, out, padding, backend_value, threads,
                              _streams.handle(stream), stream_offset, _streams.current)
