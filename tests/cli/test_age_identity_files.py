"""Passphrase-encrypted identity files, as age reads them: an age-keygen
identity file encrypted with `age -p` (armored or binary, by the real `age`
at a pseudo-terminal or by `warpcrypt age -p`) given to -i is decrypted in
memory after "Enter passphrase for identity file ...:", and its identities
used, for -d and for -e -i. The attacks: a wrong passphrase, a truncated
file, one encrypted to a key instead of a passphrase, one encrypted twice,
an SSH key inside, and a huge file."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from terminal_support import PROMPT, Terminal, ask
from wc_support import reference_age

AGE, AGE_KEYGEN = reference_age()
PASSPHRASE = "identity pass 7"


def run(argv, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, timeout=120)
    if check:
        assert result.returncode == 0, f"{argv}: {result.stderr.decode(errors='replace')}"
    return result


def error_lines(transcript: bytes) -> list[bytes]:
    return [line for line in transcript.splitlines() if line.startswith(b"warpcrypt:")]


def encrypt_with_passphrase(warpcrypt_binary, source: Path, target: Path, armor: bool = True) -> None:
    run([warpcrypt_binary, "age", "-p", "-pass", f"pass:{PASSPHRASE}", *(["-a"] if armor else []), "-o", target,
         source])


@pytest.fixture
def identity(tmp_path):
    """An age-keygen identity file, its recipient, and a file encrypted to it by age."""
    key = tmp_path / "key.txt"
    run([AGE_KEYGEN, "-o", key])
    recipient = run([AGE_KEYGEN, "-y", key]).stdout.decode().strip()
    plain = os.urandom(3000)
    (tmp_path / "data.age").write_bytes(run([AGE, "-r", recipient], stdin=plain).stdout)
    return key, recipient, plain


def decrypt_asking(warpcrypt_binary, identity_file: Path, encrypted: Path, out: Path, answer: str = PASSPHRASE):
    return ask([warpcrypt_binary, "age", "-d", "-i", identity_file, "-o", out, encrypted], [answer])


@pytest.mark.parametrize("armor", [True, False], ids=["armored", "binary"])
def test_identity_file_encrypted_by_warpcrypt(warpcrypt_binary, identity, tmp_path, armor):
    key, _, plain = identity
    protected = tmp_path / "key.age"
    encrypt_with_passphrase(warpcrypt_binary, key, protected, armor)
    status, transcript = decrypt_asking(warpcrypt_binary, protected, tmp_path / "data.age", tmp_path / "out")
    assert status == 0, transcript
    assert f'Enter passphrase for identity file "{protected}":'.encode() in transcript
    assert (tmp_path / "out").read_bytes() == plain
    # age reads the same file the same way.
    status, transcript = ask([AGE, "-d", "-i", protected, "-o", tmp_path / "out-age", tmp_path / "data.age"],
                             [PASSPHRASE])
    assert status == 0 and (tmp_path / "out-age").read_bytes() == plain, transcript


def test_identity_file_encrypted_by_age_at_a_terminal(warpcrypt_binary, identity, tmp_path):
    key, _, plain = identity
    protected = tmp_path / "key.age"
    status, transcript = ask([AGE, "-p", "-a", "-o", protected, key], [PASSPHRASE, PASSPHRASE])
    assert status == 0, transcript
    assert protected.read_text().startswith("-----BEGIN AGE ENCRYPTED FILE-----")
    status, transcript = decrypt_asking(warpcrypt_binary, protected, tmp_path / "data.age", tmp_path / "out")
    assert status == 0 and (tmp_path / "out").read_bytes() == plain, transcript


def test_encrypting_to_an_encrypted_identity_file(warpcrypt_binary, identity, tmp_path):
    key, _, _ = identity
    protected = tmp_path / "key.age"
    encrypt_with_passphrase(warpcrypt_binary, key, protected)
    (tmp_path / "plain").write_bytes(b"to the key inside")
    status, transcript = ask([warpcrypt_binary, "age", "-e", "-i", protected, "-o", tmp_path / "f.age",
                              tmp_path / "plain"], [PASSPHRASE])
    assert status == 0, transcript
    assert run([AGE, "-d", "-i", key, tmp_path / "f.age"]).stdout == b"to the key inside"


def test_wrong_passphrase_is_one_error_line_and_no_output(warpcrypt_binary, identity, tmp_path):
    key, _, _ = identity
    protected = tmp_path / "key.age"
    encrypt_with_passphrase(warpcrypt_binary, key, protected)
    status, transcript = decrypt_asking(warpcrypt_binary, protected, tmp_path / "data.age", tmp_path / "out", "nope")
    lines = error_lines(transcript)
    assert status != 0 and len(lines) == 1, transcript
    assert b"identity file" in lines[0] and b"passphrase" in lines[0], lines
    assert PASSPHRASE.encode() not in transcript
    assert not (tmp_path / "out").exists()


def test_identity_file_encrypted_to_a_key_is_refused_without_asking(warpcrypt_binary, identity, tmp_path):
    key, recipient, _ = identity
    to_key = tmp_path / "key.age"
    to_key.write_bytes(run([AGE, "-r", recipient, "-a"], stdin=key.read_bytes()).stdout)
    terminal = Terminal([warpcrypt_binary, "age", "-d", "-i", to_key, "-o", tmp_path / "out", tmp_path / "data.age"])
    assert terminal.finish() != 0 and not re.search(PROMPT, terminal.transcript), terminal.transcript
    assert b"encrypted with age but not with a passphrase" in terminal.transcript
    assert not (tmp_path / "out").exists()


def test_truncated_identity_files_are_refused(warpcrypt_binary, identity, tmp_path):
    key, _, _ = identity
    protected = tmp_path / "key.age"
    encrypt_with_passphrase(warpcrypt_binary, key, protected, armor=False)
    whole = protected.read_bytes()
    # Inside the header: refused before any passphrase is asked.
    protected.write_bytes(whole[:40])
    terminal = Terminal([warpcrypt_binary, "age", "-d", "-i", protected, "-o", tmp_path / "out", tmp_path / "data.age"])
    assert terminal.finish() != 0 and not re.search(PROMPT, terminal.transcript), terminal.transcript
    assert len(error_lines(terminal.transcript)) == 1
    # Inside the payload: the passphrase is right, the file is not.
    protected.write_bytes(whole[:-5])
    status, transcript = decrypt_asking(warpcrypt_binary, protected, tmp_path / "data.age", tmp_path / "out")
    assert status != 0 and len(error_lines(transcript)) == 1, transcript
    assert b"cannot decrypt the identity file" in transcript
    assert not (tmp_path / "out").exists()


def test_nested_encryption_and_ssh_keys_inside_are_refused(warpcrypt_binary, identity, tmp_path):
    key, _, _ = identity
    once, twice = tmp_path / "once.age", tmp_path / "twice.age"
    encrypt_with_passphrase(warpcrypt_binary, key, once)
    encrypt_with_passphrase(warpcrypt_binary, once, twice)
    ssh_inside = tmp_path / "ssh.age"
    (tmp_path / "ssh").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    encrypt_with_passphrase(warpcrypt_binary, tmp_path / "ssh", ssh_inside)
    for protected in (twice, ssh_inside):
        status, transcript = decrypt_asking(warpcrypt_binary, protected, tmp_path / "data.age", tmp_path / "out")
        lines = error_lines(transcript)
        assert status != 0 and len(lines) == 1 and b"one a line" in lines[0], transcript
        assert len(re.findall(PROMPT, transcript)) == 1
        assert not (tmp_path / "out").exists()


def test_huge_identity_file_is_refused_without_asking(warpcrypt_binary, identity, tmp_path):
    huge = tmp_path / "huge.age"
    huge.write_bytes(b"age-encryption.org/v1\n" + b"-> X25519 " + b"A" * (2 << 20))
    terminal = Terminal([warpcrypt_binary, "age", "-d", "-i", huge, "-o", tmp_path / "out", tmp_path / "data.age"])
    assert terminal.finish() != 0 and not re.search(PROMPT, terminal.transcript), terminal.transcript
    assert b"too large for a key file" in terminal.transcript
