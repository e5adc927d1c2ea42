"""`openssl enc`'s remaining flags, each against the real openssl: -a,
-base64 and -A (the text byte for byte, and read back), -k and -kfile (and
their rank above -pass), `-` for standard input and output, -bufsize,
-debug, -none and -v; and the flags warpcrypt refuses on purpose."""

from __future__ import annotations

import re

import pytest

from wc_support import assert_same_bytes, random_bytes

KEY = "00112233445566778899aabbccddeeff"
SALT = ["-S", "0123456789abcdef"]

# Around base64's groups (3 bytes) and lines (48 bytes each), and more than
# one read of the coder (48 KiB).
SIZES = [0, 1, 2, 3, 47, 48, 49, 96, 1000, 3 * 48 * 1024 + 5]
ARMOR = [["-a"], ["-base64"], ["-a", "-A"], ["-A", "-base64"]]


def both(run_cli, run_openssl, data: bytes, *args: str) -> bytes:
    """The output of warpcrypt and openssl for `enc args` over `data`,
    asserted equal; returns it."""
    ours = run_cli.enc(data, *args)
    theirs = run_openssl.enc(data, *args)
    assert_same_bytes(ours, theirs, f"enc {' '.join(args)}")
    return ours


@pytest.mark.parametrize("armor", ARMOR, ids="_".join)
@pytest.mark.parametrize("size", SIZES)
def test_base64_text_is_openssls_and_reads_back(armor, size, run_cli, run_openssl):
    plaintext = random_bytes(size, f"armor-{size}")
    args = ["-aes-128-cbc", "-K", KEY, "-iv", KEY, *armor]
    text = both(run_cli, run_openssl, plaintext, *args)
    lines = text.split(b"\n")
    if "-A" in armor:
        assert b"\n" not in text
    else:
        assert all(len(line) <= 64 for line in lines)
    assert_same_bytes(run_cli.enc(text, "-d", *args), plaintext, "warpcrypt reads its base64")
    assert_same_bytes(run_openssl.enc(text, "-d", *args), plaintext, "openssl reads warpcrypt's base64")


@pytest.mark.parametrize("kdf", [[], ["-pbkdf2"], ["-iter", "7", "-md", "sha512"]], ids=["legacy", "pbkdf2", "iter"])
def test_passphrase_with_base64_and_salt_header(kdf, run_cli, run_openssl):
    """The Salted__ header is inside the base64, both ways, salt random or given."""
    plaintext = random_bytes(5000, "salted-armor")
    args = ["-aes-256-ctr", "-pass", "pass:correct horse", *kdf, "-a"]
    both(run_cli, run_openssl, plaintext, *args, *SALT)
    by_openssl = run_openssl.enc(plaintext, *args)
    assert_same_bytes(run_cli.enc(by_openssl, "-d", *args), plaintext, "openssl's salted base64, random salt")


@pytest.mark.parametrize("spelling", [["-k", "hunter2"], ["-pass", "pass:x", "-k", "hunter2"],
                                      ["-k", "hunter2", "-pass", "pass:x"]],
                         ids=["k", "pass_then_k", "k_then_pass"])
def test_k_is_the_passphrase_and_beats_pass(spelling, run_cli, run_openssl):
    both(run_cli, run_openssl, random_bytes(777, "k"), "-aes-192-cbc", "-pbkdf2", *spelling, *SALT)


@pytest.mark.parametrize("line", [b"pw\n", b"pw\r\n", b"pw", b"pass word \r\r\n\n", b"x" * 127 + b"\n",
                                  b"first\nsecond\n"],
                         ids=["lf", "crlf", "no_newline", "trailing_crs", "127_bytes", "two_lines"])
def test_kfile_reads_the_first_line_as_openssl(line, run_cli, run_openssl, tmp_path):
    (tmp_path / "kfile").write_bytes(line)
    both(run_cli, run_openssl, random_bytes(100, "kfile"), "-aes-128-ctr", "-pbkdf2", "-kfile",
         str(tmp_path / "kfile"), *SALT)


def test_later_of_k_and_kfile_wins_as_in_openssl(run_cli, run_openssl, tmp_path):
    (tmp_path / "kfile").write_bytes(b"from the file\n")
    kfile = str(tmp_path / "kfile")
    data = random_bytes(100, "k-kfile")
    for order in (["-k", "typed", "-kfile", kfile], ["-kfile", kfile, "-k", "typed"]):
        both(run_cli, run_openssl, data, "-aes-128-cbc", "-pbkdf2", *order, *SALT)


@pytest.mark.parametrize("content, message", [
    (b"\n", r"zero length password"),
    (b"\r\n", r"zero length password"),
    (b"x" * 128 + b"\n", r"longer than 127 bytes, which openssl would cut short"),
    (b"", r"error reading passphrase"),
])
def test_kfile_refuses_what_openssl_would_mangle(content, message, expect_failure, workdir):
    (workdir.parent / "kfile").write_bytes(content)
    (workdir / "p").write_bytes(b"data")
    expect_failure("enc", "-aes-128-cbc", "-kfile", str(workdir.parent / "kfile"), "-in", "p", "-out", "c",
                   cwd=workdir, message=message)


def test_dash_is_standard_input_and_output(run_cli, run_openssl):
    data = random_bytes(3000, "dash")
    args = ["-aes-128-ctr", "-K", KEY, "-iv", KEY]
    ours = run_cli("enc", *args, "-in", "-", "-out", "-", stdin=data).check().stdout
    assert_same_bytes(ours, run_openssl.enc(data, *args), "-in - -out -")


@pytest.mark.parametrize("extra", [["-bufsize", "4k"], ["-bufsize", "100"], ["-debug"]], ids="_".join)
def test_accepted_flags_leave_the_output_alone(extra, run_cli, run_openssl):
    both(run_cli, run_openssl, random_bytes(20000, "accepted"), "-aes-256-cbc", "-K", KEY * 2, "-iv", KEY, *extra)


@pytest.mark.parametrize("args", [["-none"], ["-none", "-a"], ["-a"], ["-base64", "-A"],
                                  ["-aes-128-cbc", "-K", KEY, "-iv", KEY, "-none", "-a"],
                                  ["-none", "-aes-128-cbc", "-K", KEY, "-iv", KEY]], ids="_".join)
def test_no_cipher_copies_or_only_base64s(args, run_cli, run_openssl):
    """-none without a cipher copies; a cipher named anywhere wins over it, as in openssl 3."""
    data = random_bytes(4000, "none")
    text = both(run_cli, run_openssl, data, *args)
    assert_same_bytes(run_cli.enc(text, "-d", *args), data, "decoded back")


def test_v_prints_openssls_counts(run_cli, run_openssl, tmp_path):
    data = random_bytes(1000, "verbose")
    (tmp_path / "p").write_bytes(data)
    lines = {}
    for name, tool in (("warpcrypt", run_cli), ("openssl", run_openssl)):
        result = tool("enc", "-aes-128-cbc", "-pass", "pass:x", "-pbkdf2", "-a", "-v", "-bufsize", "1k",
                      "-in", tmp_path / "p", "-out", tmp_path / f"c-{name}").check()
        lines[name] = [line for line in result.stderr_lines
                       if re.match(r"bufsize=|bytes (read|written)", line)]
    assert lines["warpcrypt"] == lines["openssl"] and len(lines["openssl"]) == 3, lines


@pytest.mark.parametrize("args, reason", [
    (["-engine", "x"], r"-engine is not supported: .*backends"),
    (["-provider", "legacy"], r"-provider is not supported: .*providers"),
    (["-provider-path", "/p"], r"-provider-path is not supported"),
    (["-propquery", "fips=yes"], r"-propquery is not supported"),
    (["-rand", "/dev/zero"], r"-rand is not supported: .*random generator"),
    (["-writerand", "f"], r"-writerand is not supported"),
    (["-z"], r"-z is not supported: .*compress"),
])
def test_refused_openssl_flags_say_why(args, reason, expect_failure, run_cli, workdir):
    expect_failure("enc", "-aes-128-ctr", "-K", KEY, "-iv", KEY, *args, cwd=workdir, message=reason)
    assert run_cli("enc", "-aes-128-ctr", *args).returncode == 2


@pytest.mark.parametrize("text, message", [
    (b"this is not base64 at all!!!\n", r"not base64"),
    (b"QUJD\nRA\n", r"ends inside a group"),
])
def test_bad_base64_is_one_error(text, message, expect_failure, workdir):
    (workdir / "c").write_bytes(text)
    expect_failure("enc", "-d", "-a", "-aes-128-ctr", "-K", KEY, "-iv", KEY, "-in", "c", "-out", "p", cwd=workdir,
                   message=message)


def test_no_cipher_and_no_none_is_an_error(expect_failure, workdir):
    expect_failure("enc", "-K", KEY, cwd=workdir, message=r"no cipher given: .*-none")
