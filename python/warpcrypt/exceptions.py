"""The errors warpcrypt raises: one class per status of the C library.

Every class derives from :class:`Error`, and those that mean "the caller
passed something wrong" also derive from :class:`ValueError`, as
pyca/cryptography raises ``ValueError`` for the same mistakes. Each class's
``status`` is the C library's ``wc_status`` it stands for: :class:`Status`
holds the library's statuses under the library's names (wc_status_name).
Wrong argument types raise ``TypeError``, as everywhere in Python.

Where pyca/cryptography is installed, the exceptions both libraries have
also derive from pyca's: ``InvalidTag``, ``InvalidSignature`` and
``AlreadyFinalized``, so code moved from pyca to warpcrypt keeps catching
them. (pyca's own ``InvalidKey`` means a failed key verification, not a key
of the wrong length, so warpcrypt's is not one.) Likewise, where the
safetensors package is installed, the errors warpcrypt.safetensors raises
for a bad file, tensor or argument (:class:`FormatError`,
:class:`InvalidArgument`, :class:`Unsupported`, :class:`InvalidTag` and so
:class:`InvalidSignature`) also derive from ``safetensors.SafetensorError``.
"""

from __future__ import annotations

import enum
import importlib


def _foreign(module_name: str, name: str) -> tuple[type[Exception], ...]:
    """Another library's exception of this name, where that library is
    installed, as a further base: code written for it then catches
    warpcrypt's too. Nothing where it is absent."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return ()
    base = getattr(module, name, None)
    return (base,) if isinstance(base, type) and issubclass(base, Exception) else ()


def _pyca(name: str) -> tuple[type[Exception], ...]:
    """pyca/cryptography's exception of this name (``except
    cryptography.exceptions.InvalidTag``)."""
    return _foreign("cryptography.exceptions", name)


def _safetensors() -> tuple[type[Exception], ...]:
    """safetensors' SafetensorError (``except safetensors.SafetensorError``),
    for the errors warpcrypt.safetensors raises."""
    return _foreign("safetensors", "SafetensorError")


__all__ = [
    "Error",
    "InvalidArgument",
    "UnknownCipher",
    "InvalidKey",
    "InvalidIV",
    "NotBlockAligned",
    "BadDecrypt",
    "OutputTooSmall",
    "OutOfRange",
    "Unsupported",
    "NoDevice",
    "BackendUnavailable",
    "AlreadyFinalized",
    "OutOfMemory",
    "CryptoLibraryError",
    "UnknownDigest",
    "DeviceError",
    "IOFailure",
    "Cancelled",
    "InvalidTag",
    "InvalidSignature",
    "FormatError",
    "NoIdentity",
    "Status",
]


class Status(enum.IntEnum):
    """The C library's wc_status codes under its names (wc_status_name);
    each error status has its own exception class, and
    ``_native.status_string(code)`` says what a code means.

    A Python enum rather than one of the extension's types: every exception
    class holds one of these, and a third party may keep exception classes
    alive for good (tblib, which Dask installs, registers every exception
    class with copyreg), which must not keep the extension's objects past
    the interpreter's end. tests/python/test_errors.py holds the members
    equal to the library's table."""

    OK = 0
    INVALID_ARGUMENT = 1
    UNKNOWN_CIPHER = 2
    KEY_LEN = 3
    IV_LEN = 4
    NOT_BLOCK_ALIGNED = 5
    BAD_DECRYPT = 6
    OUTPUT_TOO_SMALL = 7
    RANGE = 8
    UNSUPPORTED = 9
    NO_DEVICE = 10
    BACKEND_UNAVAILABLE = 11
    CONTEXT_STATE = 12
    OUT_OF_MEMORY = 13
    CRYPTO_LIBRARY = 14
    DIGEST = 15
    DEVICE = 16
    IO = 17
    CANCELLED = 18
    AUTH = 19
    FORMAT = 20
    NO_IDENTITY = 21


class Error(Exception):
    """Base class of every warpcrypt error."""

    status: Status


class InvalidArgument(Error, ValueError, *_safetensors()):  # type: ignore[misc]
    """A bad argument: a non-contiguous or read-only buffer, overlapping
    buffers, an unknown backend name."""

    status = Status.INVALID_ARGUMENT


class UnknownCipher(Error, ValueError):
    """No cipher by that name; ``warpcrypt.ciphers()`` lists them."""

    status = Status.UNKNOWN_CIPHER


class InvalidKey(Error, ValueError):
    """The key's length differs from the cipher's. Never padded or cut, as
    ``openssl enc`` would."""

    status = Status.KEY_LEN


class InvalidIV(Error, ValueError):
    """The IV's (or nonce's) length differs from the cipher's."""

    status = Status.IV_LEN


class NotBlockAligned(Error, ValueError):
    """ECB or CBC with padding off, on data that is not whole 16-byte blocks."""

    status = Status.NOT_BLOCK_ALIGNED


class BadDecrypt(Error, ValueError):
    """The PKCS#7 padding check failed: a wrong key or IV, or a corrupt
    ciphertext."""

    status = Status.BAD_DECRYPT


class OutputTooSmall(Error, ValueError):
    """``out`` or ``buf`` holds fewer bytes than the result needs."""

    status = Status.OUTPUT_TOO_SMALL


class OutOfRange(Error, ValueError):
    """A byte range outside the ciphertext."""

    status = Status.RANGE


class Unsupported(Error, *_safetensors()):  # type: ignore[misc]
    """The cipher cannot do this (random access in OFB, for one)."""

    status = Status.UNSUPPORTED


class NoDevice(Error):
    """The GPU was asked for, but no CUDA device is usable, or this build of
    warpcrypt has no CUDA backend. Never a silent fallback to the CPU."""

    status = Status.NO_DEVICE


class BackendUnavailable(Error):
    """The requested backend cannot run this cipher and direction: the GPU
    does not run CBC and CFB encryption of one message, CFB8 or OFB."""

    status = Status.BACKEND_UNAVAILABLE


class AlreadyFinalized(Error, *_pyca("AlreadyFinalized")):  # type: ignore[misc]
    """A cipher context used after ``finalize()``, or after one of its calls
    failed. Make a new one."""

    status = Status.CONTEXT_STATE


class OutOfMemory(Error, MemoryError):
    """The library could not allocate memory."""

    status = Status.OUT_OF_MEMORY


class CryptoLibraryError(Error):
    """OpenSSL or libsodium reported a failure."""

    status = Status.CRYPTO_LIBRARY


class UnknownDigest(Error, ValueError):
    """An unknown message digest name for key derivation."""

    status = Status.DIGEST


class DeviceError(Error):
    """A CUDA call failed: a launch, a copy, or an allocation on the device."""

    status = Status.DEVICE


class IOFailure(Error, OSError):
    """Reading the input or writing the output failed. A failure with an
    errno is raised as the matching OSError subclass as well
    (``FileNotFoundError``, ``PermissionError``, ...), with ``errno``,
    ``strerror`` and ``filename`` set, as ``open()`` raises it."""

    status = Status.IO


# IOFailure joined with each OSError subclass that an errno selects, made once.
_IO_FAILURES: dict[type[OSError], type[IOFailure]] = {}


def _io_failure(errno: int, strerror: str, filename: str | None) -> IOFailure:
    """The exception for a read or write that failed with `errno` on
    `filename`: an IOFailure that is also the OSError subclass Python picks
    for that errno."""
    base = type(OSError(errno, strerror))
    if base is OSError:
        return IOFailure(errno, strerror, filename)
    cls = _IO_FAILURES.get(base)
    if cls is None:
        cls = _IO_FAILURES[base] = type(base.__name__, (IOFailure, base), {"__module__": __name__})
    return cls(errno, strerror, filename)


class Cancelled(Error):
    """A progress callback asked the work to stop."""

    status = Status.CANCELLED


class InvalidTag(Error, *_pyca("InvalidTag"), *_safetensors()):  # type: ignore[misc]
    """AEAD: the tag does not match, so the ciphertext, its associated data or
    the key is not what was sealed. No plaintext is released."""

    status = Status.AUTH


def _tensor_not_authentic(name: str, chunk: int | None = None) -> InvalidTag:
    """The one error for a stored tensor (of an encrypted safetensors file or
    a warpcrypt.torch checkpoint) whose data or tag does not authenticate;
    `chunk`, where it is cut into chunks, the first that failed."""
    where = f"tensor {name!r}" + (f", chunk {chunk}" if chunk is not None else "")
    return InvalidTag(f"{where} does not authenticate: its data was changed or moved, or it belongs to another file")


class InvalidSignature(InvalidTag, *_pyca("InvalidSignature")):  # type: ignore[misc]
    """A signed header's signature does not verify under the caller's key
    (CryptoTensors files, warpcrypt.safetensors): the header was changed, or
    another key signed it. Nothing in the header is used."""


class FormatError(Error, ValueError, *_safetensors()):  # type: ignore[misc]
    """Not a file of the expected format (sealed, docs/format.md; age,
    docs/age.md), or its header is damaged or of an unknown version."""

    status = Status.FORMAT


class NoIdentity(Error):
    """age: none of the identities (keys, passphrase) opens any of the file's
    recipient stanzas (docs/age.md)."""

    status = Status.NO_IDENTITY


# The extension raises the class of a failed call's status from this table:
# each class derived from Error directly stands for its status (subclasses
# such as warpcrypt.aead.BatchInvalidTag refine one).
_BY_STATUS = {cls.status: cls for cls in Error.__subclasses__()}
