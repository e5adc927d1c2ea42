"""Exceptions that fit Python's: a file that cannot be read or written is
the OSError subclass its errno picks, naming that file; where code may
depend on pyca/cryptography's exceptions, they are pyca's."""

from __future__ import annotations

import errno
import os

import pytest

import warpcrypt
from warpcrypt import Cipher, algorithms, modes
from warpcrypt.aead import AESGCM, ChaCha20Poly1305


def crypt(src, dst):
    return warpcrypt.encrypt_file("aes-128-ctr", bytes(16), bytes(16), src, dst)


def seal(src, dst):
    return warpcrypt.seal_file(src, dst, key=bytes(32))


def open_sealed(src, dst):
    return warpcrypt.open_file(src, dst, key=bytes(32))


@pytest.mark.parametrize("call", [crypt, seal, open_sealed])
def test_a_missing_input_is_file_not_found_naming_it(call, tmp_path):
    missing = tmp_path / "absent"
    with pytest.raises(FileNotFoundError) as raised:
        call(missing, tmp_path / "out")
    error = raised.value
    assert isinstance(error, warpcrypt.IOFailure) and error.status == warpcrypt.Status.IO
    assert (error.errno, error.strerror, error.filename) == (errno.ENOENT, os.strerror(errno.ENOENT), str(missing))
    assert str(error) == f"[Errno {errno.ENOENT}] {os.strerror(errno.ENOENT)}: '{missing}'"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("call", [crypt, seal])
def test_an_output_in_a_missing_directory_names_the_output(call, tmp_path):
    (tmp_path / "in").write_bytes(b"data")
    target = tmp_path / "no" / "such" / "dir"
    with pytest.raises(FileNotFoundError) as raised:
        call(tmp_path / "in", target)
    assert raised.value.errno == errno.ENOENT and raised.value.filename == str(target)


def test_a_directory_as_input_is_is_a_directory_error(tmp_path):
    with pytest.raises(IsADirectoryError) as raised:
        crypt(tmp_path, tmp_path / "out")
    assert raised.value.filename == str(tmp_path)


def test_sealed_info_and_streams_on_a_missing_file(tmp_path):
    for call in (lambda p: warpcrypt.sealed_info(p), lambda p: warpcrypt.SealedReader(p, key=bytes(32))):
        with pytest.raises(FileNotFoundError) as raised:
            call(tmp_path / "absent")
        assert raised.value.filename == str(tmp_path / "absent")


def test_each_errno_class_is_made_once_and_is_an_io_failure():
    """The errno-picked classes are built once each, and are still IOFailure."""
    first = warpcrypt.exceptions._io_failure(errno.ENOENT, "gone", "f")
    second = warpcrypt.exceptions._io_failure(errno.ENOENT, "gone", "g")
    assert type(first) is type(second) and isinstance(first, FileNotFoundError)
    plain = warpcrypt.exceptions._io_failure(errno.EIO, "bad disk", "f")
    assert type(plain) is warpcrypt.IOFailure and plain.errno == errno.EIO


def test_update_into_says_what_pyca_says(reference):
    ciphers, _ = reference
    key, iv = bytes(16), bytes(16)
    theirs = ciphers.Cipher(ciphers.algorithms.AES(key), ciphers.modes.CBC(iv)).encryptor()
    ours = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    messages = []
    for context in (theirs, ours):
        with pytest.raises(ValueError) as raised:
            context.update_into(b"a" * 20, bytearray(5))
        messages.append(str(raised.value))
    # pyca asks for len(data) + 15 in every block mode; warpcrypt for what this
    # update may write, never more, so a buffer sized for pyca always fits.
    assert messages == ["buffer must be at least 35 bytes for this payload",
                        "buffer must be at least 20 bytes for this payload"]
    assert isinstance(raised.value, warpcrypt.OutputTooSmall)


@pytest.mark.parametrize("make", [lambda: AESGCM(bytes(16)), lambda: ChaCha20Poly1305(bytes(32))])
def test_encrypt_over_2_31_bytes_is_pycas_overflow_error(make):
    np = pytest.importorskip("numpy")
    huge = np.zeros(2**31, dtype=np.uint8)  # never written: the pages stay unallocated
    aead = make()
    for data, aad in ((huge, None), (b"x", huge)):
        with pytest.raises(OverflowError, match=r"Max 2\*\*31 - 1 bytes"):
            aead.encrypt(bytes(12), data, aad)


def test_a_short_aead_buffer_says_what_pyca_says():
    pyca = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    messages = []
    for aead in (pyca.AESGCM(bytes(16)), AESGCM(bytes(16))):
        with pytest.raises(ValueError) as raised:
            aead.encrypt_into(bytes(12), b"x" * 10, None, bytearray(5))
        messages.append(str(raised.value))
    assert messages == ["buffer must be 26 bytes"] * 2


# Code moved from pyca/cryptography to warpcrypt keeps its except clauses.
def test_pyca_except_clauses_catch_warpcrypts_shared_exceptions():
    exceptions = pytest.importorskip("cryptography.exceptions")
    with pytest.raises(exceptions.InvalidTag):
        AESGCM(bytes(32)).decrypt(bytes(12), bytes(20), None)
    with pytest.raises(exceptions.InvalidTag):
        ChaCha20Poly1305(bytes(32)).decrypt(bytes(12), bytes(20), b"aad")
    encryptor = Cipher(algorithms.AES(bytes(16)), modes.CTR(bytes(16))).encryptor()
    encryptor.finalize()
    with pytest.raises(exceptions.AlreadyFinalized):
        encryptor.update(b"more")
    assert issubclass(warpcrypt.InvalidSignature, exceptions.InvalidSignature)
    assert issubclass(warpcrypt.InvalidSignature, warpcrypt.InvalidTag)
    # pyca's InvalidKey is a failed key verification, not a wrong length.
    assert not issubclass(warpcrypt.InvalidKey, exceptions.InvalidKey)
    # Each status still maps to warpcrypt's own class.
    assert warpcrypt.exceptions._BY_STATUS[warpcrypt.Status.AUTH] is warpcrypt.InvalidTag


def test_without_pyca_the_exceptions_stand_alone():
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['cryptography'] = None; sys.modules['safetensors'] = None\n"
        "import warpcrypt\n"
        "from warpcrypt.aead import AESGCM\n"
        "assert warpcrypt.InvalidTag.__mro__[1:] == (warpcrypt.Error, Exception, BaseException, object)\n"
        "try:\n"
        "    AESGCM(bytes(32)).decrypt(bytes(12), bytes(20), None)\n"
        "except warpcrypt.InvalidTag:\n"
        "    print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout == "ok\n", result.stderr


def test_status_is_the_librarys_table():
    """warpcrypt.exceptions.Status lists the C library's wc_status codes, by
    name, value and order: a status added to the library fails here until
    Python has it."""
    from warpcrypt import _native
    from warpcrypt.exceptions import Status

    assert [(member.name, member.value) for member in Status] == _native.status_codes()


# tblib, which Dask installs, registers every exception class with copyreg;
# a daemon thread alive at exit keeps that table, and so the classes and
# their modules' globals, past the interpreter's end.
_PINNED_AT_EXIT = """
import copyreg, threading, time
import warpcrypt, warpcrypt.aead, warpcrypt.exceptions
classes = [warpcrypt.aead.BatchInvalidTag]
classes += [c for c in vars(warpcrypt.exceptions).values()
            if isinstance(c, type) and issubclass(c, BaseException)]
for cls in classes:
    copyreg.pickle(cls, repr)  # a reducer that refers to nothing of this script's
# A daemon thread waiting on a bound method of the table keeps it; nothing of
# this script's globals is kept, so its own objects are collected at the end.
pin = threading.Timer(1000, copyreg.dispatch_table.clear)
pin.daemon = True
pin.start()
aead = warpcrypt.aead.AESGCM(bytes(16))
time.sleep(0.05)
"""


def test_exception_classes_kept_past_exit_keep_no_extension_object():
    """What the Dask tests' leak report was: exception classes that a third
    party keeps for good hold extension objects (the status enum, the AEAD
    table) through their modules' globals, and the extension reports them
    leaked at exit. Those are plain Python values now."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _PINNED_AT_EXIT], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "leaked" not in result.stderr, result.stderr
