"""warpcrypt.age: keys generated, parsed and printed as age-keygen does;
bytes, paths and binary streams encrypted and decrypted; interop both ways
with rage (pyrage) and, where it is installed, the reference `age`; ranges;
and the failures a caller can catch by class. The format's rules are tested
in tests/unit/age_test.cpp, the CLI in tests/cli/test_age.py."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import threading

import pytest

import warpcrypt
from warpcrypt import age

pyrage = pytest.importorskip("pyrage", reason="pyrage (tests/requirements.txt) is the second age implementation")
from pyrage import passphrase as rage_passphrase  # noqa: E402
from pyrage import x25519 as rage_x25519  # noqa: E402

CHUNK = 64 * 1024


def test_keys_print_and_parse_as_age_keygen_writes_them():
    identity = age.Identity.generate()
    secret = identity.secret_key()
    assert secret.startswith("AGE-SECRET-KEY-1") and len(secret) == 74
    assert str(identity.recipient).startswith("age1") and len(str(identity.recipient)) == 62
    assert secret not in repr(identity)
    # rage derives the same recipient from the same secret.
    assert str(rage_x25519.Identity.from_str(secret).to_public()) == str(identity.recipient)
    again = age.Identity.parse(secret)
    assert again.recipient == identity.recipient
    file = f"# created: now\n# public key: {identity.recipient}\n{secret}\n\n{age.Identity.generate().secret_key()}\n"
    parsed = age.parse_identities(file)
    assert len(parsed) == 2 and parsed[0].recipient == identity.recipient
    assert age.parse_recipients(f"# team\n{identity.recipient}\n\n") == [identity.recipient]
    with pytest.raises(warpcrypt.FormatError, match="not an age identity"):
        age.Identity.parse("AGE-SECRET-KEY-1NOPE")
    # SSH recipients are accepted; an age1pq1 string that is no key (a bad
    # checksum) is a format error, not a plugin named "pq".
    age.Recipient("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsKLqeplhpW+uObz5dvMgjz1OxfM/XXUB+VHtZ6isGN")
    with pytest.raises(warpcrypt.FormatError, match="not an age recipient"):
        age.Recipient("age1pq1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq")


@pytest.mark.parametrize("size", [0, 1, CHUNK, CHUNK + 1, 5 * CHUNK + 3])
@pytest.mark.parametrize("armor", [False, True])
def test_bytes_round_trip_and_rage_reads_them(size, armor):
    plain = os.urandom(size)
    ours, theirs = age.Identity.generate(), rage_x25519.Identity.generate()
    sealed = age.encrypt(plain, [ours.recipient, str(theirs.to_public())], armor=armor)
    assert age.decrypt(sealed, [ours]) == plain
    assert pyrage.decrypt(sealed, [theirs]) == plain
    from_rage = pyrage.encrypt(plain, [rage_x25519.Recipient.from_str(str(ours.recipient))], armored=armor)
    assert age.decrypt(bytearray(from_rage), [ours]) == plain


def test_passphrases_both_ways_with_rage():
    plain = os.urandom(CHUNK + 9)
    sealed = age.encrypt(plain, passphrase="hunter2", work_factor=10)
    assert rage_passphrase.decrypt(sealed, "hunter2") == plain
    assert age.decrypt(rage_passphrase.encrypt(plain, "hunter2"), passphrase=b"hunter2") == plain
    with pytest.raises(warpcrypt.NoIdentity, match="incorrect passphrase"):
        age.decrypt(sealed, passphrase="wrong")
    with pytest.raises(warpcrypt.FormatError, match="work factor is above"):
        age.decrypt(sealed, passphrase="hunter2", max_work_factor=9)
    with pytest.raises(warpcrypt.InvalidArgument):
        age.encrypt(plain, [age.Identity.generate().recipient], passphrase="hunter2", work_factor=10)


def test_ranges_and_failures():
    identity = age.Identity.generate()
    plain = os.urandom(4 * CHUNK + 100)
    sealed = bytearray(age.encrypt(plain, [identity.recipient]))
    assert age.decrypt(sealed, [identity], offset=CHUNK - 3, length=10) == plain[CHUNK - 3:CHUNK + 7]
    assert age.decrypt(sealed, [identity], offset=len(plain) + 5) == b""
    sealed[-1] ^= 1
    assert age.decrypt(sealed, [identity], length=100) == plain[:100]  # the damaged chunk is not read
    with pytest.raises(warpcrypt.InvalidTag, match="chunk 4"):
        age.decrypt(sealed, [identity])
    with pytest.raises(warpcrypt.NoIdentity):
        age.decrypt(bytes(sealed), [age.Identity.generate()])
    with pytest.raises(warpcrypt.FormatError, match="not an age file"):
        age.decrypt(b"hello", [identity])
    with pytest.raises(warpcrypt.InvalidArgument):
        age.decrypt(bytes(sealed), [identity], offset=-1)


# The all-zero X25519 key, a point of small order: wrapping to it fails.
LOW_ORDER = "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq5cu47z"


def test_a_failed_key_wrap_raises_and_keeps_an_existing_file(tmp_path):
    # Once this returned b"" and wrote an empty file over the old one.
    valid = age.Identity.generate().recipient
    for recipients in ([LOW_ORDER], [valid, LOW_ORDER]):
        with pytest.raises(warpcrypt.InvalidArgument, match="low-order point"):
            age.encrypt(b"data", recipients)
        (tmp_path / "plain").write_bytes(b"data")
        (tmp_path / "out.age").write_bytes(b"old")
        with pytest.raises(warpcrypt.InvalidArgument, match="low-order point"):
            age.encrypt_file(tmp_path / "plain", tmp_path / "out.age", recipients)
        assert (tmp_path / "out.age").read_bytes() == b"old"
        with open(tmp_path / "plain", "rb") as source, open(tmp_path / "stream.age", "wb") as target:
            with pytest.raises(warpcrypt.InvalidArgument, match="low-order point"):
                age.encrypt_stream(source, target, recipients)
        assert (tmp_path / "stream.age").read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.age", "plain", "stream.age"]


def test_scrypt_that_cannot_allocate_raises():
    # In a child under an address-space limit of 2 GiB, so that factor 24's
    # 16 GiB cannot be granted whatever the machine's size.
    code = ("import resource, warpcrypt\n"
            "from warpcrypt import age\n"
            "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "try:\n"
            "    age.encrypt(b'data', passphrase='correct horse', work_factor=24)\n"
            "except MemoryError as error:\n"
            "    print(type(error).__name__, error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("OutOfMemory") and "scrypt cannot allocate" in result.stdout, result.stdout


def test_paths_and_streams(tmp_path):
    identity = age.Identity.generate()
    plain = os.urandom(3 * CHUNK + 11)
    (tmp_path / "plain").write_bytes(plain)
    age.encrypt_file(tmp_path / "plain", tmp_path / "file.age", [identity.recipient], armor=True)
    age.decrypt_file(tmp_path / "file.age", tmp_path / "back", [identity])
    assert (tmp_path / "back").read_bytes() == plain
    age.decrypt_file(tmp_path / "file.age", tmp_path / "part", [identity], offset=CHUNK, length=5)
    assert (tmp_path / "part").read_bytes() == plain[CHUNK:CHUNK + 5]
    with pytest.raises(warpcrypt.NoIdentity):
        age.decrypt_file(tmp_path / "file.age", tmp_path / "nothing", [age.Identity.generate()])
    assert not (tmp_path / "nothing").exists()
    # Streams with descriptors: files and pipes.
    with open(tmp_path / "plain", "rb") as source, open(tmp_path / "stream.age", "wb") as target:
        age.encrypt_stream(source, target, [identity.recipient])
    read_fd, write_fd = os.pipe()

    def feed():
        with os.fdopen(write_fd, "wb") as pipe_in:
            pipe_in.write((tmp_path / "stream.age").read_bytes())

    feeder = threading.Thread(target=feed)
    feeder.start()
    with os.fdopen(read_fd, "rb") as pipe_out, open(tmp_path / "stream.out", "wb") as target:
        age.decrypt_stream(pipe_out, target, [identity])
    feeder.join()
    assert (tmp_path / "stream.out").read_bytes() == plain
    with pytest.raises(TypeError, match="file descriptor"):
        age.encrypt_stream(io.BytesIO(plain), io.BytesIO(), [identity.recipient])


@pytest.mark.skipif(shutil.which("age") is None, reason="the reference `age` is not installed")
def test_the_reference_age_reads_and_writes_with_the_package(tmp_path):
    identity = age.Identity.generate()
    key_file = tmp_path / "key.txt"
    key_file.write_text(identity.secret_key() + "\n")
    plain = os.urandom(2 * CHUNK)
    sealed = age.encrypt(plain, [identity.recipient])
    assert subprocess.run(["age", "-d", "-i", str(key_file)], input=sealed, capture_output=True,
                          check=True).stdout == plain
    made = subprocess.run(["age", "-a", "-r", str(identity.recipient)], input=plain, capture_output=True,
                          check=True).stdout
    assert age.decrypt(made, [identity]) == plain


# ---------------------------------------------------------------------------
# inspect: the header's facts and the sizes, nothing decrypted
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("armor", [False, True])
@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 131073])
def test_inspect_sizes_add_up_to_the_file(armor, size):
    identities = [age.Identity.generate() for _ in range(2)]
    sealed = age.encrypt(os.urandom(size), [i.recipient for i in identities], armor=armor)
    info = _inspect_bytes(sealed)
    assert info.armored is armor
    assert info.stanza_types == ("X25519", "X25519") and info.postquantum == "no"
    assert info.payload_size == size
    assert info.chunks == max(1, -(-size // 65536))
    assert info.overhead_size == 16 + 16 * info.chunks
    assert info.file_size == len(sealed)
    assert info.header_size + info.armor_size + info.overhead_size + info.payload_size == len(sealed)
    assert (info.armor_size > 0) is armor


def _inspect_bytes(data: bytes) -> age.AgeInfo:
    """age.inspect on `data` through a pipe: a stream with a descriptor, read
    to its end."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as out:
            out.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        with os.fdopen(read_end, "rb", buffering=0) as source:
            return age.inspect(source)
    finally:
        writer.join()


def test_inspect_a_path_and_a_stream_at_its_position(tmp_path):
    identity = age.Identity.generate()
    sealed = age.encrypt(b"x" * 1000, [identity.recipient])
    (tmp_path / "f.age").write_bytes(b"PREFIX" + sealed)
    (tmp_path / "plain.age").write_bytes(sealed)
    by_path = age.inspect(tmp_path / "plain.age")
    with open(tmp_path / "f.age", "rb") as stream:
        stream.read(6)  # the stream's position, which read-ahead passed, is where the file starts
        by_stream = age.inspect(stream)
    assert by_path == by_stream
    assert by_path.payload_size == 1000 and by_path.stanza_types == ("X25519",)


def test_inspect_a_passphrase_file_and_rages():
    by_passphrase = _inspect_bytes(age.encrypt(b"data", passphrase="correct horse", work_factor=10))
    assert by_passphrase.stanza_types == ("scrypt",) and by_passphrase.postquantum == "yes"
    theirs = rage_x25519.Identity.generate()
    by_rage = _inspect_bytes(pyrage.encrypt(b"data" * 5000, [theirs.to_public()], armored=True))
    # rage adds a "grease" stanza of a random unknown type to some files, so
    # that readers learn to skip types they do not know; inspect lists it.
    assert by_rage.stanza_types[0] == "X25519" and all(t.endswith("-grease") for t in by_rage.stanza_types[1:])
    assert by_rage.postquantum == "no" and by_rage.armored and by_rage.payload_size == 20000


@pytest.mark.parametrize("damage", ["truncated header", "not age", "short payload"])
def test_inspect_refuses_a_broken_file_by_name(damage):
    sealed = age.encrypt(b"data", [age.Identity.generate().recipient])
    bad = {"truncated header": sealed[:40], "not age": b"hello, world\n" * 10,
           "short payload": sealed[:sealed.index(b"\n---") + 50]}[damage]
    with pytest.raises(warpcrypt.FormatError):
        _inspect_bytes(bad)


def test_no_recipients_or_identities_may_be_none_beside_a_passphrase():
    """age.encrypt(data, None, passphrase=...) as a caller writes it, not
    only with an empty list; None without a passphrase is refused as an
    empty list is."""
    sealed = warpcrypt.age.encrypt(b"by passphrase", None, passphrase="correct horse", work_factor=10)
    assert warpcrypt.age.decrypt(sealed, None, passphrase="correct horse") == b"by passphrase"
    with pytest.raises(warpcrypt.InvalidArgument, match="give recipients or a passphrase"):
        warpcrypt.age.encrypt(b"x", None)
