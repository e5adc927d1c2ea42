"""`warpcrypt age` with SSH keys (ssh-ed25519, ssh-rsa) against the real
`age` 1.1.1 and rage through pyrage, with keys `ssh-keygen` makes here:
both directions, -r and -R (authorized_keys lines), several recipients
mixing X25519 and SSH keys, passphrase-protected keys typed at a
pseudo-terminal (asked only when the file has a stanza for the key), and
the failures: a wrong key, a wrong passphrase, a tampered stanza, key types
age does not use; and `age-keygen -y`, which prints an SSH key's public key.
The parsers' own attacks are tests/unit/ssh_keys_test.cpp."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from terminal_support import PROMPT, Terminal, ask
from wc_support import one_line_failure, reference_age, run_argv as run

pyrage = pytest.importorskip("pyrage", reason="pyrage (tests/requirements.txt) is the second age implementation")
from pyrage import ssh as pyrage_ssh  # noqa: E402

AGE, AGE_KEYGEN = reference_age()
SSH_KEYGEN = shutil.which("ssh-keygen")
PASSPHRASE = "tr0ub4dor & 3"
KINDS = ("ed25519", "rsa")


@pytest.fixture(scope="module")
def ssh_keygen() -> str:
    """ssh-keygen, which makes every key these tests use."""
    if SSH_KEYGEN is None:
        pytest.skip("ssh-keygen is not on PATH (Debian's openssh-client, which scripts/install-deps.sh installs): "
                    "the SSH interop tests make their keys with it")
    return SSH_KEYGEN


@pytest.fixture(scope="module")
def keys(tmp_path_factory, ssh_keygen):
    """ssh-keygen's keys: {kind: path} for ed25519 and rsa, unencrypted and
    (kind + "-pw") under PASSPHRASE, with a second unencrypted ed25519 key
    ("other") and an X25519 identity from age-keygen ("x25519")."""
    folder = tmp_path_factory.mktemp("ssh-keys")
    made = {}
    for name, kind, passphrase in [("ed25519", "ed25519", ""), ("rsa", "rsa", ""), ("ed25519-pw", "ed25519", PASSPHRASE),
                                   ("rsa-pw", "rsa", PASSPHRASE), ("other", "ed25519", "")]:
        path = folder / name
        run([ssh_keygen, "-q", "-t", kind, "-N", passphrase, "-C", f"{name} key@host", "-f", path])
        made[name] = path
    run([AGE_KEYGEN, "-o", folder / "x25519"])
    made["x25519"] = folder / "x25519"
    return made


def public(path: Path) -> str:
    return Path(str(path) + ".pub").read_text().strip()


def x25519_recipient(keys) -> str:
    return run([AGE_KEYGEN, "-y", keys["x25519"]]).stdout.decode().strip()


@pytest.mark.parametrize("kind", KINDS)
def test_warpcrypt_encrypts_age_decrypts(warpcrypt_binary, keys, kind, tmp_path):
    plain = os.urandom(70_000)
    (tmp_path / "plain").write_bytes(plain)
    by_line = tmp_path / "line.age"
    by_file = tmp_path / "file.age"
    run([warpcrypt_binary, "age", "-r", public(keys[kind]), "-o", by_line, tmp_path / "plain"])
    run([warpcrypt_binary, "age", "-R", str(keys[kind]) + ".pub", "-o", by_file, tmp_path / "plain"])
    for encrypted in (by_line, by_file):
        assert f"-> ssh-{kind} ".encode() in encrypted.read_bytes()
        assert run([AGE, "-d", "-i", keys[kind], encrypted]).stdout == plain


@pytest.mark.parametrize("kind", KINDS)
def test_age_encrypts_warpcrypt_decrypts(warpcrypt_binary, keys, kind, tmp_path):
    plain = os.urandom(65_536)
    for flag, value in (("-r", public(keys[kind])), ("-R", str(keys[kind]) + ".pub")):
        encrypted = run([AGE, flag, value, "-a"], stdin=plain).stdout
        assert run([warpcrypt_binary, "age", "-d", "-i", keys[kind]], stdin=encrypted).stdout == plain


def test_authorized_keys_file_with_comments(warpcrypt_binary, keys, tmp_path):
    authorized = tmp_path / "authorized_keys"
    authorized.write_text(f"# two keys\n\n{public(keys['ed25519'])}\n{public(keys['rsa'])} trailing words\n")
    encrypted = run([warpcrypt_binary, "age", "-R", authorized], stdin=b"to both").stdout
    for kind in KINDS:
        assert run([AGE, "-d", "-i", keys[kind]], stdin=encrypted).stdout == b"to both"


def test_options_before_the_key_are_refused_as_age_refuses_them(warpcrypt_binary, keys, tmp_path):
    authorized = tmp_path / "authorized_keys"
    authorized.write_text(f'no-pty,command="true" {public(keys["ed25519"])}\n')
    assert run([AGE, "-R", authorized], stdin=b"x", check=False).returncode != 0
    one_line_failure(run([warpcrypt_binary, "age", "-R", authorized, "-o", tmp_path / "out"], stdin=b"x", check=False),
                     r"not an age recipient")
    assert not (tmp_path / "out").exists()


def test_mixed_recipients_each_open_the_file(warpcrypt_binary, keys, tmp_path):
    plain = os.urandom(1000)
    recipients = [x25519_recipient(keys), public(keys["ed25519"]), public(keys["rsa"])]
    args = [a for r in recipients for a in ("-r", r)]
    ours = run([warpcrypt_binary, "age", *args], stdin=plain).stdout
    theirs = run([AGE, *args], stdin=plain).stdout
    for identity in (keys["x25519"], keys["ed25519"], keys["rsa"]):
        assert run([AGE, "-d", "-i", identity], stdin=ours).stdout == plain
        assert run([warpcrypt_binary, "age", "-d", "-i", identity], stdin=theirs).stdout == plain
    # Several -i at once, the matching one last.
    both = run([warpcrypt_binary, "age", "-d", "-i", keys["other"], "-i", keys["rsa"]], stdin=theirs).stdout
    assert both == plain


def test_wrong_key_is_no_identity(warpcrypt_binary, keys, tmp_path):
    encrypted = tmp_path / "f.age"
    run([AGE, "-r", public(keys["ed25519"]), "-r", public(keys["rsa"]), "-o", encrypted], stdin=b"secret")
    result = run([warpcrypt_binary, "age", "-d", "-i", keys["other"], "-o", tmp_path / "out", encrypted], check=False)
    one_line_failure(result, r"no identity matched any of the recipients")
    assert not (tmp_path / "out").exists()
    # age says the same with its words.
    assert run([AGE, "-d", "-i", keys["other"], encrypted], check=False).returncode != 0


@pytest.mark.parametrize("kind", KINDS)
def test_tampered_stanza_fails(warpcrypt_binary, keys, kind, tmp_path):
    encrypted = run([warpcrypt_binary, "age", "-r", public(keys[kind])], stdin=b"payload").stdout
    header, rest = encrypted.split(b"\n---", 1)
    lines = header.split(b"\n")
    body = next(i for i, line in enumerate(lines) if line.startswith(f"-> ssh-{kind}".encode())) + 1
    # Flip a base64 character of the body for another that keeps it canonical.
    line = bytearray(lines[body])
    line[2] = ord("A") if line[2] != ord("A") else ord("B")
    lines[body] = bytes(line)
    (tmp_path / "t.age").write_bytes(b"\n".join(lines) + b"\n---" + rest)
    result = run([warpcrypt_binary, "age", "-d", "-i", keys[kind], "-o", tmp_path / "out", tmp_path / "t.age"],
                 check=False)
    one_line_failure(result, rf"ssh-{kind} stanza names this key but does not open with it")
    assert not (tmp_path / "out").exists()
    assert run([AGE, "-d", "-i", keys[kind], tmp_path / "t.age"], check=False).returncode != 0


@pytest.mark.parametrize("kind", KINDS)
def test_passphrase_key_is_asked_for_at_the_terminal(warpcrypt_binary, keys, kind, tmp_path):
    plain = os.urandom(5000)
    (tmp_path / "plain").write_bytes(plain)
    key = keys[f"{kind}-pw"]
    by_age = tmp_path / "age.age"
    by_us = tmp_path / "ours.age"
    run([AGE, "-R", str(key) + ".pub", "-o", by_age, tmp_path / "plain"])
    run([warpcrypt_binary, "age", "-r", public(key), "-o", by_us, tmp_path / "plain"])
    for encrypted, name in ((by_age, "a"), (by_us, "b")):
        out = tmp_path / f"out-{name}"
        status, transcript = ask([warpcrypt_binary, "age", "-d", "-i", key, "-o", out, encrypted], [PASSPHRASE])
        assert status == 0, transcript
        assert str(key).encode() in transcript
        assert out.read_bytes() == plain
    # age opens what we wrote, asked at the terminal the same way.
    status, transcript = ask([AGE, "-d", "-i", key, "-o", tmp_path / "out-age", by_us], [PASSPHRASE])
    assert status == 0, transcript
    assert (tmp_path / "out-age").read_bytes() == plain


def test_wrong_passphrase_fails_and_no_prompt_without_a_matching_stanza(warpcrypt_binary, keys, tmp_path):
    key = keys["ed25519-pw"]
    encrypted = tmp_path / "f.age"
    run([AGE, "-r", public(key), "-o", encrypted], stdin=b"data")
    status, transcript = ask([warpcrypt_binary, "age", "-d", "-i", key, "-o", tmp_path / "out", encrypted],
                             ["not it"])
    assert status != 0 and b"incorrect passphrase" in transcript, transcript
    assert PASSPHRASE.encode() not in transcript
    assert not (tmp_path / "out").exists()
    # A file for another key never asks: the public key is in clear.
    elsewhere = tmp_path / "other.age"
    run([AGE, "-r", public(keys["other"]), "-o", elsewhere], stdin=b"data")
    terminal = Terminal([warpcrypt_binary, "age", "-d", "-i", key, "-o", tmp_path / "out", elsewhere])
    status = terminal.finish()
    assert status != 0 and not re.search(PROMPT, terminal.transcript), terminal.transcript
    assert b"no identity matched" in terminal.transcript
    # Without a terminal, one line saying so.
    one_line_failure(run([warpcrypt_binary, "age", "-d", "-i", key, encrypted], check=False), r"no terminal")


@pytest.mark.parametrize("kind", KINDS)
def test_pyrage_both_directions(warpcrypt_binary, keys, kind, tmp_path):
    plain = os.urandom(3000)
    by_rage = pyrage.encrypt(plain, [pyrage_ssh.Recipient.from_str(public(keys[kind]))])
    assert run([warpcrypt_binary, "age", "-d", "-i", keys[kind]], stdin=by_rage).stdout == plain
    ours = run([warpcrypt_binary, "age", "-r", public(keys[kind])], stdin=plain).stdout
    identity = pyrage_ssh.Identity.from_buffer(Path(keys[kind]).read_bytes())
    assert pyrage.decrypt(ours, [identity]) == plain


def test_keys_age_does_not_use_are_refused_by_name(warpcrypt_binary, tmp_path, ssh_keygen):
    key = tmp_path / "ecdsa"
    run([ssh_keygen, "-q", "-t", "ecdsa", "-N", "", "-f", key])
    one_line_failure(run([warpcrypt_binary, "age", "-r", public(key)], stdin=b"x", check=False),
                     r"ECDSA SSH keys are not age recipients")
    encrypted = run([AGE, "-r", x25519_recipient_of_fresh(tmp_path)], stdin=b"x").stdout
    one_line_failure(run([warpcrypt_binary, "age", "-d", "-i", key], stdin=encrypted, check=False),
                     r"ECDSA SSH keys are not age recipients")
    # A public key given as an identity.
    one_line_failure(run([warpcrypt_binary, "age", "-d", "-i", str(key) + ".pub"], stdin=encrypted, check=False),
                     r"an SSH public key is a recipient")


def x25519_recipient_of_fresh(folder: Path) -> str:
    run([AGE_KEYGEN, "-o", folder / "fresh"])
    return run([AGE_KEYGEN, "-y", folder / "fresh"]).stdout.decode().strip()


@pytest.mark.parametrize("cipher", ["aes128-ctr", "aes256-cbc"])
def test_other_key_file_ciphers_ssh_keygen_writes(warpcrypt_binary, cipher, tmp_path, ssh_keygen):
    key = tmp_path / "key"
    run([ssh_keygen, "-q", "-t", "ed25519", "-N", PASSPHRASE, "-a", "2", "-Z", cipher, "-f", key])
    encrypted = tmp_path / "f.age"
    run([AGE, "-r", public(key), "-o", encrypted], stdin=b"under " + cipher.encode())
    status, transcript = ask([warpcrypt_binary, "age", "-d", "-i", key, "-o", tmp_path / "out", encrypted],
                             [PASSPHRASE])
    assert status == 0, transcript
    assert (tmp_path / "out").read_bytes() == b"under " + cipher.encode()


@pytest.mark.parametrize("cipher", ["aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com"])
def test_aead_key_file_ciphers_are_refused_by_name(warpcrypt_binary, cipher, tmp_path, ssh_keygen):
    key = tmp_path / "key"
    run([ssh_keygen, "-q", "-t", "ed25519", "-N", PASSPHRASE, "-a", "2", "-Z", cipher, "-f", key])
    encrypted = run([AGE, "-r", public(key)], stdin=b"x").stdout
    one_line_failure(run([warpcrypt_binary, "age", "-d", "-i", key], stdin=encrypted, check=False),
                     r"encrypted with a cipher this build does not run")


@pytest.mark.parametrize("kind", ["ed25519", "rsa", "ed25519-pw"])
def test_age_keygen_y_prints_an_ssh_keys_public_key(warpcrypt_binary, keys, kind):
    # An SSH identity's recipient is its public key, in clear in the key file
    # even under a passphrase: the .pub line without its comment, which age
    # encrypts to. (Once -y refused every SSH key; age's reads age keys only.)
    line = run([warpcrypt_binary, "age-keygen", "-y", keys[kind]]).stdout.decode()
    assert line == " ".join(public(keys[kind]).split()[:2]) + "\n"
    encrypted = run([AGE, "-r", line.strip()], stdin=b"to the printed key").stdout
    if not kind.endswith("-pw"):
        assert run([warpcrypt_binary, "age", "-d", "-i", keys[kind]], stdin=encrypted).stdout == b"to the printed key"


def test_age_keygen_y_refuses_a_plugin_identity_by_name(warpcrypt_binary, tmp_path):
    # A plugin identity's recipient is its plugin's to derive; -y runs no
    # plugin, and says so rather than print another key.
    key = tmp_path / "plugin.key"
    key.write_text("AGE-PLUGIN-WCTEST-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARC0S8N0FUW\n")
    one_line_failure(run([warpcrypt_binary, "age-keygen", "-y", key], check=False),
                     r"plugin\.key: a plugin identity's recipient is its plugin's to derive")


def test_a_private_key_given_as_a_recipient_is_not_echoed(warpcrypt_binary, keys, tmp_path):
    private = Path(keys["ed25519"]).read_text()
    body = private.splitlines()[1]
    result = run([warpcrypt_binary, "age", "-r", private, "-o", tmp_path / "out"], stdin=b"x", check=False)
    one_line_failure(result, r"-r <private key>: not an age recipient")
    assert body.encode() not in result.stderr
    # A PEM block cut short is masked to the end.
    cut = "\n".join(private.splitlines()[:3])
    result = run([warpcrypt_binary, "age", "-r", cut], stdin=b"x", check=False)
    assert body.encode() not in result.stderr and b"<private key>" in result.stderr
