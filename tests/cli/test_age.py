"""`warpcrypt age` and `warpcrypt age-keygen` against the real tools: Debian's
`age` and `age-keygen` (the Go reference implementation) and rage through
pyrage, in both directions, at the payload's chunk edges and at 300 MiB, to
one and several recipients, binary and armored, with keys made by either
side, and with passphrase files that `age -p` makes through a
pseudo-terminal. Then the
CLI's own rules: the terminal, atomic output, ranges and one-line errors.

The format's rules are tested one by one in tests/unit/age_test.cpp; the
mutation run is tests/cli/test_age_mutations.py."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from terminal_support import ask
from wc_support import AGE_CHUNK, reference_age

pyrage = pytest.importorskip("pyrage", reason="pyrage (tests/requirements.txt) is the second age implementation")
from pyrage import passphrase as pyrage_passphrase  # noqa: E402
from pyrage import x25519 as pyrage_x25519  # noqa: E402

AGE, AGE_KEYGEN = reference_age()

CHUNK = AGE_CHUNK
# The chunk edges, and one larger size kept quick.
SIZES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * 1024 * 1024 + 5]
PASSPHRASE = "correct horse battery staple"


def run(argv, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, timeout=120)
    if check:
        assert result.returncode == 0, f"{argv}: {result.stderr.decode(errors='replace')}"
    return result


@pytest.fixture(scope="module")
def keys(warpcrypt_binary, tmp_path_factory):
    """One identity file made by age-keygen, one by warpcrypt age-keygen."""
    folder = tmp_path_factory.mktemp("age-keys")
    made_by_age = folder / "age.key"
    made_by_us = folder / "warpcrypt.key"
    run([AGE_KEYGEN, "-o", made_by_age])
    run([warpcrypt_binary, "age-keygen", "-o", made_by_us])
    recipients = {
        name: run([AGE_KEYGEN, "-y", path]).stdout.decode().strip()
        for name, path in (("age", made_by_age), ("warpcrypt", made_by_us))
    }
    return {"files": {"age": made_by_age, "warpcrypt": made_by_us}, "recipients": recipients}


def payload(size: int) -> bytes:
    return (bytes(range(256)) * (size // 256 + 1))[:size] if size < 4096 else os.urandom(size)


def test_keygen_keys_are_age_keygens(warpcrypt_binary, keys, tmp_path):
    ours = keys["files"]["warpcrypt"]
    assert oct(ours.stat().st_mode & 0o777) == "0o600"
    text = ours.read_text()
    assert re.fullmatch(r"# created: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n# public key: age1[0-9a-z]{58}\n"
                        r"AGE-SECRET-KEY-1[0-9A-Z]{58}\n", text), text
    assert f"# public key: {keys['recipients']['warpcrypt']}\n" in text
    for path in keys["files"].values():
        ours_y = run([warpcrypt_binary, "age-keygen", "-y", path]).stdout.decode()
        assert ours_y == run([AGE_KEYGEN, "-y", path]).stdout.decode()
    # -o never replaces a file.
    result = run([warpcrypt_binary, "age-keygen", "-o", ours], check=False)
    assert result.returncode != 0 and b"refusing to overwrite" in result.stderr
    assert ours.read_text() == text


@pytest.mark.parametrize("armor", [False, True], ids=["binary", "armored"])
@pytest.mark.parametrize("size", SIZES)
def test_warpcrypt_files_open_with_age(warpcrypt_binary, keys, tmp_path, size, armor):
    plain = payload(size)
    (tmp_path / "plain").write_bytes(plain)
    encrypted = tmp_path / "file.age"
    recipients = [arg for r in keys["recipients"].values() for arg in ("-r", r)]
    run([warpcrypt_binary, "age", *recipients, *(["-a"] if armor else []), "-o", encrypted, tmp_path / "plain"])
    assert encrypted.read_bytes().startswith(b"-----BEGIN AGE ENCRYPTED FILE-----\n" if armor
                                             else b"age-encryption.org/v1\n-> X25519 ")
    for identity in keys["files"].values():
        assert run([AGE, "-d", "-i", identity, encrypted]).stdout == plain


@pytest.mark.parametrize("armor", [False, True], ids=["binary", "armored"])
@pytest.mark.parametrize("size", SIZES)
def test_age_files_open_with_warpcrypt(warpcrypt_binary, keys, tmp_path, size, armor):
    plain = payload(size)
    recipients = [arg for r in keys["recipients"].values() for arg in ("-r", r)]
    encrypted = run([AGE, *recipients, *(["-a"] if armor else [])], stdin=plain).stdout
    (tmp_path / "file.age").write_bytes(encrypted)
    for identity in keys["files"].values():
        assert run([warpcrypt_binary, "age", "-d", "-i", identity, tmp_path / "file.age"]).stdout == plain
        # Through a pipe as well: the header is read without reading past it.
        assert run([warpcrypt_binary, "age", "-d", "-i", identity], stdin=encrypted).stdout == plain


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while piece := f.read(1 << 20):
            digest.update(piece)
    return digest.hexdigest()


def test_several_hundred_mib_both_ways(warpcrypt_binary, keys, tmp_path, cuda_device_present):
    """300 MiB and 7 bytes (4,801 chunks, the last one short) through files,
    each tool opening the other's, compared by SHA-256: every lane's windows
    and the ends between them. On a machine with a GPU, its lanes too."""
    plain = tmp_path / "plain"
    plain.write_bytes(os.urandom(300 * 1024 * 1024 + 7))
    expected = sha256_of(plain)
    by_age = tmp_path / "by-age.age"
    run([AGE, "-r", keys["recipients"]["warpcrypt"], "-o", by_age, plain])
    for backend in ["cpu", "gpu"] if cuda_device_present else ["cpu"]:
        ours = tmp_path / f"{backend}.age"
        back = tmp_path / f"{backend}.back"
        run([warpcrypt_binary, "age", "--backend", backend, "-r", keys["recipients"]["age"], "-o", ours, plain])
        run([AGE, "-d", "-i", keys["files"]["age"], "-o", back, ours])
        assert sha256_of(back) == expected, f"age opening warpcrypt's file ({backend})"
        run([warpcrypt_binary, "age", "-d", "--backend", backend, "-i", keys["files"]["warpcrypt"], "-o", back,
             by_age])
        assert sha256_of(back) == expected, f"warpcrypt ({backend}) opening age's file"
        ours.unlink()
        back.unlink()


@pytest.mark.parametrize("size", [0, CHUNK, CHUNK + 1, 300_000])
def test_rage_both_ways(warpcrypt_binary, keys, tmp_path, size):
    plain = payload(size)
    identity = pyrage_x25519.Identity.generate()
    key_file = tmp_path / "rage.key"
    key_file.write_text(f"{identity}\n")
    for armored in (False, True):
        made_by_rage = pyrage.encrypt(plain, [identity.to_public()], armored=armored)
        assert run([warpcrypt_binary, "age", "-d", "-i", key_file], stdin=made_by_rage).stdout == plain
        ours = run([warpcrypt_binary, "age", "-r", str(identity.to_public()), *(["-a"] if armored else [])],
                   stdin=plain).stdout
        assert pyrage.decrypt(ours, [identity]) == plain
    made = pyrage_passphrase.encrypt(plain, PASSPHRASE)
    assert run([warpcrypt_binary, "age", "-d", "-pass", f"pass:{PASSPHRASE}"], stdin=made).stdout == plain
    ours = run([warpcrypt_binary, "age", "-p", "-pass", f"pass:{PASSPHRASE}", "--work-factor", "12"],
               stdin=plain).stdout
    assert pyrage_passphrase.decrypt(ours, PASSPHRASE) == plain


def test_passphrase_files_both_ways_through_a_terminal(warpcrypt_binary, tmp_path):
    plain = payload(CHUNK + 3)
    (tmp_path / "plain").write_bytes(plain)
    # age -p asks on the terminal, twice; its default work factor is 18.
    status, shown = ask([AGE, "-p", "-o", tmp_path / "by-age.age", tmp_path / "plain"], [PASSPHRASE, PASSPHRASE])
    assert status == 0, shown
    assert b"-> scrypt " in (tmp_path / "by-age.age").read_bytes()
    assert run([warpcrypt_binary, "age", "-d", "-pass", f"pass:{PASSPHRASE}",
                tmp_path / "by-age.age"]).stdout == plain
    # Ours asks the same way, echo off, and age opens the result.
    status, shown = ask([warpcrypt_binary, "age", "-p", "--work-factor", "12", "-o", tmp_path / "ours.age",
                         tmp_path / "plain"], [PASSPHRASE, PASSPHRASE])
    assert status == 0, shown
    assert PASSPHRASE.encode() not in shown
    status, shown = ask([AGE, "-d", "-o", tmp_path / "back", tmp_path / "ours.age"], [PASSPHRASE])
    assert status == 0, shown
    assert (tmp_path / "back").read_bytes() == plain
    # A wrong passphrase, typed on the terminal.
    status, shown = ask([warpcrypt_binary, "age", "-d", "-o", tmp_path / "wrong", tmp_path / "by-age.age"],
                        ["not it"])
    assert status != 0 and b"incorrect passphrase" in shown
    assert not (tmp_path / "wrong").exists()


def test_refuses_binary_output_to_a_terminal(warpcrypt_binary, keys, tmp_path):
    (tmp_path / "plain").write_bytes(b"secret")
    recipient = keys["recipients"]["age"]
    status, shown = ask([warpcrypt_binary, "age", "-r", recipient, tmp_path / "plain"], [])
    assert status != 0 and b"refusing to write binary output to a terminal" in shown
    status, shown = ask([warpcrypt_binary, "age", "-a", "-r", recipient, tmp_path / "plain"], [])
    assert status == 0 and b"-----BEGIN AGE ENCRYPTED FILE-----" in shown


def test_ranges_read_only_their_chunks(warpcrypt_binary, keys, tmp_path):
    plain = os.urandom(5 * CHUNK + 77)
    encrypted = run([AGE, "-r", keys["recipients"]["warpcrypt"]], stdin=plain).stdout
    (tmp_path / "file.age").write_bytes(encrypted)
    identity = keys["files"]["warpcrypt"]
    for offset, length in ((0, 1), (CHUNK - 1, 2), (3 * CHUNK + 5, CHUNK), (5 * CHUNK + 70, 100), (10 * CHUNK, 1)):
        part = run([warpcrypt_binary, "age", "-d", "-i", identity, "--offset", str(offset), "--length", str(length),
                    tmp_path / "file.age"]).stdout
        assert part == plain[offset:offset + length]
    result = run([warpcrypt_binary, "age", "-d", "-i", identity, "--offset", "1"], stdin=encrypted, check=False)
    assert result.returncode != 0 and b"regular input file" in result.stderr


@pytest.mark.parametrize("window", ["64K", "192K", "1M"])
def test_any_window_on_any_lanes_writes_and_reads_what_age_does(warpcrypt_binary, keys, tmp_path, window):
    """--window and --threads change who seals which chunks, never the bytes:
    through a regular file (each lane writes at its offset) and through pipes
    (the lanes write in turn). 80 lanes on 64 KiB windows wait for turns that
    are 64 apart at once, which share a wake-up slot in the engine's writer."""
    plain = os.urandom(200 * CHUNK + 9)
    (tmp_path / "plain").write_bytes(plain)
    for threads in ("3", "80"):
        lanes = ["--window", window, "--threads", threads]
        run([warpcrypt_binary, "age", *lanes, "-r", keys["recipients"]["age"], "-o", tmp_path / "file.age",
             tmp_path / "plain"])
        assert run([AGE, "-d", "-i", keys["files"]["age"], tmp_path / "file.age"]).stdout == plain
        piped = run([warpcrypt_binary, "age", *lanes, "-r", keys["recipients"]["age"]], stdin=plain).stdout
        assert run([AGE, "-d", "-i", keys["files"]["age"]], stdin=piped).stdout == plain
        back = run([warpcrypt_binary, "age", "-d", *lanes, "-i", keys["files"]["age"], tmp_path / "file.age"]).stdout
        assert back == plain
        back = run([warpcrypt_binary, "age", "-d", *lanes, "-i", keys["files"]["age"]], stdin=piped).stdout
        assert back == plain


def test_a_window_that_is_not_whole_pages_is_refused(warpcrypt_binary, keys, tmp_path):
    result = run([warpcrypt_binary, "age", "--window", "5000", "-r", keys["recipients"]["age"], "-o",
                  tmp_path / "out"], stdin=b"x", check=False)
    lines = result.stderr.decode().strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1 and "multiple of 4 KiB" in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_failures_are_one_line_and_leave_no_output(warpcrypt_binary, keys, tmp_path):
    plain = os.urandom(2 * CHUNK + 1)
    encrypted = bytearray(run([AGE, "-r", keys["recipients"]["age"]], stdin=plain).stdout)
    encrypted[-5] ^= 1
    (tmp_path / "bad.age").write_bytes(encrypted)
    out = tmp_path / "out"
    cases = [
        (["-d", "-i", keys["files"]["age"], "-o", out, tmp_path / "bad.age"],
         r"authentication failed at chunk 2: the payload was modified, truncated or reordered "
         r"\(the header authenticated\)"),
        (["-d", "-i", keys["files"]["warpcrypt"], "-o", out, tmp_path / "bad.age"], r"no identity matched"),
        (["-r", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", "-o", out, tmp_path / "bad.age"],
         r"malformed ssh-ed25519 public key"),
        (["-r", "age1notakey", "-o", out, tmp_path / "bad.age"], r"not an age recipient"),
        (["-p", "-r", keys["recipients"]["age"], "-o", out, tmp_path / "bad.age"], r"-p cannot be combined"),
        (["-d", "-pass", "pass:x", "-o", out, keys["files"]["age"]], r"not an age file"),
    ]
    for args, message in cases:
        result = run([warpcrypt_binary, "age", *args], check=False)
        lines = result.stderr.decode().strip().splitlines()
        assert result.returncode != 0 and len(lines) == 1 and re.search(message, lines[0]), (args, lines)
        if message.startswith("authentication"):
            assert result.returncode == 4, (args, result.returncode)
        assert result.stdout == b""
        assert not out.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.age"]


def test_gpu_backend_without_a_device_is_refused(warpcrypt_binary, keys, tmp_path, cuda_device_present):
    plain = payload(3 * CHUNK)
    args = ["age", "--backend", "gpu", "-r", keys["recipients"]["age"], "-o", tmp_path / "gpu.age"]
    if cuda_device_present:
        (tmp_path / "plain").write_bytes(plain)
        run([warpcrypt_binary, *args, tmp_path / "plain"])
        back = run([warpcrypt_binary, "age", "-d", "--backend", "gpu", "-i", keys["files"]["age"],
                    tmp_path / "gpu.age"]).stdout
        assert back == plain and run([AGE, "-d", "-i", keys["files"]["age"], tmp_path / "gpu.age"]).stdout == plain
        return
    result = run([warpcrypt_binary, *args], stdin=plain, check=False)
    assert result.returncode == 5 and b"cannot run on backend gpu" in result.stderr
    assert not (tmp_path / "gpu.age").exists()
