"""`warpcrypt age` never reports success for an encryption that failed, and
reads every header it writes: the regressions of an adversarial review, and
the failure paths of encryption one by one (a key wrap, a KDF, an
allocation, a write), each of which must exit non-zero with one line and
leave an existing output as it was.

The decryption side's attacks are tests/cli/test_age_mutations.py."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from wc_support import reference_age

pyrage = pytest.importorskip("pyrage", reason="pyrage (tests/requirements.txt) is the second age implementation")
from pyrage import x25519 as pyrage_x25519  # noqa: E402

AGE, _ = reference_age()

# The all-zero X25519 public key: a point of small order, so every shared
# secret with it is zero and no identity could open a stanza made for it.
LOW_ORDER = "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq5cu47z"
# A well-formed age secret key (Bech32 of 32 bytes), never to be echoed.
SECRET = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
OLD_OUTPUT = b"an older file that a failed run must leave as it was\n"
# The reader's and the writer's header limit (src/age/age_format.h).
MAX_HEADER = 16 << 20


def run(argv, stdin: bytes | None = None, preexec=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, timeout=300,
                          preexec_fn=preexec, stdin=None if stdin is not None else subprocess.DEVNULL)


def assert_clean_failure(result: subprocess.CompletedProcess, exit_status: int, message: str) -> None:
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    assert result.returncode == exit_status, (result.returncode, lines)
    assert len(lines) == 1 and re.search(message, lines[0]), lines
    assert result.stdout == b""


@pytest.fixture
def folder(tmp_path) -> Path:
    """A plaintext, an existing output, and a valid recipient's key pair."""
    (tmp_path / "plain").write_bytes(os.urandom(200_000))
    (tmp_path / "out.age").write_bytes(OLD_OUTPUT)
    identity = pyrage_x25519.Identity.generate()
    (tmp_path / "key").write_text(f"{identity}\n")
    (tmp_path / "recipient").write_text(f"{identity.to_public()}\n")
    return tmp_path


def assert_untouched(folder: Path) -> None:
    """The old output as it was, and no temporary file left beside it."""
    assert (folder / "out.age").read_bytes() == OLD_OUTPUT
    assert {p.name for p in folder.iterdir()} <= {"key", "out.age", "plain", "recipient", "recipients"}


# -- a key wrap that fails ----------------------------------------------------


@pytest.mark.parametrize("armor", [[], ["-a"]])
@pytest.mark.parametrize("beside_valid", [False, True])
def test_a_low_order_recipient_fails_and_keeps_the_old_output(warpcrypt_binary, folder, armor, beside_valid):
    recipients = [LOW_ORDER]
    if beside_valid:
        recipients = [(folder / "recipient").read_text().strip(), LOW_ORDER, (folder / "recipient").read_text().strip()]
    (folder / "recipients").write_text("\n".join(recipients) + "\n")
    result = run([warpcrypt_binary, "age", *armor, "-R", folder / "recipients", "-o", folder / "out.age",
                  folder / "plain"])
    assert_clean_failure(result, 2, r"low-order point")
    assert_untouched(folder)
    # age refuses it too.
    assert run([AGE, "-r", LOW_ORDER], stdin=b"x").returncode != 0


def test_a_low_order_recipient_writes_nothing_to_a_pipe(warpcrypt_binary, folder):
    result = run([warpcrypt_binary, "age", "-r", LOW_ORDER], stdin=b"data")
    assert_clean_failure(result, 2, r"low-order point")


# -- a KDF or an allocation that fails ----------------------------------------


def limit_memory() -> None:
    # The default work factor (18) needs 256 MiB for scrypt alone. A limit,
    # not the machine's size, makes the allocation fail: a large machine
    # would grant even factor 26's 64 GiB and then run scrypt for minutes.
    resource.setrlimit(resource.RLIMIT_AS, (192 << 20, 192 << 20))


@pytest.mark.parametrize("factor", [[], ["--work-factor", "26"]])
def test_scrypt_that_cannot_allocate_its_memory_fails(warpcrypt_binary, folder, factor):
    if os.environ.get("ASAN_OPTIONS"):
        pytest.skip("AddressSanitizer reserves more address space than the limit this test sets")
    result = run([warpcrypt_binary, "age", "-p", "-pass", "pass:correct horse", *factor, "-o", folder / "out.age",
                  folder / "plain"], preexec=limit_memory)
    assert_clean_failure(result, 1, r"scrypt cannot allocate")
    assert_untouched(folder)


def test_scrypt_that_cannot_allocate_when_decrypting_says_so(warpcrypt_binary, folder):
    if os.environ.get("ASAN_OPTIONS"):
        pytest.skip("AddressSanitizer reserves more address space than the limit this test sets")
    run([warpcrypt_binary, "age", "-p", "-pass", "pass:correct horse", "-o", folder / "p.age",
         folder / "plain"]).check_returncode()
    result = run([warpcrypt_binary, "age", "-d", "-pass", "pass:correct horse", "-o", folder / "out.age",
                  folder / "p.age"], preexec=limit_memory)
    assert_clean_failure(result, 1, r"scrypt cannot allocate")
    assert (folder / "out.age").read_bytes() == OLD_OUTPUT


# -- a write that fails -------------------------------------------------------


def limit_file_size() -> None:
    # A full disk, for this process: writes past 64 KiB fail with EFBIG.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


@pytest.mark.parametrize("armor", [[], ["-a"]])
def test_a_write_that_fails_midway_keeps_the_old_output(warpcrypt_binary, folder, armor):
    recipient = (folder / "recipient").read_text().strip()
    result = run([warpcrypt_binary, "age", *armor, "-r", recipient, "-o", folder / "out.age", folder / "plain"],
                 preexec=limit_file_size)
    assert_clean_failure(result, 3, r"(too large|No space|cannot write)")
    assert_untouched(folder)


def test_age_keygen_to_a_full_device_is_an_io_failure(warpcrypt_binary, tmp_path):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([str(warpcrypt_binary), "age-keygen"], stdout=full, stderr=subprocess.PIPE,
                                timeout=60)
    assert result.returncode == 3, result.stderr
    assert len(result.stderr.decode().strip().splitlines()) == 1


def test_age_keygen_that_cannot_write_its_file_leaves_none(warpcrypt_binary, tmp_path):
    result = run([warpcrypt_binary, "age-keygen", "-o", tmp_path / "key"], preexec=lambda: (
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN), resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))))
    assert result.returncode == 3, result.stderr
    assert not (tmp_path / "key").exists(), "half a secret key was left behind"


# -- every header written is read ---------------------------------------------


def many_recipients(folder: Path, count: int) -> tuple[Path, Path]:
    identities = [pyrage_x25519.Identity.generate() for _ in range(count)]
    recipients = folder / "recipients"
    recipients.write_text("".join(f"{i.to_public()}\n" for i in identities))
    key = folder / "last-key"
    key.write_text(f"{identities[-1]}\n")
    return recipients, key


def test_twelve_thousand_recipients_read_back_from_files_and_pipes(warpcrypt_binary, folder):
    recipients, key = many_recipients(folder, 12_001)
    plain = (folder / "plain").read_bytes()
    run([warpcrypt_binary, "age", "-R", recipients, "-o", folder / "many.age", folder / "plain"]).check_returncode()
    sealed = (folder / "many.age").read_bytes()
    assert sealed.index(b"\n---") > 1 << 20, "the header should be over the former 1 MiB limit"
    from_file = run([warpcrypt_binary, "age", "-d", "-i", key, folder / "many.age"])
    assert from_file.returncode == 0 and from_file.stdout == plain, from_file.stderr
    from_pipe = run([warpcrypt_binary, "age", "-d", "-i", key], stdin=sealed)
    assert from_pipe.returncode == 0 and from_pipe.stdout == plain, from_pipe.stderr
    assert run([AGE, "-d", "-i", key, folder / "many.age"]).stdout == plain
    # And age's own file of the same size opens here.
    run([AGE, "-R", recipients, "-o", folder / "by-age.age", folder / "plain"]).check_returncode()
    by_age = run([warpcrypt_binary, "age", "-d", "-i", key], stdin=(folder / "by-age.age").read_bytes())
    assert by_age.returncode == 0 and by_age.stdout == plain, by_age.stderr


def test_a_header_over_the_limit_is_refused_from_a_pipe(warpcrypt_binary, tmp_path):
    # Stanzas of an unknown type, well formed, past the limit: refused once
    # the limit is read, in about linear time, however the bytes arrive.
    stanza = b"-> unknown-type arg\n" + b"A" * 64 + b"\n\n"
    text = b"age-encryption.org/v1\n" + stanza * (MAX_HEADER // len(stanza) + 1)
    result = run([warpcrypt_binary, "age", "-d", "-i", "/dev/null"], stdin=text)
    assert result.returncode != 0
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and ("header too long" in lines[0] or "no identity" in lines[0]), lines


# -- secrets are never echoed -------------------------------------------------


@pytest.mark.parametrize("args", [["-r", SECRET], ["-r", SECRET.lower()], ["-r", f"x {SECRET}"],
                                  ["-d", "-i", "{key}", SECRET], ["-r", "{recipient}", SECRET],
                                  ["-r", "{recipient}", "-o", f"/nonexistent/{SECRET}", "{plain}"]])
def test_a_secret_key_given_as_a_recipient_or_a_path_is_not_echoed(warpcrypt_binary, folder, args):
    values = {"key": folder / "key", "plain": folder / "plain",
              "recipient": (folder / "recipient").read_text().strip()}
    result = run([warpcrypt_binary, "age", *(a.format(**values) for a in args)])
    assert result.returncode != 0
    streams = (result.stdout + result.stderr).decode(errors="replace").upper()
    assert SECRET[16:].upper() not in streams and SECRET[-12:].upper() not in streams, streams
    assert "<secret key>" in result.stderr.decode(), result.stderr
