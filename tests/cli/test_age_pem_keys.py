"""`warpcrypt age` with SSH identities in PEM, the forms age reads through
Go's x/crypto/ssh: PKCS#1 RSA as `ssh-keygen -m PEM` writes it, with and
without a passphrase (the public key then from KEY.pub, as age takes it),
and PKCS#8 RSA and Ed25519 as `openssl genpkey` writes them; files from the
real `age` opened with them, and files we write opened by `age`; a wrong
passphrase, a missing KEY.pub and the PEM forms age refuses. The parser's
own attacks are tests/unit/ssh_keys_test.cpp (PemKeys)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from terminal_support import PROMPT, Terminal, ask
from wc_support import one_line_failure, reference_age, run_argv as run

AGE, AGE_KEYGEN = reference_age()
SSH_KEYGEN = shutil.which("ssh-keygen")
OPENSSL = shutil.which("openssl")
PASSPHRASE = "c0rrect horse"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """{name: path}, each with its KEY.pub: "rsa-pem" and "rsa-pem-pw"
    (ssh-keygen -m PEM), "rsa-pkcs8" and "ed25519-pkcs8" (openssl genpkey)."""
    if SSH_KEYGEN is None or OPENSSL is None:
        pytest.skip("ssh-keygen and openssl make these keys, and one of them is not on PATH")
    folder = tmp_path_factory.mktemp("pem-keys")
    made = {}
    for name, passphrase in (("rsa-pem", ""), ("rsa-pem-pw", PASSPHRASE)):
        made[name] = folder / name
        run([SSH_KEYGEN, "-q", "-m", "PEM", "-t", "rsa", "-b", "2048", "-N", passphrase, "-C", name, "-f",
             made[name]])
    for name, algorithm in (("rsa-pkcs8", ["RSA", "-pkeyopt", "rsa_keygen_bits:2048"]),
                            ("ed25519-pkcs8", ["ed25519"])):
        made[name] = folder / name
        run([OPENSSL, "genpkey", "-algorithm", *algorithm, "-out", made[name]])
        made[name].chmod(0o600)
        # ssh-keygen reads no PKCS#8 Ed25519 key: pyca writes the public line.
        key = serialization.load_pem_private_key(made[name].read_bytes(), password=None)
        public_line = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        Path(str(made[name]) + ".pub").write_bytes(public_line + b"\n")
    assert made["rsa-pem-pw"].read_text().startswith("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED")
    assert made["ed25519-pkcs8"].read_text().startswith("-----BEGIN PRIVATE KEY-----")
    return made


def public(path: Path) -> str:
    return " ".join(Path(str(path) + ".pub").read_text().split()[:2])


UNENCRYPTED = ("rsa-pem", "rsa-pkcs8", "ed25519-pkcs8")


@pytest.mark.parametrize("name", UNENCRYPTED)
def test_age_encrypts_warpcrypt_decrypts_with_a_pem_key(warpcrypt_binary, keys, name, tmp_path):
    plain = os.urandom(70_000)
    encrypted = run([AGE, "-R", str(keys[name]) + ".pub", "-a"], stdin=plain).stdout
    assert run([warpcrypt_binary, "age", "-d", "-i", keys[name]], stdin=encrypted).stdout == plain


@pytest.mark.parametrize("name", UNENCRYPTED)
def test_warpcrypt_encrypts_to_a_pem_key_age_decrypts(warpcrypt_binary, keys, name, tmp_path):
    # Its recipient, derived from the private key, is ssh-keygen's public key.
    assert run([warpcrypt_binary, "age-keygen", "-y", keys[name]]).stdout.decode().strip() == public(keys[name])
    plain = os.urandom(1000)
    encrypted = run([warpcrypt_binary, "age", "-e", "-i", keys[name]], stdin=plain).stdout
    assert run([warpcrypt_binary, "age", "-d", "-i", keys[name]], stdin=encrypted).stdout == plain
    result = run([AGE, "-d", "-i", keys[name]], stdin=encrypted, check=False)
    if result.returncode != 0 and name == "ed25519-pkcs8":
        # age 1.1.1's agessh predates its fix for x/crypto/ssh's PKCS#8
        # Ed25519 type (age issue 429); its newer releases read the key.
        assert b"unsupported SSH identity type" in result.stderr, result.stderr
        return
    assert result.returncode == 0 and result.stdout == plain, result.stderr


def test_passphrase_protected_pem_key_asks_only_for_its_stanza(warpcrypt_binary, keys, tmp_path):
    key = keys["rsa-pem-pw"]
    plain = os.urandom(5000)
    (tmp_path / "plain").write_bytes(plain)
    by_age = tmp_path / "age.age"
    run([AGE, "-R", str(key) + ".pub", "-o", by_age, tmp_path / "plain"])
    status, transcript = ask([warpcrypt_binary, "age", "-d", "-i", key, "-o", tmp_path / "out", by_age], [PASSPHRASE])
    assert status == 0, transcript
    assert f'Enter passphrase for "{key}":'.encode() in transcript
    assert (tmp_path / "out").read_bytes() == plain
    # -e -i takes its recipient from KEY.pub, asking nothing; age opens it.
    by_us = run([warpcrypt_binary, "age", "-e", "-i", key, "-o", tmp_path / "ours.age", tmp_path / "plain"])
    assert by_us.stderr == b""
    status, transcript = ask([AGE, "-d", "-i", key, "-o", tmp_path / "out-age", tmp_path / "ours.age"], [PASSPHRASE])
    assert status == 0 and (tmp_path / "out-age").read_bytes() == plain, transcript
    # A file for another key never asks.
    elsewhere = run([AGE, "-R", str(keys["rsa-pem"]) + ".pub"], stdin=b"data").stdout
    (tmp_path / "elsewhere.age").write_bytes(elsewhere)
    terminal = Terminal([warpcrypt_binary, "age", "-d", "-i", key, "-o", tmp_path / "none", tmp_path / "elsewhere.age"])
    assert terminal.finish() != 0 and not re.search(PROMPT, terminal.transcript), terminal.transcript
    assert not (tmp_path / "none").exists()


def test_wrong_passphrase_for_a_pem_key_is_one_clear_error(warpcrypt_binary, keys, tmp_path):
    key = keys["rsa-pem-pw"]
    encrypted = tmp_path / "f.age"
    run([AGE, "-R", str(key) + ".pub", "-o", encrypted], stdin=b"data")
    status, transcript = ask([warpcrypt_binary, "age", "-d", "-i", key, "-o", tmp_path / "out", encrypted], ["nope"])
    lines = [line for line in transcript.splitlines() if line.startswith(b"warpcrypt:")]
    assert status != 0 and len(lines) == 1 and b"incorrect passphrase" in lines[0], transcript
    assert not (tmp_path / "out").exists()


def test_encrypted_pem_key_without_its_pub_file_is_refused(warpcrypt_binary, keys, tmp_path):
    alone = tmp_path / "alone"
    shutil.copy(keys["rsa-pem-pw"], alone)
    encrypted = run([AGE, "-R", str(keys["rsa-pem-pw"]) + ".pub"], stdin=b"data").stdout
    one_line_failure(run([warpcrypt_binary, "age", "-d", "-i", alone], stdin=encrypted, check=False),
                     re.escape(f"reads from {alone}.pub, which is missing"))
    # age refuses it too, for the same reason.
    assert b".pub" in run([AGE, "-d", "-i", alone], stdin=encrypted, check=False).stderr
    # A .pub of another key is found out once the key is decrypted.
    shutil.copy(str(keys["rsa-pem"]) + ".pub", str(alone) + ".pub")
    wrong_pub = run([AGE, "-R", str(alone) + ".pub", "-o", tmp_path / "f.age"], stdin=b"data")
    assert wrong_pub.returncode == 0
    status, transcript = ask([warpcrypt_binary, "age", "-d", "-i", alone, "-o", tmp_path / "out", tmp_path / "f.age"],
                             [PASSPHRASE])
    assert status != 0 and b"mismatched private and public SSH key" in transcript, transcript


def test_pem_forms_age_does_not_read_are_refused_by_name(warpcrypt_binary, keys, tmp_path):
    encrypted_pkcs8 = tmp_path / "enc-pkcs8"
    run([OPENSSL, "pkcs8", "-topk8", "-v2", "aes256", "-passout", f"pass:{PASSPHRASE}", "-in", keys["rsa-pkcs8"],
         "-out", encrypted_pkcs8])
    ec = tmp_path / "ec"
    run([OPENSSL, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ec])
    for path, why in ((encrypted_pkcs8, r"encrypted PKCS#8"), (ec, r"ECDSA")):
        one_line_failure(run([warpcrypt_binary, "age", "-d", "-i", path], stdin=b"", check=False), why)
        one_line_failure(run([warpcrypt_binary, "age-keygen", "-y", path], check=False), why)
