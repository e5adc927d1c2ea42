"""An output is never a file the command reads: not its input, nor an
identity, recipients, key or passphrase file, whatever path, symbolic link
or hard link names it. `warpcrypt age -d -i key.txt -o key.txt file.age`
once replaced the identity file with the plaintext and exited 0, and the
user lost the key. Every such command now fails with one line, and every
file is left as it was (expect_failure checks the whole directory)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from wc_support import reference_age

AGE, AGE_KEYGEN = reference_age()
# age's words first (scripts written for age look for them), then which files.
REFUSED = "input and output file are the same: the output is a file this command reads"


@pytest.fixture
def age_files(run_cli, workdir: Path) -> Path:
    """key.txt, an age file encrypted to it, a recipients file and a
    plaintext in `workdir`."""
    subprocess.run([AGE_KEYGEN, "-o", workdir / "key.txt"], check=True, capture_output=True)
    recipient = subprocess.run([AGE_KEYGEN, "-y", workdir / "key.txt"], check=True, capture_output=True,
                               text=True).stdout.strip()
    (workdir / "recipients.txt").write_text(recipient + "\n")
    (workdir / "plain").write_bytes(b"plaintext that is not a key\n")
    run_cli("age", "-r", recipient, "-o", workdir / "file.age", workdir / "plain").check()
    return workdir


def alias(workdir: Path, target: str, how: str) -> str:
    """A second name for `target`: the same path spelled otherwise, a
    symbolic link or a hard link."""
    if how == "path":
        return f"./{target}"
    name = f"{how}-to-{target}"
    if how == "symlink":
        os.symlink(target, workdir / name)
    else:
        os.link(workdir / target, workdir / name)
    return name


@pytest.mark.parametrize("how", ["path", "symlink", "hardlink"])
def test_decrypting_over_the_identity_file_is_refused(age_files, expect_failure, how):
    output = alias(age_files, "key.txt", how)
    expect_failure("age", "-d", "-i", "key.txt", "-o", output, "file.age", cwd=age_files, message=REFUSED,
                   secrets=[(age_files / "key.txt").read_text().split()[-1]])


def test_encrypting_over_the_recipients_file_is_refused(age_files, expect_failure):
    expect_failure("age", "-R", "recipients.txt", "-o", "recipients.txt", "plain", cwd=age_files, message=REFUSED)


def test_encrypting_over_the_passphrase_file_is_refused(age_files, expect_failure):
    (age_files / "pass.txt").write_text("a passphrase\n")
    expect_failure("age", "-p", "-pass", "file:pass.txt", "-o", "pass.txt", "plain", cwd=age_files, message=REFUSED,
                   secrets=["a passphrase"])


def test_an_output_beside_the_identity_file_is_still_written(run_cli, age_files):
    run_cli("age", "-d", "-i", "key.txt", "-o", "back", "file.age", cwd=age_files).check()
    assert (age_files / "back").read_bytes() == (age_files / "plain").read_bytes()


@pytest.mark.parametrize("source", ["file", "kfile", "fd"])
def test_enc_over_its_passphrase_file_is_refused(workdir, expect_failure, warpcrypt_binary, source):
    (workdir / "plain").write_bytes(b"x" * 1000)
    (workdir / "pw").write_text("secret words\n")
    if source == "fd":
        # A descriptor the shell opened on the file is a file read too.
        with open(workdir / "pw", "rb") as held:
            expect_failure("enc", "-aes-256-ctr", "-pbkdf2", "-pass", f"fd:{held.fileno()}", "-in", "plain",
                           "-out", "pw", cwd=workdir, message=REFUSED, secrets=["secret words"],
                           pass_fds=[held.fileno()])
        return
    pass_args = ["-pass", "file:pw"] if source == "file" else ["-kfile", "pw"]
    expect_failure("enc", "-aes-256-ctr", "-pbkdf2", *pass_args, "-in", "plain", "-out", "pw", cwd=workdir,
                   message=REFUSED, secrets=["secret words"])


@pytest.mark.parametrize("command", ["seal", "open"])
def test_seal_and_open_over_their_key_file_are_refused(run_cli, workdir, expect_failure, command):
    (workdir / "key").write_bytes(bytes(range(32)))
    (workdir / "plain").write_bytes(b"y" * 5000)
    run_cli("seal", "-keyfile", workdir / "key", "-in", workdir / "plain", "-out", workdir / "sealed").check()
    source = "plain" if command == "seal" else "sealed"
    expect_failure(command, "-keyfile", "key", "-in", source, "-out", "key", cwd=workdir, message=REFUSED)


def test_standard_input_redirected_from_the_output_is_refused(workdir, warpcrypt_binary):
    (workdir / "plain").write_bytes(b"z" * 100)
    with open(workdir / "plain", "rb") as stdin:
        result = subprocess.run([warpcrypt_binary, "enc", "-aes-256-ctr", "-K", "00" * 32, "-iv", "00" * 16, "-out",
                                 "plain"], stdin=stdin, cwd=workdir, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and REFUSED in result.stderr, result.stderr
    assert (workdir / "plain").read_bytes() == b"z" * 100
    assert sorted(path.name for path in workdir.iterdir()) == ["plain"]
