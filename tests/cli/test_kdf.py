"""Passphrase handling: -pass sources, -pbkdf2/-iter/-md, the legacy KDF,
-salt/-nosalt, and the -p/-P key printout, all against `openssl enc`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path

import pytest

from wc_support import SHARED_CIPHERS, assert_same_bytes, cipher

PASSPHRASE = "swordfish under the sea"
SALT = "a1b2c3d4e5f60718"


@contextlib.contextmanager
def pass_source(kind: str, phrase: str, tmp_path: Path):
    """Yields (pass argument, run kwargs) delivering `phrase` through one of
    openssl's -pass sources. A fresh pipe per use for fd:."""
    if kind == "pass":
        yield f"pass:{phrase}", {}
    elif kind == "env":
        yield "env:WC_TEST_PASSPHRASE", {"env": {"WC_TEST_PASSPHRASE": phrase}}
    elif kind.startswith("file"):
        # openssl reads the first line only and drops its newline.
        body = {"file": f"{phrase}\n", "file-no-newline": phrase,
                "file-two-lines": f"{phrase}\nsecond line is ignored\n"}[kind]
        path = tmp_path / f"{kind}.txt"
        path.write_text(body)
        yield f"file:{path}", {}
    elif kind == "fd":
        read_end, write_end = os.pipe()
        os.write(write_end, f"{phrase}\n".encode())
        os.close(write_end)
        try:
            yield f"fd:{read_end}", {"pass_fds": (read_end,)}
        finally:
            os.close(read_end)
    else:
        raise ValueError(kind)


PASS_SOURCES = ("pass", "env", "file", "file-no-newline", "file-two-lines", "fd")


@pytest.mark.parametrize("kind", PASS_SOURCES)
def test_pass_sources(kind, run_cli, run_openssl, random_bytes, tmp_path):
    """Each source gives the same key as pass:PHRASE in openssl, both ways."""
    plaintext = random_bytes(1000, "pass-sources")
    args = ("-aes-256-cbc", "-pbkdf2", "-S", SALT)
    expected = run_openssl.enc(plaintext, *args, "-pass", f"pass:{PASSPHRASE}")

    with pass_source(kind, PASSPHRASE, tmp_path) as (arg, kwargs):
        ours = run_cli.enc(plaintext, *args, "-pass", arg, **kwargs)
    assert_same_bytes(ours, expected, f"encryption with -pass {kind}")

    with pass_source(kind, PASSPHRASE, tmp_path) as (arg, kwargs):
        decrypted = run_cli.enc(expected, "-d", *args, "-pass", arg, **kwargs)
    assert_same_bytes(decrypted, plaintext, f"decryption with -pass {kind}")


@pytest.mark.parametrize("kind", ("env", "file-two-lines", "fd"))
def test_pass_sources_same_as_openssl_same_source(kind, run_cli, run_openssl,
                                                  random_bytes, tmp_path):
    plaintext = random_bytes(77, "pass-same-source")
    args = ("-chacha20", "-pbkdf2", "-S", SALT)
    outputs = []
    for tool in (run_cli, run_openssl):
        with pass_source(kind, PASSPHRASE, tmp_path) as (arg, kwargs):
            outputs.append(tool.enc(plaintext, *args, "-pass", arg, **kwargs))
    assert_same_bytes(*outputs, f"-pass {kind}: warpcrypt vs openssl")


def test_non_ascii_passphrase(run_cli, run_openssl, random_bytes):
    plaintext = random_bytes(64, "utf8-pass")
    args = ("-aes-128-ctr", "-pbkdf2", "-S", SALT, "-pass", "pass:pässwörd 🔑")
    assert_same_bytes(run_cli.enc(plaintext, *args), run_openssl.enc(plaintext, *args),
                      "UTF-8 passphrase")


KDF_VARIANTS = {
    "pbkdf2": ["-pbkdf2"],
    "pbkdf2-iter1": ["-pbkdf2", "-iter", "1"],
    "iter-implies-pbkdf2": ["-iter", "1000"],
    "iter-sha512": ["-iter", "20000", "-md", "sha512"],
    "pbkdf2-sha1": ["-pbkdf2", "-md", "sha1"],
    "pbkdf2-sha384": ["-pbkdf2", "-md", "sha384"],
    "pbkdf2-md5": ["-pbkdf2", "-md", "md5"],
    "legacy-sha256": [],
    "legacy-md5": ["-md", "md5"],
    "legacy-sha1": ["-md", "sha1"],
    "legacy-sha512": ["-md", "sha512"],
}
KDF_CIPHERS = ("aes-128-cbc", "aes-256-ctr", "aes-192-cfb8", "chacha20")


@pytest.mark.parametrize("name", KDF_CIPHERS)
@pytest.mark.parametrize("kdf", KDF_VARIANTS)
@pytest.mark.parametrize("salting", ("fixed-salt", "random-salt", "nosalt", "explicit-salt"))
def test_kdf_variants(name, kdf, salting, run_cli, run_openssl, random_bytes):
    """-iter/-md/legacy KDF under each way of salting.

    fixed -S and -nosalt are deterministic, so compared byte for byte; a
    random salt (default or explicit -salt) is checked by cross-decryption.
    """
    plaintext = random_bytes(333, f"kdf-{kdf}")
    args = [cipher(name).flag, "-pass", f"pass:{PASSPHRASE}", *KDF_VARIANTS[kdf]]
    args += {"fixed-salt": ["-S", SALT], "nosalt": ["-nosalt"],
             "explicit-salt": ["-salt"], "random-salt": []}[salting]

    ours = run_cli.enc(plaintext, *args)
    theirs = run_openssl.enc(plaintext, *args)
    if salting in ("fixed-salt", "nosalt"):
        assert_same_bytes(ours, theirs, "ciphertext vs openssl")
    else:
        assert ours[:8] == b"Salted__"
    assert_same_bytes(run_openssl.enc(ours, "-d", *args), plaintext, "openssl -d")
    assert_same_bytes(run_cli.enc(theirs, "-d", *args), plaintext, "warpcrypt -d")


def test_wrong_iteration_count_does_not_decrypt(run_cli, run_openssl, random_bytes):
    """-iter is really used: another count gives another key."""
    plaintext = random_bytes(32, "iter-used")
    base = ("-aes-128-ctr", "-pass", f"pass:{PASSPHRASE}", "-S", SALT)
    ciphertext = run_openssl.enc(plaintext, *base, "-iter", "5000")
    assert run_cli.enc(ciphertext, "-d", *base, "-iter", "5000") == plaintext
    assert run_cli.enc(ciphertext, "-d", *base, "-iter", "5001") != plaintext


# ---------------------------------------------------------------- -p and -P

PRINT_KDFS = {"pbkdf2": ["-pbkdf2"], "legacy": [], "iter-sha1": ["-iter", "7", "-md", "sha1"]}


@pytest.mark.parametrize("c", SHARED_CIPHERS, ids=str)
@pytest.mark.parametrize("kdf", PRINT_KDFS)
def test_p_lines_match_openssl(c, kdf, run_cli, run_openssl, random_bytes, tmp_path):
    """-p prints salt=/key=/iv = in uppercase hex exactly as openssl does, and
    still encrypts."""
    plaintext = random_bytes(40, "p-lines")
    src = tmp_path / "plain"
    src.write_bytes(plaintext)
    args = [c.flag, "-pass", f"pass:{PASSPHRASE}", "-S", SALT, *PRINT_KDFS[kdf],
            "-p", "-in", src]
    ours = run_cli("enc", *args, "-out", tmp_path / "ours").check()
    theirs = run_openssl("enc", *args, "-out", tmp_path / "theirs").check()
    assert ours.stdout.decode() == theirs.stdout.decode()
    assert re.search(rb"^key=[0-9A-F]+$", ours.stdout, re.M)
    assert_same_bytes((tmp_path / "ours").read_bytes(), (tmp_path / "theirs").read_bytes(),
                      "ciphertext written alongside -p")


@pytest.mark.parametrize("name", ("aes-128-cbc", "chacha20", "aes-256-ecb"))
@pytest.mark.parametrize("kdf", PRINT_KDFS)
def test_p_nosalt_matches_openssl(name, kdf, run_cli, run_openssl, tmp_path):
    args = ["enc", cipher(name).flag, "-pass", f"pass:{PASSPHRASE}", "-nosalt",
            *PRINT_KDFS[kdf], "-p", "-in", "/dev/null", "-out", tmp_path / "out"]
    assert run_cli(*args).check().stdout.decode() == run_openssl(*args).check().stdout.decode()


@pytest.mark.parametrize("name", ("aes-192-cbc", "aes-128-ofb", "chacha20"))
def test_p_on_decrypt_reports_salt_from_header(name, run_cli, run_openssl,
                                               random_bytes, tmp_path):
    c = cipher(name)
    args = (c.flag, "-pass", f"pass:{PASSPHRASE}", "-pbkdf2")
    salted = tmp_path / "salted"
    salted.write_bytes(run_openssl.enc(random_bytes(99, "p-decrypt"), *args))
    outs = [tool("enc", "-d", "-p", *args, "-in", salted, "-out", tmp_path / "pt").check()
            for tool in (run_cli, run_openssl)]
    assert outs[0].stdout.decode() == outs[1].stdout.decode()
    assert f"salt={salted.read_bytes()[8:16].hex().upper()}" in outs[0].stdout.decode()


@pytest.mark.parametrize("name", ("aes-128-cbc", "aes-256-ctr", "chacha20"))
def test_p_with_raw_key_prints_key_and_iv(name, run_cli, run_openssl, random_bytes, tmp_path):
    """openssl prints an uninitialised salt= line for raw keys, so only key=
    and iv = are compared."""
    c = cipher(name)
    key, iv = random_bytes(c.key_len, "p-raw-key"), random_bytes(c.iv_len, "p-raw-iv")
    args = ["enc", c.flag, "-K", key.hex(), "-iv", iv.hex(), "-p",
            "-in", "/dev/null", "-out", tmp_path / "out"]

    def key_lines(run):
        return [l for l in run.check().stdout.decode().splitlines()
                if l.startswith(("key=", "iv ="))]

    ours = key_lines(run_cli(*args))
    assert ours == key_lines(run_openssl(*args))
    assert ours == [f"key={key.hex().upper()}", f"iv ={iv.hex().upper()}"]


@pytest.mark.parametrize("c", SHARED_CIPHERS, ids=str)
def test_P_prints_and_exits(c, run_cli, run_openssl):
    args = ["enc", c.flag, "-pass", f"pass:{PASSPHRASE}", "-pbkdf2", "-S", SALT, "-P"]
    ours = run_cli(*args).check()  # stdin is /dev/null: nothing is read
    assert ours.stdout.decode() == run_openssl(*args).check().stdout.decode()


def test_P_random_salt_is_consistent(run_cli, run_openssl):
    """-P with a random salt prints a salt that reproduces the printed key."""
    args = ["enc", "-aes-256-cbc", "-pass", f"pass:{PASSPHRASE}", "-pbkdf2", "-P"]
    printed = run_cli(*args).check().stdout.decode()
    salt = re.search(r"^salt=([0-9A-F]{16})$", printed, re.M)
    assert salt, printed
    assert printed == run_openssl(*args, "-S", salt.group(1)).check().stdout.decode()


# ------------------------------------------------------- warpcrypt-only KDF

def pbkdf2_key_iv(phrase: str, salt_hex: str, key_len: int, iv_len: int,
                  md: str = "sha256", iterations: int = 10000) -> tuple[str, str]:
    material = hashlib.pbkdf2_hmac(md, phrase.encode(), bytes.fromhex(salt_hex),
                                   iterations, key_len + iv_len)
    return material[:key_len].hex().upper(), material[key_len:].hex().upper()


def bytes_to_key(phrase: str, salt_hex: str, key_len: int, iv_len: int,
                 md: str = "sha256") -> tuple[str, str]:
    """EVP_BytesToKey with one iteration: D_i = H(D_{i-1} || pass || salt)."""
    material, block = b"", b""
    while len(material) < key_len + iv_len:
        block = hashlib.new(md, block + phrase.encode() + bytes.fromhex(salt_hex)).digest()
        material += block
    return material[:key_len].hex().upper(), material[key_len:key_len + iv_len].hex().upper()


@pytest.mark.parametrize("name", ("salsa20", "salsa20-128", "chacha20", "aes-192-cfb"))
@pytest.mark.parametrize("kdf", ("pbkdf2", "iter-sha512", "legacy"))
def test_P_derivation_matches_hashlib(name, kdf, run_cli):
    """Key and IV are derived as openssl does (key || IV from one KDF run);
    computed here independently, so it also covers the Salsa20 ciphers."""
    c = cipher(name)
    extra, expected = {
        "pbkdf2": (["-pbkdf2"], pbkdf2_key_iv(PASSPHRASE, SALT, c.key_len, c.iv_len)),
        "iter-sha512": (["-iter", "1234", "-md", "sha512"],
                        pbkdf2_key_iv(PASSPHRASE, SALT, c.key_len, c.iv_len, "sha512", 1234)),
        "legacy": ([], bytes_to_key(PASSPHRASE, SALT, c.key_len, c.iv_len)),
    }[kdf]
    out = run_cli("enc", c.flag, "-pass", f"pass:{PASSPHRASE}", "-S", SALT, *extra, "-P")
    assert out.check().stdout.decode().splitlines() == [
        f"salt={SALT.upper()}", f"key={expected[0]}", f"iv ={expected[1]}"]
