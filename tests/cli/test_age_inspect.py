"""`warpcrypt age-inspect` on files made by Debian's `age` (1.1.1, the Go
reference) and by `warpcrypt age`: X25519 files to one and several
recipients, scrypt passphrase files, binary and armored, empty and at the
payload's 64 KiB chunk edges, from a path and from a pipe. The expected
facts are worked out here from the file's bytes with Python's own base64
and age's STREAM arithmetic, not by the library; the text and the JSON are
age 1.3's age-inspect's (its cmd/age-inspect and doc/age-inspect.1).

Then the refusals: one line on stderr and the exit status of docs/cli.md
(4 for a file that breaks the format, 3 for one that cannot be read, 2 for
a usage error)."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, mlkem
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from terminal_support import ask
from test_age_pq_reference import bech32_encode
from wc_support import AGE_CHUNK, reference_age

AGE, AGE_KEYGEN = reference_age()

CHUNK = AGE_CHUNK
TAG = 16
NONCE = 16
SIZES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 1]
PASSPHRASE = "correct horse battery staple"
BEGIN = b"-----BEGIN AGE ENCRYPTED FILE-----"
END = b"-----END AGE ENCRYPTED FILE-----"
EXIT_USAGE, EXIT_IO, EXIT_FORMAT = 2, 3, 4


def run(argv, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, timeout=120)


def ok(argv, stdin: bytes | None = None) -> bytes:
    result = run(argv, stdin)
    assert result.returncode == 0, f"{argv}: {result.stderr.decode(errors='replace')}"
    return result.stdout


@pytest.fixture(scope="module")
def recipients(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("inspect-keys")
    keys = []
    for name in ("one", "two", "three"):
        ok([AGE_KEYGEN, "-o", folder / name])
        keys.append(ok([AGE_KEYGEN, "-y", folder / name]).decode().strip())
    return keys


# ---- what a file should say, from its bytes ----------------------------------


def dearmor(text: bytes) -> bytes:
    lines = text.strip().replace(b"\r\n", b"\n").split(b"\n")
    assert lines[0] == BEGIN and lines[-1] == END
    return base64.b64decode(b"".join(lines[1:-1]), validate=True)


def expected(file: bytes) -> dict:
    """age-inspect's JSON object for `file`, worked out independently."""
    armored = file.lstrip().startswith(BEGIN)
    binary = dearmor(file) if armored else file
    header_len = binary.index(b"\n", binary.index(b"\n--- ") + 1) + 1
    types = [line.split(b" ")[1].decode() for line in binary[:header_len].split(b"\n") if line.startswith(b"-> ")]
    sealed = len(binary) - header_len - NONCE
    chunks = max(1, -(-sealed // (CHUNK + TAG)))
    payload = sealed - chunks * TAG
    classical = {"X25519", "ssh-rsa", "ssh-ed25519", "p256tag", "piv-p256"}
    quantum_safe = {"scrypt", "mlkem768x25519", "mlkem768p256tag"}
    postquantum = ("no" if classical & set(types) else "yes" if quantum_safe & set(types) else "unknown")
    return {
        "version": "age-encryption.org/v1",
        "postquantum": postquantum,
        "armor": armored,
        "stanza_types": types,
        "sizes": {
            "header": header_len,
            "armor": len(file) - len(binary),
            "overhead": NONCE + chunks * TAG,
            "min_payload": payload,
            "max_payload": payload,
            "min_padding": 0,
            "max_padding": 0,
        },
    }


def expected_text(name: str, facts: dict) -> str:
    """age-inspect's summary, as its cmd/age-inspect prints it."""
    sizes = facts["sizes"]
    lines = [f'{name} is an age file, version "age-encryption.org/v1".', ""]
    if facts["armor"]:
        lines += ["This file is ASCII-armored.", ""]
    lines += ["This file is encrypted to the following recipient types:"]
    # Go's %q: a type is printable ASCII, so only " and \ are escaped.
    lines += ['  - "' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in facts["stanza_types"]]
    lines += [""]
    if facts["postquantum"] == "yes":
        lines += ["This file uses post-quantum encryption.", ""]
    elif facts["postquantum"] == "no":
        lines += ["This file does NOT use post-quantum encryption.", ""]
    lines += ["Size breakdown (assuming it decrypts successfully):", ""]
    lines += [f"    Header              {sizes['header']:12d} bytes"]
    if facts["armor"]:
        lines += [f"    Armor overhead      {sizes['armor']:12d} bytes"]
    lines += [f"    Encryption overhead {sizes['overhead']:12d} bytes",
              f"    Payload             {sizes['min_payload']:12d} bytes",
              "                        -------------------"]
    total = sizes["header"] + sizes["armor"] + sizes["overhead"] + sizes["min_payload"]
    lines += [f"    Total               {total:12d} bytes", "", "Tip: for machine-readable output, use --json."]
    return "\n".join(lines) + "\n"


def go_json(facts: dict) -> str:
    """The object as age-inspect's Go encoder writes it: four-space indent,
    <, > and & escaped, an empty list as null."""
    shown = dict(facts, stanza_types=facts["stanza_types"] or None)
    text = json.dumps(shown, indent=4) + "\n"
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def check_inspection(warpcrypt_binary, path: Path, plain_len: int) -> dict:
    """Inspects `path` as a file and through a pipe, in both forms, against
    what its bytes say; returns the facts."""
    file = path.read_bytes()
    facts = expected(file)
    assert facts["sizes"]["min_payload"] == plain_len
    assert sum(facts["sizes"][k] for k in ("header", "armor", "overhead", "min_payload")) == len(file)
    as_file = ok([warpcrypt_binary, "age-inspect", "--json", path])
    # age-inspect's field names, in its order, four-space indented.
    assert as_file.decode() == go_json(facts)
    assert ok([warpcrypt_binary, "age-inspect", "--json"], stdin=file) == as_file
    assert ok([warpcrypt_binary, "age-inspect", "--json", "-"], stdin=file) == as_file
    assert ok([warpcrypt_binary, "age-inspect", path]).decode() == expected_text(str(path), facts)
    assert ok([warpcrypt_binary, "age-inspect"], stdin=file).decode() == expected_text("<stdin>", facts)
    return facts


def plaintext(tmp_path: Path, size: int) -> Path:
    path = tmp_path / f"plain-{size}"
    path.write_bytes(bytes(range(256)) * (size // 256) + bytes(size % 256))
    return path


# ---- files that inspect ---------------------------------------------------------


@pytest.mark.parametrize("armor", [False, True], ids=["binary", "armored"])
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("maker", ["age", "warpcrypt"])
def test_x25519_files(warpcrypt_binary, recipients, tmp_path, maker, size, armor):
    count = 1 if size % 2 == 0 else 3
    keys = [arg for r in recipients[:count] for arg in ("-r", r)]
    tool = [AGE] if maker == "age" else [warpcrypt_binary, "age"]
    encrypted = tmp_path / "file.age"
    ok([*tool, *keys, *(["-a"] if armor else []), "-o", encrypted, plaintext(tmp_path, size)])
    facts = check_inspection(warpcrypt_binary, encrypted, size)
    assert facts["stanza_types"] == ["X25519"] * count
    assert facts["armor"] is armor and facts["postquantum"] == "no"
    # At the chunk edges: a full last chunk is no extra empty one.
    chunks = max(1, -(-size // CHUNK))
    assert facts["sizes"]["overhead"] == NONCE + TAG * chunks


@pytest.mark.parametrize("armor", [False, True], ids=["binary", "armored"])
def test_passphrase_files_from_warpcrypt(warpcrypt_binary, tmp_path, armor):
    encrypted = tmp_path / "file.age"
    ok([warpcrypt_binary, "age", "-p", "-pass", f"pass:{PASSPHRASE}", "--work-factor", "10",
        *(["-a"] if armor else []), "-o", encrypted, plaintext(tmp_path, CHUNK + 5)])
    facts = check_inspection(warpcrypt_binary, encrypted, CHUNK + 5)
    assert facts["stanza_types"] == ["scrypt"] and facts["postquantum"] == "yes"
    assert "This file uses post-quantum encryption." in ok([warpcrypt_binary, "age-inspect", encrypted]).decode()


def test_passphrase_file_from_age(warpcrypt_binary, tmp_path):
    encrypted = tmp_path / "by-age.age"
    status, shown = ask([AGE, "-p", "-a", "-o", encrypted, plaintext(tmp_path, 3)], [PASSPHRASE, PASSPHRASE])
    assert status == 0, shown
    facts = check_inspection(warpcrypt_binary, encrypted, 3)
    assert facts["stanza_types"] == ["scrypt"] and facts["armor"] is True


def test_tagged_and_hybrid_recipients(warpcrypt_binary, tmp_path):
    """age 1.3's stanza types as files carry them: p256tag is a classical
    key's, mlkem768p256tag and mlkem768x25519 are post-quantum ones."""
    point = ec.generate_private_key(ec.SECP256R1()).public_key()
    tag = bech32_encode("age1tag", point.public_bytes(Encoding.X962, PublicFormat.CompressedPoint))
    mlkem_key = mlkem.MLKEM768PrivateKey.generate().public_key().public_bytes_raw()
    tagpq = bech32_encode("age1tagpq", mlkem_key + point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint))
    ok([warpcrypt_binary, "age-keygen", "-pq", "-o", tmp_path / "pq-key"])
    hybrid = ok([warpcrypt_binary, "age-keygen", "-y", tmp_path / "pq-key"]).decode().strip()
    cases = [([tag], ["p256tag"], "no"), ([hybrid, tagpq], ["mlkem768x25519", "mlkem768p256tag"], "yes")]
    for recipients, types, verdict in cases:
        encrypted = tmp_path / f"{verdict}.age"
        ok([warpcrypt_binary, "age", *[a for r in recipients for a in ("-r", r)], "-o", encrypted,
            plaintext(tmp_path, 100)])
        facts = check_inspection(warpcrypt_binary, encrypted, 100)
        assert facts["stanza_types"] == types and facts["postquantum"] == verdict


def test_needs_no_identity_and_reads_stanza_types_it_cannot_open(warpcrypt_binary, recipients, tmp_path):
    """A stanza type this build does not decrypt (a plugin's, ssh-ed25519) is
    still listed: inspecting unwraps nothing."""
    encrypted = ok([AGE, "-r", recipients[0]], stdin=b"hello")
    header_end = encrypted.index(b"\n---")
    # Two stanzas before the MAC line, the second with an empty body.
    extra = b"-> ssh-ed25519 Ab1xyz AAAA\nAAAA\n-> age-plugin-yubikey-v1 x\n\n"
    crafted = encrypted[:header_end + 1] + extra + encrypted[header_end + 1:]
    (tmp_path / "crafted.age").write_bytes(crafted)
    facts = check_inspection(warpcrypt_binary, tmp_path / "crafted.age", 5)
    assert facts["stanza_types"] == ["X25519", "ssh-ed25519", "age-plugin-yubikey-v1"]
    assert facts["postquantum"] == "no"
    # Only unknown types: neither yes nor no, and no sentence about it.
    only_plugin = crafted.replace(b"-> X25519 ", b"-> something-else ").replace(b"-> ssh-ed25519 ", b"-> plugin2 ")
    (tmp_path / "plugin.age").write_bytes(only_plugin)
    text = ok([warpcrypt_binary, "age-inspect", tmp_path / "plugin.age"]).decode()
    assert "post-quantum" not in text
    assert json.loads(ok([warpcrypt_binary, "age-inspect", "--json", tmp_path / "plugin.age"]))[
        "postquantum"] == "unknown"


def test_no_stanzas_and_types_json_escapes(warpcrypt_binary, recipients, tmp_path):
    """A header without stanzas is a header (the parser takes it; no
    identity would open it): its types are JSON's null, as age-inspect's.
    Types holding <, > and & are escaped in the JSON as Go escapes them."""
    encrypted = ok([AGE, "-r", recipients[0]], stdin=b"abc")
    start = encrypted.index(b"\n") + 1
    empty = encrypted[:start] + encrypted[encrypted.index(b"---"):]
    (tmp_path / "empty.age").write_bytes(empty)
    facts = check_inspection(warpcrypt_binary, tmp_path / "empty.age", 3)
    assert facts["stanza_types"] == [] and facts["postquantum"] == "unknown"
    assert '"stanza_types": null,' in ok([warpcrypt_binary, "age-inspect", "--json", tmp_path / "empty.age"]).decode()
    odd = encrypted.replace(b"-> X25519 ", b'-> a<b>&"c\\d ', 1)
    (tmp_path / "odd.age").write_bytes(odd)
    facts = check_inspection(warpcrypt_binary, tmp_path / "odd.age", 3)
    assert facts["stanza_types"] == ['a<b>&"c\\d']
    assert '  - "a<b>&\\"c\\\\d"\n' in ok([warpcrypt_binary, "age-inspect", tmp_path / "odd.age"]).decode()


def test_many_stanzas(warpcrypt_binary, tmp_path):
    """Thousands of recipients, as far as a 16 MiB header holds, are listed
    in order; a header past that is refused like decrypting refuses it."""
    keys = tmp_path / "recipients.txt"
    made = [ok([AGE_KEYGEN]).decode().splitlines()[1].split()[-1] for _ in range(3)]
    keys.write_text("\n".join(made * 700) + "\n")
    encrypted = tmp_path / "many.age"
    ok([warpcrypt_binary, "age", "-R", keys, "-o", encrypted, plaintext(tmp_path, 10)])
    facts = check_inspection(warpcrypt_binary, encrypted, 10)
    assert facts["stanza_types"] == ["X25519"] * 2100
    # A header of 2.9 million one-letter stanzas is 17 MiB: too long.
    huge = b"age-encryption.org/v1\n" + b"-> a\n\n" * ((17 << 20) // 6) + b"--- " + b"A" * 43 + b"\n"
    result = run([warpcrypt_binary, "age-inspect"], stdin=huge)
    assert result.returncode == EXIT_FORMAT
    assert "age header too long" in result.stderr.decode()


# ---- refusals -------------------------------------------------------------------


def refused(warpcrypt_binary, data: bytes, tmp_path: Path, words: str, status: int = EXIT_FORMAT) -> None:
    """`data` is refused with one line naming `words`, from a file and from a
    pipe, and under --json with the repository's failure object."""
    path = tmp_path / "bad.age"
    path.write_bytes(data)
    for argv, stdin in (([path], None), ([], data)):
        result = run([warpcrypt_binary, "age-inspect", *argv], stdin)
        stderr = result.stderr.decode()
        assert result.returncode == status, stderr
        assert result.stdout == b""
        assert stderr.count("\n") == 1 and stderr.startswith("warpcrypt: ") and words in stderr, stderr
    result = run([warpcrypt_binary, "age-inspect", "--json", path])
    assert result.returncode == status
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["exit"] == status and words in report["message"]


@pytest.fixture(scope="module")
def good(recipients) -> bytes:
    return ok([AGE, "-r", recipients[0]], stdin=b"x" * 1000)


def test_refuses_what_is_no_age_file(warpcrypt_binary, tmp_path, good):
    refused(warpcrypt_binary, b"", tmp_path, "not an age file: the input is empty")
    refused(warpcrypt_binary, b"hello world\n", tmp_path, "not an age file")
    refused(warpcrypt_binary, b"\x00" * 100, tmp_path, "not an age file")
    refused(warpcrypt_binary, good.replace(b"/v1\n", b"/v2\n", 1), tmp_path, "unsupported age version")


def test_refuses_truncated_headers(warpcrypt_binary, tmp_path, good):
    header_len = good.index(b"\n", good.index(b"\n--- ") + 1) + 1
    for cut in (10, 22, 40, header_len - 10, header_len - 1):
        refused(warpcrypt_binary, good[:cut], tmp_path, "truncated age header")
    # A header whose MAC line is mangled.
    refused(warpcrypt_binary, good[:header_len - 5] + b"!!!!\n" + good[header_len:], tmp_path, "malformed age header")


def test_refuses_payload_lengths_no_file_has(warpcrypt_binary, recipients, tmp_path, good):
    header_len = good.index(b"\n", good.index(b"\n--- ") + 1) + 1
    refused(warpcrypt_binary, good[:header_len], tmp_path, "no payload nonce")
    refused(warpcrypt_binary, good[:header_len + NONCE - 1], tmp_path, "no payload nonce")
    refused(warpcrypt_binary, good[:header_len + NONCE], tmp_path, "the payload holds no chunk")
    refused(warpcrypt_binary, good[:header_len + NONCE + TAG - 1], tmp_path, "the payload holds no chunk")
    full = ok([AGE, "-r", recipients[0]], stdin=b"y" * CHUNK)
    # One chunk of 64 KiB, then bytes too few for a tag, or an empty chunk.
    refused(warpcrypt_binary, full + b"z" * 15, tmp_path, "shorter than its tag")
    refused(warpcrypt_binary, full + b"z" * 16, tmp_path, "an empty final chunk")
    # Garbage appended within a chunk's room changes only the payload's
    # length: like age-inspect, it sizes what would be there, MAC unchecked.
    (tmp_path / "longer.age").write_bytes(good + b"garbage")
    facts = json.loads(ok([warpcrypt_binary, "age-inspect", "--json", tmp_path / "longer.age"]))
    assert facts["sizes"]["min_payload"] == 1000 + len(b"garbage")


def test_refuses_broken_armor(warpcrypt_binary, tmp_path, good):
    encoded = base64.b64encode(good)
    text = BEGIN + b"\n" + b"\n".join(encoded[i:i + 64] for i in range(0, len(encoded), 64)) + b"\n" + END + b"\n"
    (tmp_path / "ok.age").write_bytes(text)
    assert json.loads(ok([warpcrypt_binary, "age-inspect", "--json", tmp_path / "ok.age"]))["armor"] is True
    refused(warpcrypt_binary, text.replace(END + b"\n", b""), tmp_path, "no -----END AGE ENCRYPTED FILE----- line")
    refused(warpcrypt_binary, text + b"trailing\n", tmp_path, "data after the end line")
    refused(warpcrypt_binary, BEGIN + b"\n!!!!\n" + END + b"\n", tmp_path, "not canonical padded base64")
    # Says armored, holds the binary file.
    refused(warpcrypt_binary, BEGIN + b"\n" + good + END + b"\n", tmp_path, "malformed age armor")
    # Armor around something that is no age file.
    refused(warpcrypt_binary, BEGIN + b"\n" + base64.b64encode(b"hello world") + b"\n" + END + b"\n", tmp_path,
            "not an age file")
    # Armor around a truncated header.
    cut = base64.b64encode(good[:45])
    refused(warpcrypt_binary, BEGIN + b"\n" + cut + b"\n" + END + b"\n", tmp_path, "truncated age header")


def test_unreadable_inputs_and_usage(warpcrypt_binary, tmp_path):
    result = run([warpcrypt_binary, "age-inspect", tmp_path / "missing.age"])
    assert result.returncode == EXIT_IO and result.stderr.decode().count("\n") == 1
    assert "No such file or directory" in result.stderr.decode()
    result = run([warpcrypt_binary, "age-inspect", tmp_path])
    assert result.returncode == EXIT_IO and "Is a directory" in result.stderr.decode()
    result = run([warpcrypt_binary, "age-inspect", tmp_path / "a", tmp_path / "b"])
    assert result.returncode == EXIT_USAGE and result.stderr.decode().count("\n") == 1
    result = run([warpcrypt_binary, "age-inspect", "--no-such-flag"])
    assert result.returncode == EXIT_USAGE
    # A summary that cannot be written is a failure, not a silent success.
    good_file = tmp_path / "good.age"
    good_file.write_bytes(ok([AGE, "-r", ok([AGE_KEYGEN]).decode().splitlines()[1].split()[-1]], stdin=b"x"))
    if Path("/dev/full").exists():
        with open("/dev/full", "wb") as full:
            result = subprocess.run([str(warpcrypt_binary), "age-inspect", str(good_file)], stdout=full,
                                    stderr=subprocess.PIPE, timeout=60)
        assert result.returncode == EXIT_IO and b"No space left" in result.stderr
    help_text = ok([warpcrypt_binary, "age-inspect", "--help"]).decode()
    assert "--json" in help_text and "INPUT" in help_text
