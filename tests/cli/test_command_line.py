"""The command line every command shares (tools/cli/command_line.h): one
parser, openssl's one-dash spellings, one reading of sizes, help on request,
and one error line, never showing a secret, for anything it cannot take."""

from __future__ import annotations

import re

import pytest

from wc_support import MIB, assert_same_bytes, cipher, raw_key_args, random_bytes

COMMANDS = ("enc", "speed", "seal", "open", "devices")
KIB = 1024

# Distinctive, so that a leak into an error message cannot be a coincidence.
KEY = "c0ffee00deadbeef0123456789abcdeffedcba98765432100f1e2d3c4b5a6978"
NOT_HEX_KEY = KEY[:20] + "zz" + KEY[22:]
IV = "00112233445566778899aabbccddeeff"
PASSPHRASE = "hunter2 is not a passphrase"
SALT = "5a5a5a5a01020304"


def keyed(name: str) -> list[str]:
    c = cipher(name)
    return [c.flag, *raw_key_args(c, random_bytes(c.key_len, f"k-{name}"), random_bytes(c.iv_len, f"i-{name}"))]


# ------------------------------------------------------------------- help

def test_help_lists_every_command(run_cli):
    text = run_cli("--help").check().stdout.decode()
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\s", text, re.M), f"--help does not list {command}:\n{text}"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_command_prints_what_dash_dash_help_prints(command, run_cli):
    by_command = run_cli("help", command).check()
    by_option = run_cli(command, "--help").check()
    assert by_command.stdout == by_option.stdout and not by_command.stderr, by_command.describe()
    assert f"warpcrypt {command}" in by_command.stdout.decode()


def test_help_names_options_as_they_are_typed(run_cli):
    text = run_cli("help", "enc").check().stdout.decode()
    for spelling in ("-in FILE", "-out FILE", "-pass SOURCE", "-K HEX", "-iv HEX", "-pbkdf2", "-iter N",
                     "-nosalt", "-c, -cipher NAME", "--offset SIZE", "--chunk-size SIZE"):
        assert re.search(rf"^  {re.escape(spelling)}\s", text, re.M), f"no '{spelling}' in:\n{text}"
    assert not re.search(r"--(in|K|pass)\b", text), f"the parser's own names show:\n{text}"


@pytest.mark.parametrize("spelling", ("-h", "-help", "--help"))
def test_devices_help(spelling, run_cli):
    result = run_cli("devices", spelling).check()
    assert "warpcrypt devices" in result.stdout.decode() and not result.stderr, result.describe()


def test_help_for_an_unknown_command(expect_failure, workdir):
    expect_failure("help", "frobnicate", cwd=workdir, message=r"^warpcrypt: unknown command 'frobnicate'")


# ---------------------------------------------------------- what it refuses

@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_is_one_line(command, expect_failure, workdir):
    expect_failure(command, "-no-such-option", cwd=workdir,
                   message=rf"^warpcrypt: unknown option .*'-no-such-option' \(see 'warpcrypt {command} --help'\)$")


def test_an_unknown_command_is_one_line(expect_failure, workdir):
    expect_failure("frobnicate", "-in", "x", cwd=workdir,
                   message=r"^warpcrypt: unknown command 'frobnicate' \(see 'warpcrypt --help'\)$")


def test_a_command_named_after_an_unknown_word(expect_failure, workdir):
    """The parser enters a command wherever its name comes first; its
    secrets are kept from the parser there too (found by fuzzing)."""
    expect_failure("frobnicate", "enc", "--K", KEY, cwd=workdir, message=r"unknown command 'frobnicate'",
                   secrets=[KEY])


def test_help_before_a_command_is_its_help(run_cli):
    assert run_cli("--help", "enc").check().stdout == run_cli("enc", "--help").check().stdout


@pytest.mark.parametrize("args, message", [
    (["-nopad", "-K"], r"option -K needs a value"),
    (["--nopad=yes"], r"option --nopad takes no value"),
    (["--", "-nopad"], r"unknown option or cipher '--'"),
    (["-nopadx"], r"unknown option or cipher '-nopadx'"),
], ids=["value-missing", "flag-given-a-value", "double-dash", "glued-letters"])
def test_malformed_options(args, message, expect_failure, workdir):
    expect_failure("enc", "-aes-256-ctr", *args, cwd=workdir, message=message)


@pytest.mark.parametrize("args, secret", [
    (["-K", NOT_HEX_KEY, "-iv", IV], NOT_HEX_KEY),
    (["-K" + KEY, "-iv", IV], KEY),
    (["--K=" + NOT_HEX_KEY, "-iv", IV], NOT_HEX_KEY),
    (["-pbkdf2", "-pass", "hunter:" + PASSPHRASE], PASSPHRASE),
    (["-pbkdf2", "-passpass:" + PASSPHRASE], PASSPHRASE),
    (["-pbkdf2", "--pass=" + PASSPHRASE], PASSPHRASE),
    (["-pbkdf2", "-k" + PASSPHRASE], PASSPHRASE),  # openssl's -k PASSWORD, which enc does not take
], ids=["bad-K", "K-glued", "bad-K-attached", "bad-pass", "pass-glued", "bad-pass-attached", "openssl-k-glued"])
def test_no_error_shows_a_secret(args, secret, expect_failure, workdir):
    (workdir / "p").write_bytes(b"data")
    expect_failure("enc", "-aes-256-ctr", *args, "-in", "p", "-out", "o", cwd=workdir,
                   message=r"-K|-pass|-k\b|\bkey\b", secrets=[secret])


# ------------------------------------------------- openssl's spellings work

def test_enc_takes_openssls_one_dash_options(run_cli, run_openssl, workdir):
    plaintext = random_bytes(5000, "one-dash")
    (workdir / "p").write_bytes(plaintext)
    derived = ["-aes-256-cbc", "-pbkdf2", "-iter", "1000", "-md", "sha512", "-S", SALT,
               "-pass", f"pass:{PASSPHRASE}"]
    raw = ["-aes-128-cbc", "-nosalt", "-nopad", "-K", KEY[:32], "-iv", IV]
    for name, args in (("derived", derived), ("raw", raw)):
        data = plaintext if name == "derived" else plaintext[:4096]  # -nopad: whole blocks
        (workdir / name).write_bytes(data)
        for tool, out in ((run_cli, "ours"), (run_openssl, "theirs")):
            tool("enc", "-e", *args, "-in", name, "-out", f"{name}.{out}", cwd=workdir).check()
        assert_same_bytes((workdir / f"{name}.ours").read_bytes(), (workdir / f"{name}.theirs").read_bytes(), name)
        run_cli("enc", "-d", *args, "-in", f"{name}.ours", "-out", f"{name}.back", cwd=workdir).check()
        assert_same_bytes((workdir / f"{name}.back").read_bytes(), data, f"{name} decrypted")


def test_seal_and_open_take_one_dash_options(run_cli, workdir):
    plaintext = random_bytes(10000, "seal-one-dash")
    (workdir / "p").write_bytes(plaintext)
    (workdir / "key").write_bytes(random_bytes(32, "seal-one-dash-key"))
    run_cli("seal", "-chacha20-poly1305", "-kfile", "key", "-in", "p", "-out", "s1", cwd=workdir).check()
    run_cli("seal", "-c", "aes-128-gcm", "-pass", f"pass:{PASSPHRASE}", "-iter", "1000", "-md", "sha512",
            "-in", "p", "-out", "s2", cwd=workdir).check()
    run_cli("open", "-kfile", "key", "-in", "s1", "-out", "o1", cwd=workdir).check()
    run_cli("open", "-pass", f"pass:{PASSPHRASE}", "-in", "s2", "-out", "o2", cwd=workdir).check()
    assert_same_bytes((workdir / "o1").read_bytes(), plaintext, "opened with -kfile")
    assert_same_bytes((workdir / "o2").read_bytes(), plaintext, "opened with -pass")


def test_a_value_is_taken_as_it_stands(run_cli, run_openssl, workdir):
    """Files named like options: the argument after -in is its value, as
    openssl takes it, never an option."""
    plaintext = random_bytes(1000, "odd-names")
    (workdir / "-nosalt").write_bytes(plaintext)
    args = keyed("aes-128-ctr")
    run_cli("enc", *args, "-in", "-nosalt", "-out", "-d", cwd=workdir).check()
    assert_same_bytes((workdir / "-d").read_bytes(), run_openssl.enc(plaintext, *args), "-out -d")


def test_a_later_option_overrides_an_earlier_one(run_cli, run_openssl):
    plaintext = random_bytes(1000, "order")
    args = keyed("aes-128-cbc")
    assert_same_bytes(run_cli.enc(plaintext, "-d", "-e", *args), run_openssl.enc(plaintext, *args), "-d -e")


# ------------------------------------------------------------------- sizes

@pytest.mark.parametrize("offset, start", [("1000", 1000), ("1K", KIB), ("3k", 3 * KIB), ("1M", MIB),
                                           ("1G", 1 << 30)])
def test_enc_and_open_read_sizes_alike(offset, start, run_cli, workdir):
    """One size parser: `open --offset 1G` (the README's) and enc's range
    take the same forms, and give the same bytes."""
    plaintext = random_bytes(16 * KIB, "sizes")
    (workdir / "p").write_bytes(plaintext)
    (workdir / "key").write_bytes(random_bytes(32, "sizes-key"))
    args = keyed("aes-256-ctr")
    run_cli("enc", *args, "-in", "p", "-out", "c", cwd=workdir).check()
    run_cli("seal", "-kfile", "key", "--chunk-size", "4K", "-in", "p", "-out", "s", cwd=workdir).check()
    expected = plaintext[start:start + 4 * KIB]
    by_enc = run_cli("enc", "-d", *args, "--offset", offset, "--length", "4K", "-in", "c", cwd=workdir).check()
    by_open = run_cli("open", "-kfile", "key", "--offset", offset, "--length", "4K", "-in", "s", cwd=workdir).check()
    assert_same_bytes(by_enc.stdout, expected, f"enc --offset {offset}")
    assert_same_bytes(by_open.stdout, expected, f"open --offset {offset}")


@pytest.mark.parametrize("args", [
    ["enc", "-aes-256-ctr", "--offset"], ["enc", "-aes-256-ctr", "--length"], ["enc", "-aes-256-ctr", "--chunk-size"],
    ["open", "--offset"], ["open", "--length"], ["open", "--window"],
    ["seal", "--chunk-size"], ["seal", "--window"], ["speed", "-bytes"], ["speed", "--chunk-size"],
    ["age", "--window"], ["age", "-d", "--window"],
], ids=lambda args: "-".join(a.strip("-") for a in args if a != "-aes-256-ctr"))
def test_every_size_option_refuses_the_same_way(args, expect_failure, workdir):
    expect_failure(*args, "1Q", cwd=workdir, message=rf"^warpcrypt: invalid number '1Q' for {args[-1]}$")


def test_speed_takes_size_suffixes(run_cli):
    result = run_cli("speed", "-evp", "aes-128-ctr", "-bytes", "1K", "-seconds", "0.05", "--threads", "1").check()
    assert re.search(r"\b1024 B\b", result.stdout.decode()), result.describe()
