"""Bad input: every failure must be clean.

Each test goes through the `expect_failure` fixture, which asserts a
non-zero exit (not a crash), exactly one clear line on stderr, nothing on
stdout, no key hex or passphrase in either stream, and the working
directory exactly as before: no output file, no leftover temp file beside
the target, the input and any pre-existing output untouched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from wc_support import cipher

# Distinctive material, so a leak into stderr cannot be a coincidence.
KEY_MATERIAL = "c0ffee00deadbeef0123456789abcdeffedcba98765432100f1e2d3c4b5a6978"
IV = "00112233445566778899aabbccddeeff"
PASSPHRASE = "hunter2 is not a passphrase"
WRONG_PASSPHRASE = "hunter3 is not one either"
SALT = "5a5a5a5a01020304"


def key_hex(n_bytes: int) -> str:
    return KEY_MATERIAL[: 2 * n_bytes]


AES256 = ("-aes-256-cbc", "-K", key_hex(32), "-iv", IV)
KEY = key_hex(32)

KEY_ERR = r"key|-k\b"
IV_ERR = r"\biv\b"
DECRYPT_ERR = r"bad decrypt|padding|wrong (key|pass)|decrypt"
ALIGN_ERR = r"block|multiple|align|pad|length"
INPUT_ERR = r"open|read|exist|found|directory|permission|denied|input"
OUTPUT_ERR = r"open|writ|creat|permission|denied|read-only|directory|exist|rename|output"
SAME_FILE_ERR = r"same|identical|overwrit|both|itself"

needs_non_root = pytest.mark.skipif(
    os.geteuid() == 0, reason="root ignores file permissions")


@dataclass
class Case:
    """A working directory holding `plain.bin`, and the failing command's
    defaults: input plain.bin, output out.bin (which must not appear)."""

    dir: Path
    plaintext: bytes

    def put(self, name: str, data: bytes) -> str:
        (self.dir / name).write_bytes(data)
        return name


@pytest.fixture
def case(workdir, random_bytes) -> Case:
    c = Case(workdir, random_bytes(1000, "bad-input-plain"))  # not a block multiple
    c.put("plain.bin", c.plaintext)
    return c


@pytest.fixture
def fails(case, expect_failure):
    """`fails(*enc_args, message=..., ...)` runs `enc` in the case directory;
    -in plain.bin and -out out.bin are added unless given."""

    def run(*args: str, message: str, secrets=(KEY,), **kwargs):
        args = list(args)
        if "-in" not in args and "stdin" not in kwargs:
            args += ["-in", "plain.bin"]
        if "-out" not in args:
            args += ["-out", "out.bin"]
        return expect_failure("enc", *args, cwd=case.dir, message=message,
                              secrets=secrets, **kwargs)

    return run


# ------------------------------------------------------------ keys and IVs

@pytest.mark.parametrize(
    "name, key",
    [
        ("aes-128-cbc", key_hex(15)),
        ("aes-128-cbc", key_hex(17)),
        ("aes-128-cbc", key_hex(32)),  # an AES-256 key for AES-128
        ("aes-256-ctr", key_hex(16)),
        ("aes-192-ecb", key_hex(24)[:-1]),  # odd number of hex digits
        ("chacha20", key_hex(16)),
        ("salsa20", key_hex(16)),
        ("salsa20-128", key_hex(32)),
    ],
    ids=["aes128-short", "aes128-long", "aes128-given-256", "aes256-given-128",
         "odd-digits", "chacha20-short", "salsa20-short", "salsa20-128-long"],
)
def test_wrong_key_length(name, key, fails):
    c = cipher(name)
    iv = ["-iv", IV[: 2 * c.iv_len]] if c.iv_len else []
    fails(c.flag, "-K", key, *iv, message=KEY_ERR, secrets=[key])


@pytest.mark.parametrize(
    "name, iv",
    [
        ("aes-128-cbc", IV[:30]),
        ("aes-128-cbc", IV + "00"),
        ("aes-256-ctr", IV[:-1]),  # odd number of hex digits
        ("chacha20", IV[:24]),  # a 12-byte RFC 8439 nonce is not openssl's 16-byte IV
        ("salsa20", IV),  # 16 bytes where 8 are expected
    ],
    ids=["cbc-short", "cbc-long", "ctr-odd-digits", "chacha20-12-byte", "salsa20-16-byte"],
)
def test_wrong_iv_length(name, iv, fails):
    c = cipher(name)
    key = key_hex(c.key_len)
    fails(c.flag, "-K", key, "-iv", iv, message=IV_ERR, secrets=[key])


def test_non_hex_key(fails):
    bad_key = KEY[:10] + "zz" + KEY[12:]
    fails("-aes-256-cbc", "-K", bad_key, "-iv", IV, message=r"hex|" + KEY_ERR,
          secrets=[bad_key])


def test_non_hex_iv(fails):
    fails("-aes-256-cbc", "-K", KEY, "-iv", IV[:-2] + "g0", message=r"hex|" + IV_ERR)


@pytest.mark.parametrize("name", ("aes-128-cbc", "aes-256-ctr", "aes-128-ofb",
                                  "chacha20", "salsa20"))
def test_missing_iv(name, fails):
    c = cipher(name)
    key = key_hex(c.key_len)
    fails(c.flag, "-K", key, message=IV_ERR, secrets=[key])


@pytest.mark.parametrize("spelling", (["-aes-512-cbc"], ["-c", "aes-512-cbc"],
                                      ["-c", "des-ede3-cbc"], ["-c", ""]),
                         ids=["dash-form", "c-form", "openssl-only-cipher", "empty"])
def test_unknown_cipher(spelling, fails):
    fails(*spelling, "-K", KEY, "-iv", IV, message=r"cipher")


# ---------------------------------------------------------------- decrypt

@pytest.mark.parametrize("kdf", (["-pbkdf2"], []), ids=["pbkdf2", "legacy-kdf"])
def test_wrong_passphrase(kdf, case, fails, run_openssl, random_bytes):
    """A salted file (laid out as openssl writes it, with a fixed salt so the
    test is deterministic) under the wrong passphrase."""
    body = run_openssl.enc(case.plaintext, "-aes-256-cbc", *kdf,
                           "-pass", f"pass:{PASSPHRASE}", "-S", SALT)
    salted = case.put("salted.bin", b"Salted__" + bytes.fromhex(SALT) + body)
    args = ("-d", "-aes-256-cbc", *kdf, "-pass", f"pass:{WRONG_PASSPHRASE}", "-in", salted)
    # Precondition: the reference also rejects it (this is not the 1 in 256
    # wrong key whose garbage happens to end in valid padding).
    assert run_openssl("enc", *args, "-out", "/dev/null", cwd=case.dir).returncode != 0
    fails(*args, message=DECRYPT_ERR, secrets=[PASSPHRASE, WRONG_PASSPHRASE])


def corrupt_last_block(ciphertext: bytes) -> bytes:
    return ciphertext[:-1] + bytes([ciphertext[-1] ^ 0x5A])


@pytest.mark.parametrize("name", ("aes-256-cbc", "aes-256-ecb"))
def test_bad_padding_corrupt_last_block(name, case, fails, run_openssl):
    c = cipher(name)
    keys = ["-K", KEY] + (["-iv", IV] if c.iv_len else [])
    bad = corrupt_last_block(run_openssl.enc(case.plaintext, c.flag, *keys))
    ct = case.put("corrupt.bin", bad)
    assert run_openssl("enc", "-d", c.flag, *keys, "-in", ct, "-out", "/dev/null",
                       cwd=case.dir).returncode != 0  # precondition, as above
    fails("-d", c.flag, *keys, "-in", ct, message=DECRYPT_ERR)


def test_bad_padding_zero_pad_byte(case, fails, run_openssl):
    """A last plaintext byte of 0 is never valid PKCS#7, whatever the key."""
    ct = case.put("zero-pad.bin",
                  run_openssl.enc(bytes(48), *AES256, "-nopad"))
    fails("-d", *AES256, "-in", ct, message=DECRYPT_ERR)


def test_truncated_padded_ciphertext(case, fails, run_openssl):
    ct = case.put("short.bin", run_openssl.enc(case.plaintext, *AES256)[:-5])
    fails("-d", *AES256, "-in", ct, message=DECRYPT_ERR + "|" + ALIGN_ERR)


@pytest.mark.parametrize("direction", ("-e", "-d"))
@pytest.mark.parametrize("name", ("aes-256-cbc", "aes-256-ecb"))
def test_nopad_needs_whole_blocks(direction, name, fails):
    c = cipher(name)
    keys = ["-K", KEY] + (["-iv", IV] if c.iv_len else [])
    fails(direction, c.flag, *keys, "-nopad", message=ALIGN_ERR)  # plain.bin is 1000 bytes


@pytest.mark.parametrize("content", (b"", b"Salted__\x01\x02\x03", b"Not salted, 32 bytes of data...."),
                         ids=["empty", "truncated-header", "no-magic"])
def test_salted_header_missing(content, case, fails):
    name = case.put("headerless.bin", content)
    fails("-d", "-aes-256-cbc", "-pbkdf2", "-pass", f"pass:{PASSPHRASE}", "-in", name,
          message=r"salt|magic|header|read|short|truncat|format|decrypt",
          secrets=[PASSPHRASE])


# ------------------------------------------------------- passphrase options

@pytest.mark.parametrize(
    "pass_arg",
    ["env:WC_TEST_UNSET_VARIABLE", "file:/nonexistent/passphrase.txt", "fd:987",
     "bogus:whatever", "hunter2-without-scheme"],
    ids=["env-unset", "file-missing", "fd-closed", "unknown-scheme", "no-scheme"],
)
def test_unusable_pass_source(pass_arg, fails, monkeypatch):
    monkeypatch.delenv("WC_TEST_UNSET_VARIABLE", raising=False)
    fails("-aes-256-cbc", "-pbkdf2", "-pass", pass_arg,
          message=r"pass|env|file|fd|read|source", secrets=["hunter2-without"])


@pytest.mark.parametrize(
    "options, message",
    [(["-pbkdf2", "-md", "nosuchdigest"], r"digest|-md|nosuchdigest"),
     # No -pbkdf2: the legacy-KDF warning must not come on top of the error.
     (["-md", "nosuchdigest"], r"digest|-md|nosuchdigest"),
     (["-iter", "abc"], r"iter|number|integer|invalid"),
     (["-iter", "0"], r"iter|positive|invalid|least"),
     (["-pbkdf2", "-S", "0011"], r"salt|-s\b"),
     (["-pbkdf2", "-S", "00112233445566zz"], r"salt|hex|-s\b")],
    ids=["unknown-md", "unknown-md-legacy-kdf", "iter-not-a-number", "iter-zero",
         "salt-short", "salt-not-hex"],
)
def test_bad_kdf_option(options, message, fails):
    fails("-aes-256-cbc", "-pass", f"pass:{PASSPHRASE}", *options,
          message=message, secrets=[PASSPHRASE])


# ------------------------------------------------------------ files

def test_missing_input_file(fails):
    fails(*AES256, "-in", "no-such-file.bin", message=INPUT_ERR)


def test_directory_as_input(case, fails):
    (case.dir / "a-directory").mkdir()
    fails(*AES256, "-in", "a-directory", message=INPUT_ERR)


@needs_non_root
def test_unreadable_input_file(case, fails):
    os.chmod(case.dir / "plain.bin", 0)
    fails(*AES256, message=INPUT_ERR)


def test_output_in_missing_directory(fails):
    fails(*AES256, "-out", "no-such-dir/out.bin", message=OUTPUT_ERR)


def test_output_parent_is_a_file(fails):
    fails(*AES256, "-out", "plain.bin/out.bin", message=OUTPUT_ERR)


def test_output_is_a_directory(case, fails):
    (case.dir / "a-directory").mkdir()
    fails(*AES256, "-out", "a-directory", message=OUTPUT_ERR)


@needs_non_root
def test_output_in_read_only_directory(case, fails):
    ro = case.dir / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    fails(*AES256, "-out", "read-only/out.bin", message=OUTPUT_ERR)


def test_output_unwritable_proc_file(fails):
    """Refused even to root."""
    fails(*AES256, "-out", "/proc/version", message=OUTPUT_ERR)


@pytest.mark.parametrize("spelling", ("same", "dot-slash", "absolute", "dot-dot",
                                      "symlink", "hardlink"))
@pytest.mark.parametrize("direction", ("-e", "-d"))
def test_in_and_out_are_the_same_file(spelling, direction, case, fails):
    if spelling == "dot-dot":
        (case.dir / "sub").mkdir()
    elif spelling == "symlink":
        (case.dir / "link.bin").symlink_to("plain.bin")
    elif spelling == "hardlink":
        os.link(case.dir / "plain.bin", case.dir / "hard.bin")
    out = {"same": "plain.bin", "dot-slash": "./plain.bin",
           "absolute": str(case.dir / "plain.bin"), "dot-dot": "sub/../plain.bin",
           "symlink": "link.bin", "hardlink": "hard.bin"}[spelling]
    # Decrypting a stream mode cannot fail on content: only the aliasing is wrong.
    fails(direction, "-aes-256-ctr", "-K", KEY, "-iv", IV, "-in", "plain.bin", "-out", out,
          message=SAME_FILE_ERR)


# ------------------------------------ a pre-existing output survives failure

def _bad_decrypt(case, run_openssl):
    ct = case.put("zero-pad.bin", run_openssl.enc(bytes(48), *AES256, "-nopad"))
    return ["-d", *AES256, "-in", ct], DECRYPT_ERR


FAILURES = {
    "bad-decrypt": _bad_decrypt,
    "wrong-key-length": lambda case, _: (["-aes-256-cbc", "-K", KEY[:-2], "-iv", IV], KEY_ERR),
    "missing-input": lambda case, _: ([*AES256, "-in", "absent.bin"], INPUT_ERR),
    "nopad-misaligned": lambda case, _: ([*AES256, "-nopad"], ALIGN_ERR),
}


@pytest.mark.parametrize("failure", FAILURES)
def test_existing_output_left_untouched(failure, case, fails, run_openssl):
    case.put("existing.bin", b"precious old content\n")
    os.utime(case.dir / "existing.bin", ns=(1_000_000_000, 1_000_000_000))
    args, message = FAILURES[failure](case, run_openssl)
    fails(*args, "-out", "existing.bin", message=message)


# --------------------------------------------------------- pipes, options

def test_bad_key_with_pipes(case, expect_failure):
    """stdin to stdout: nothing at all may reach stdout."""
    expect_failure("enc", "-aes-256-cbc", "-K", KEY[:-2], "-iv", IV, stdin=case.plaintext,
                   cwd=case.dir, message=KEY_ERR, secrets=[KEY[:-2]])


def test_gpu_backend_without_device_is_an_error(fails, cuda_device_present):
    if cuda_device_present:
        pytest.skip("`warpcrypt devices` lists a CUDA device")
    fails("--backend", "gpu", "-aes-256-ctr", "-K", KEY, "-iv", IV,
          message=r"device|cuda|gpu")


@pytest.mark.parametrize(
    "args, message",
    [(["--backend", "tpu"], r"backend|tpu|invalid"),
     (["--threads", "many"], r"thread|number|integer|invalid"),
     (["-no-such-option"], r"option|unknown|unrecognized|invalid"),
     (["-iv"], r"\biv\b|missing|argument|value|requires")],
    ids=["unknown-backend", "threads-not-a-number", "unknown-option", "option-without-value"],
)
def test_bad_option(args, message, fails):
    # The bad option comes last, where a missing value is really missing.
    fails("-aes-256-ctr", "-K", KEY, "-iv", IV, "-in", "plain.bin", "-out", "out.bin", *args,
          message=message)
