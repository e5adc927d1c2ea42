"""age 1.3's tagged recipients (age1tag1, age1tagpq1) against a Python reference.

warpcrypt encrypts to them natively, as age 1.3 does; their identities live
in hardware behind plugins, so nothing here decrypts with warpcrypt. Instead a
reference written from the specifications (C2SP age's p256tag and
mlkem768p256tag recipient stanzas, RFC 9180, draft-ietf-hpke-pq) on pyca/
cryptography's P-256 ECDH, ML-KEM-768 and ChaCha20-Poly1305 and hashlib's
SHA-3 holds the identity: it checks the stanza's tag, opens the stanza, and
decrypts the whole file warpcrypt wrote. The reference's MLKEM768-P256 is
first checked against draft-ietf-hpke-pq's vector (cryptography_vectors/HPKE/
hpke-pq-test-vectors.json); the C2SP spec's example recipients, when fetched
to ../shared/testdata/age-tag, must take a file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, mlkem
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from test_age_pq_reference import b64, bech32_decode, bech32_encode, hkdf_sha256, parse_stanzas, unb64, vectors_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTDATA = Path(os.environ.get("WARPCRYPT_TESTDATA", REPO_ROOT.parent / "shared" / "testdata")) / "age-tag"

P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_TAG = {"kem": 0x0010, "label": b"age-encryption.org/p256tag", "stanza": "p256tag"}
MLKEM768_P256_TAG = {"kem": 0x0050, "label": b"age-encryption.org/mlkem768p256tag", "stanza": "mlkem768p256tag"}


# ---- a reference, from the specifications ----------------------------------


def suite(kem: int) -> bytes:
    """HPKE's key-schedule suite: the KEM, HKDF-SHA256, ChaCha20-Poly1305."""
    return b"HPKE" + kem.to_bytes(2, "big") + bytes.fromhex("0001" "0003")


def labeled_extract(suite_id, salt, label, ikm):
    return hmac.new(salt or bytes(32), b"HPKE-v1" + suite_id + label + ikm, "sha256").digest()


def labeled_expand(suite_id, prk, label, info, length):
    message = length.to_bytes(2, "big") + b"HPKE-v1" + suite_id + label + info + b"\x01"
    return hmac.new(prk, message, "sha256").digest()[:length]


def open_base(kem: int, shared_secret: bytes, info: bytes, sealed: bytes) -> bytes:
    """RFC 9180's key schedule (base mode) and Open at sequence number 0."""
    suite_id = suite(kem)
    context = (
        b"\x00"
        + labeled_extract(suite_id, b"", b"psk_id_hash", b"")
        + labeled_extract(suite_id, b"", b"info_hash", info)
    )
    secret = labeled_extract(suite_id, shared_secret, b"secret", b"")
    key = labeled_expand(suite_id, secret, b"key", context, 32)
    nonce = labeled_expand(suite_id, secret, b"base_nonce", context, 12)
    return ChaCha20Poly1305(key).decrypt(nonce, sealed, b"")


def point(key: ec.EllipticCurvePrivateKey, form: PublicFormat) -> bytes:
    return key.public_key().public_bytes(Encoding.X962, form)


def ecdh_x(key: ec.EllipticCurvePrivateKey, encoded_point: bytes) -> bytes:
    return key.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), encoded_point))


class P256TagKey:
    """A p256tag identity: DHKEM(P-256, HKDF-SHA256)'s Decap."""

    kind = P256_TAG

    def __init__(self, key: ec.EllipticCurvePrivateKey | None = None):
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.uncompressed = point(self.key, PublicFormat.UncompressedPoint)
        self.tagged_point = point(self.key, PublicFormat.CompressedPoint)  # what the tag hashes
        self.recipient = bech32_encode("age1tag", self.tagged_point)

    def decapsulate(self, enc: bytes) -> bytes:
        kem_suite = b"KEM" + (0x0010).to_bytes(2, "big")
        eae_prk = labeled_extract(kem_suite, b"", b"eae_prk", ecdh_x(self.key, enc))
        return labeled_expand(kem_suite, eae_prk, b"shared_secret", enc + self.uncompressed, 32)


class Mlkem768P256TagKey:
    """An mlkem768p256tag identity: MLKEM768-P256 of draft-ietf-hpke-pq from a
    32-byte seed, SHAKE256 expanding it into ML-KEM's d || z and 128 bytes of
    P-256 scalar candidates."""

    kind = MLKEM768_P256_TAG

    def __init__(self, seed: bytes):
        expanded = hashlib.shake_256(seed).digest(64 + 128)
        self.mlkem = mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64])
        candidates = [int.from_bytes(expanded[i : i + 32], "big") for i in range(64, 192, 32)]
        scalar = next(c for c in candidates if 0 < c < P256_ORDER)
        self.key = ec.derive_private_key(scalar, ec.SECP256R1())
        self.tagged_point = point(self.key, PublicFormat.UncompressedPoint)
        self.public = self.mlkem.public_key().public_bytes_raw() + self.tagged_point
        self.recipient = bech32_encode("age1tagpq", self.public)

    def decapsulate(self, enc: bytes) -> bytes:
        share = enc[1088:]
        combined = self.mlkem.decapsulate(enc[:1088]) + ecdh_x(self.key, share) + share + self.tagged_point
        return hashlib.sha3_256(combined + b"MLKEM768-P256").digest()


def expected_tag(key, enc: bytes) -> bytes:
    ikm = enc + hashlib.sha256(key.tagged_point).digest()[:4]
    return hmac.new(key.kind["label"], ikm, "sha256").digest()[:4]


def reference_unwrap(key, stanza) -> bytes:
    kind, args, body = stanza
    assert kind == key.kind["stanza"] and len(args) == 2
    tag, enc = unb64(args[0]), unb64(args[1])
    assert tag == expected_tag(key, enc)
    assert len(body) == 32
    return open_base(key.kind["kem"], key.decapsulate(enc), key.kind["label"], body)


def reference_decrypt(data: bytes, file_key: bytes) -> bytes:
    """The payload of an age file (C2SP age), its header MAC checked first."""
    header_end = data.index(b"\n---") + 4
    mac_end = data.index(b"\n", header_end)
    mac = hmac.new(hkdf_sha256(file_key, b"", b"header"), data[:header_end], "sha256").digest()
    assert data[header_end + 1 : mac_end] == b64(mac).encode()
    nonce, payload = data[mac_end + 1 : mac_end + 17], data[mac_end + 17 :]
    aead = ChaCha20Poly1305(hkdf_sha256(file_key, nonce, b"payload"))
    chunks = [payload[i : i + 65536 + 16] for i in range(0, len(payload), 65536 + 16)]
    return b"".join(
        aead.decrypt(i.to_bytes(11, "big") + (b"\x01" if i == len(chunks) - 1 else b"\x00"), chunk, b"")
        for i, chunk in enumerate(chunks)
    )


# ---- helpers -----------------------------------------------------------------


def run(binary, *args, input_bytes=None):
    return subprocess.run([str(binary), *map(str, args)], input=input_bytes, capture_output=True, check=False)


def encrypt(binary, tmp_path, plaintext: bytes, *recipient_args) -> subprocess.CompletedProcess:
    (tmp_path / "plain").write_bytes(plaintext)
    return run(binary, "age", *recipient_args, "-o", tmp_path / "f.age", tmp_path / "plain")


def refused(done: subprocess.CompletedProcess, tmp_path: Path, *words: str) -> None:
    """A refusal: one line of error naming the type, and no file."""
    assert done.returncode != 0
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], lines[0]
    assert not (tmp_path / "f.age").exists()


# ---- tests -------------------------------------------------------------------


def test_reference_mlkem768_p256_matches_draft_vector():
    path = vectors_dir() / "HPKE" / "hpke-pq-test-vectors.json"
    vectors = [v for v in json.loads(path.read_text()) if v["kem_id"] == 0x0050]
    assert vectors
    for vector in vectors:
        key = Mlkem768P256TagKey(bytes.fromhex(vector["skRm"]))
        assert key.public.hex() == vector["pkRm"]
        assert key.decapsulate(bytes.fromhex(vector["enc"])).hex() == vector["shared_secret"]


@pytest.mark.parametrize("recipient_file", [False, True], ids=["-r", "-R"])
def test_reference_opens_p256tag_file(warpcrypt_binary, tmp_path, recipient_file):
    key = P256TagKey()
    if recipient_file:
        (tmp_path / "recipients.txt").write_text(f"# a hardware key\n{key.recipient}\n")
        args = ("-R", tmp_path / "recipients.txt")
    else:
        args = ("-r", key.recipient)
    plaintext = os.urandom(70000)
    done = encrypt(warpcrypt_binary, tmp_path, plaintext, *args)
    assert done.returncode == 0, done.stderr
    data = (tmp_path / "f.age").read_bytes()
    [stanza] = parse_stanzas(data)
    assert len(unb64(stanza[1][1])) == 65
    assert reference_decrypt(data, reference_unwrap(key, stanza)) == plaintext


def test_reference_opens_mlkem768p256tag_file(warpcrypt_binary, tmp_path):
    key = Mlkem768P256TagKey(os.urandom(32))
    plaintext = os.urandom(1000)
    done = encrypt(warpcrypt_binary, tmp_path, plaintext, "-r", key.recipient)
    assert done.returncode == 0, done.stderr
    data = (tmp_path / "f.age").read_bytes()
    [stanza] = parse_stanzas(data)
    assert len(unb64(stanza[1][1])) == 1153
    assert reference_decrypt(data, reference_unwrap(key, stanza)) == plaintext


def test_each_tag_recipient_gets_its_own_stanza(warpcrypt_binary, tmp_path):
    keys = [P256TagKey(), P256TagKey()]
    x25519 = run(warpcrypt_binary, "age-keygen").stdout.decode()
    x25519_recipient = next(l for l in x25519.splitlines() if l.startswith("# public key: ")).split()[-1]
    plaintext = b"to two hardware keys and one X25519 key"
    done = encrypt(
        warpcrypt_binary, tmp_path, plaintext, "-r", keys[0].recipient, "-r", x25519_recipient, "-r", keys[1].recipient
    )
    assert done.returncode == 0, done.stderr
    data = (tmp_path / "f.age").read_bytes()
    tagged = [s for s in parse_stanzas(data) if s[0] == "p256tag"]
    assert len(tagged) == 2
    for key in keys:
        # Each key finds its stanza by the tag alone, as a plugin does.
        [own] = [s for s in tagged if unb64(s[1][0]) == expected_tag(key, unb64(s[1][1]))]
        assert reference_decrypt(data, reference_unwrap(key, own)) == plaintext


def test_postquantum_tag_refuses_classical_company(warpcrypt_binary, tmp_path):
    tagpq = Mlkem768P256TagKey(os.urandom(32))
    done = encrypt(warpcrypt_binary, tmp_path, b"x", "-r", tagpq.recipient, "-r", P256TagKey().recipient)
    refused(done, tmp_path, "cannot be combined with classical ones")


def tampered_recipients() -> dict[str, tuple[str, str]]:
    """Recipient texts that are no key, and the type each refusal names."""
    key = P256TagKey()
    good = key.recipient
    off_curve = b"\x02" + (1).to_bytes(32, "big")  # no point of P-256 has x = 1
    tagpq = Mlkem768P256TagKey(bytes(32))
    tagpq_off_curve = tagpq.public[:-1] + bytes([tagpq.public[-1] ^ 1])
    return {
        "truncated": (good[:-1], "p256tag"),
        "bad_checksum": (good[:-1] + ("p" if good[-1] == "q" else "q"), "p256tag"),
        "uncompressed": (bech32_encode("age1tag", key.uncompressed), "p256tag"),
        "short": (bech32_encode("age1tag", key.tagged_point[:-1]), "p256tag"),
        "long": (bech32_encode("age1tag", key.tagged_point + b"\x00"), "p256tag"),
        "infinity": (bech32_encode("age1tag", b"\x00"), "p256tag"),
        "zeros": (bech32_encode("age1tag", bytes(33)), "p256tag"),
        "off_curve": (bech32_encode("age1tag", off_curve), "p256tag"),
        "wrong_hrp_for_length": (bech32_encode("age1tagpq", key.tagged_point), "mlkem768p256tag"),
        "tagpq_off_curve": (bech32_encode("age1tagpq", tagpq_off_curve), "mlkem768p256tag"),
        "tagpq_truncated": (tagpq.recipient[:-1], "mlkem768p256tag"),
    }


@pytest.mark.parametrize("case", sorted(tampered_recipients()))
def test_malformed_recipient_refused_by_type(warpcrypt_binary, tmp_path, case):
    text, type_name = tampered_recipients()[case]
    refused(encrypt(warpcrypt_binary, tmp_path, b"x", "-r", text), tmp_path, type_name)


def test_no_plugin_is_run_for_tag_recipients(warpcrypt_binary, tmp_path):
    # Before, age1tag1 meant a plugin named "tag"; a PATH with one that fails
    # loudly shows it is not asked.
    plugin = tmp_path / "bin" / "age-plugin-tag"
    plugin.parent.mkdir()
    plugin.write_text("#!/bin/sh\necho 'age-plugin-tag was run' >&2\nexit 1\n")
    plugin.chmod(0o755)
    env = dict(os.environ, PATH=f"{plugin.parent}:{os.environ['PATH']}")
    (tmp_path / "plain").write_bytes(b"x")
    argv = ["age", "-r", P256TagKey().recipient, "-o", tmp_path / "f.age", tmp_path / "plain"]
    done = subprocess.run([str(warpcrypt_binary), *map(str, argv)], capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert b"age-plugin-tag was run" not in done.stderr


# An age plugin holding a P-256 key, as a hardware key's plugin does, its
# identity side only: it finds its p256tag stanza by the tag and opens it
# with the reference above. Its key comes from $TAGTEST_SCALAR (a plugin
# sees the variables named after it, not PYTHONPATH), the reference from
# $TAGTEST_TESTS, pyca/cryptography from where this interpreter finds it
# ($TAGTEST_PYTHONPATH).
PLUGIN = """#!{python}
import os, sys
sys.path[:0] = [os.environ["TAGTEST_TESTS"], *os.environ["TAGTEST_PYTHONPATH"].split(os.pathsep)]
from cryptography.hazmat.primitives.asymmetric import ec
import test_age_tag as t

def read_stanza():
    words = sys.stdin.readline().rstrip("\\n")[3:].split(" ")
    body = ""
    while True:
        piece = sys.stdin.readline().rstrip("\\n")
        body += piece
        if len(piece) < 64:
            return words[0], words[1:], t.unb64(body)

def write_stanza(kind, args, body):
    text = t.b64(body)
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    if not lines or len(lines[-1]) == 64:
        lines.append("")
    sys.stdout.write("-> " + " ".join([kind, *args]) + "\\n" + "\\n".join(lines) + "\\n")
    sys.stdout.flush()

assert sys.argv[1:] == ["--age-plugin=identity-v1"], sys.argv
key = t.P256TagKey(ec.derive_private_key(int(os.environ["TAGTEST_SCALAR"], 16), ec.SECP256R1()))
commands = []
while (stanza := read_stanza())[0] != "done":
    commands.append(stanza)
for kind, args, body in commands:
    own = kind == "recipient-stanza" and args[1] == "p256tag"
    if own and t.unb64(args[2]) == t.expected_tag(key, t.unb64(args[3])):
        write_stanza("file-key", ["0"], t.reference_unwrap(key, ("p256tag", args[2:], body)))
        assert read_stanza()[0] == "ok"
        break
write_stanza("done", [], b"")
"""


def test_plugin_identity_opens_p256tag_file(warpcrypt_binary, tmp_path):
    key = P256TagKey()
    plugin = tmp_path / "bin" / "age-plugin-tagtest"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN.format(python=sys.executable))
    plugin.chmod(0o755)
    env = dict(
        os.environ,
        PATH=f"{plugin.parent}:{os.environ['PATH']}",
        TAGTEST_SCALAR=f"{key.key.private_numbers().private_value:064x}",
        TAGTEST_TESTS=str(Path(__file__).parent),
        TAGTEST_PYTHONPATH=os.pathsep.join(sys.path),
    )
    plaintext = os.urandom(3000)
    # Beside an X25519 recipient, so that the plugin must pick its stanza.
    x25519 = run(warpcrypt_binary, "age-keygen").stdout.decode()
    x25519_recipient = next(l for l in x25519.splitlines() if l.startswith("# public key: ")).split()[-1]
    done = encrypt(warpcrypt_binary, tmp_path, plaintext, "-r", x25519_recipient, "-r", key.recipient)
    assert done.returncode == 0, done.stderr
    (tmp_path / "identity.txt").write_text(bech32_encode("AGE-PLUGIN-TAGTEST-", b"") + "\n")
    opened = subprocess.run(
        [str(warpcrypt_binary), "age", "-d", "-i", str(tmp_path / "identity.txt"), str(tmp_path / "f.age")],
        capture_output=True,
        env=env,
        check=False,
    )
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout == plaintext


def test_spec_example_recipients_encrypt(warpcrypt_binary, tmp_path):
    examples = TESTDATA / "c2sp-age-recipients.txt"
    if not examples.exists():
        pytest.skip(f"the C2SP age spec's example recipients are not at {examples} (fetched data lives in ../shared)")
    recipients = [l for l in examples.read_text().splitlines() if l and not l.startswith("#")]
    assert recipients
    for recipient in recipients:
        hrp, key = bech32_decode(recipient)
        assert hrp in ("age1tag", "age1tagpq")
        done = encrypt(warpcrypt_binary, tmp_path, b"x", "-r", recipient)
        assert done.returncode == 0, done.stderr
        [(kind, args, body)] = parse_stanzas((tmp_path / "f.age").read_bytes())
        assert kind == {"age1tag": "p256tag", "age1tagpq": "mlkem768p256tag"}[hrp]
        assert len(unb64(args[0])) == 4 and len(body) == 32
        (tmp_path / "f.age").unlink()
