"""age 1.3's post-quantum hybrid keys against a Python reference.

No age 1.3 binary exists here (Debian ships age 1.1.1, which has no hybrid
keys), so this file checks warpcrypt against:

* draft-ietf-hpke-pq's test vector for MLKEM768-X25519 with HKDF-SHA256 and
  ChaCha20-Poly1305 (cryptography_vectors/HPKE/hpke-pq-test-vectors.json),
  the exact suite age uses, through the test-only build/tests/age_pq_tool
  (HostCrypto's HPKE: the public key of the private key, sealing with the
  vector's randomness, opening);
* a reference written here from the specifications (C2SP age's
  mlkem768x25519 recipient, draft-ietf-hpke-pq, RFC 9180) on pyca/
  cryptography's ML-KEM-768, X25519, ChaCha20-Poly1305 and hashlib's SHA-3:
  it opens the stanza of a file warpcrypt wrote, and writes whole age files
  warpcrypt must open.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import mlkem, x25519
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

HPKE_INFO = b"age-encryption.org/mlkem768x25519"
SUITE_ID = b"HPKE" + bytes.fromhex("647a" "0001" "0003")
COMBINER_LABEL = b"\\.//^\\"


def vectors_dir() -> Path:
    """cryptography-vectors' files: WARPCRYPT_VECTORS_DIR where set (the GPU
    machine's copy), else the installed package."""
    if os.environ.get("WARPCRYPT_VECTORS_DIR"):
        return Path(os.environ["WARPCRYPT_VECTORS_DIR"])
    vectors = pytest.importorskip("cryptography_vectors", reason="the HPKE vector is in cryptography-vectors")
    return Path(vectors.__file__).parent


# ---- a reference, from the specifications ----------------------------------

BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32_polymod(values):
    generators = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    checksum = 1
    for value in values:
        top = checksum >> 25
        checksum = (checksum & 0x1FFFFFF) << 5 ^ value
        for i in range(5):
            if (top >> i) & 1:
                checksum ^= generators[i]
    return checksum


def bech32_encode(hrp: str, data: bytes) -> str:
    bits = "".join(f"{b:08b}" for b in data)
    bits += "0" * (-len(bits) % 5)
    values = [int(bits[i : i + 5], 2) for i in range(0, len(bits), 5)]
    low = hrp.lower()
    expanded = [ord(c) >> 5 for c in low] + [0] + [ord(c) & 31 for c in low]
    checksum = bech32_polymod(expanded + values + [0] * 6) ^ 1
    values += [(checksum >> (5 * (5 - i))) & 31 for i in range(6)]
    text = low + "1" + "".join(BECH32[v] for v in values)
    return text.upper() if hrp.isupper() else text


def bech32_decode(text: str) -> tuple[str, bytes]:
    text = text.lower()
    hrp, _, rest = text.rpartition("1")
    values = [BECH32.index(c) for c in rest]
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    assert bech32_polymod(expanded + values) == 1
    bits = "".join(f"{v:05b}" for v in values[:-6])
    return hrp, bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - len(bits) % 8, 8))


class HybridKey:
    """MLKEM768-X25519's private key: SHAKE256(seed) -> ML-KEM d||z, X25519."""

    def __init__(self, seed: bytes):
        expanded = hashlib.shake_256(seed).digest(96)
        self.mlkem = mlkem.MLKEM768PrivateKey.from_seed_bytes(expanded[:64])
        self.x25519 = x25519.X25519PrivateKey.from_private_bytes(expanded[64:])
        self.x25519_public = self.x25519.public_key().public_bytes_raw()
        self.public = self.mlkem.public_key().public_bytes_raw() + self.x25519_public


def combine(ss_mlkem, ss_x25519, share, x25519_public):
    return hashlib.sha3_256(ss_mlkem + ss_x25519 + share + x25519_public + COMBINER_LABEL).digest()


def labeled_extract(salt, label, ikm):
    return hmac.new(salt or bytes(32), b"HPKE-v1" + SUITE_ID + label + ikm, "sha256").digest()


def labeled_expand(prk, label, info, length):
    message = length.to_bytes(2, "big") + b"HPKE-v1" + SUITE_ID + label + info + b"\x01"
    return hmac.new(prk, message, "sha256").digest()[:length]


def key_schedule(shared_secret, info):
    context = b"\x00" + labeled_extract(b"", b"psk_id_hash", b"") + labeled_extract(b"", b"info_hash", info)
    secret = labeled_extract(shared_secret, b"secret", b"")
    return labeled_expand(secret, b"key", context, 32), labeled_expand(secret, b"base_nonce", context, 12)


def reference_unwrap(seed: bytes, enc: bytes, body: bytes) -> bytes:
    key = HybridKey(seed)
    ss_mlkem = key.mlkem.decapsulate(enc[:1088])
    share = enc[1088:]
    ss_x25519 = key.x25519.exchange(x25519.X25519PublicKey.from_public_bytes(share))
    aead_key, nonce = key_schedule(combine(ss_mlkem, ss_x25519, share, key.x25519_public), HPKE_INFO)
    return ChaCha20Poly1305(aead_key).decrypt(nonce, body, b"")


def reference_wrap(public: bytes, file_key: bytes) -> tuple[bytes, bytes]:
    ss_mlkem, ct = mlkem.MLKEM768PublicKey.from_public_bytes(public[:1184]).encapsulate()
    ephemeral = x25519.X25519PrivateKey.generate()
    share = ephemeral.public_key().public_bytes_raw()
    ss_x25519 = ephemeral.exchange(x25519.X25519PublicKey.from_public_bytes(public[1184:]))
    aead_key, nonce = key_schedule(combine(ss_mlkem, ss_x25519, share, public[1184:]), HPKE_INFO)
    return ct + share, ChaCha20Poly1305(aead_key).encrypt(nonce, file_key, b"")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def hkdf_sha256(ikm, salt, info, length=32):
    prk = hmac.new(salt or bytes(32), ikm, "sha256").digest()
    return hmac.new(prk, info + b"\x01", "sha256").digest()[:length]


def age_file(stanzas: list[tuple[str, list[str], bytes]], file_key: bytes, plaintext: bytes) -> bytes:
    """A whole age v1 file (C2SP age): header, MAC, STREAM payload."""
    header = b"age-encryption.org/v1\n"
    for kind, args, body in stanzas:
        header += ("-> " + " ".join([kind, *args]) + "\n").encode()
        text = b64(body)
        lines = [text[i : i + 64] for i in range(0, len(text), 64)]
        if not lines or len(lines[-1]) == 64:
            lines.append("")
        header += "".join(line + "\n" for line in lines).encode()
    header += b"---"
    mac = hmac.new(hkdf_sha256(file_key, b"", b"header"), header, "sha256").digest()
    nonce = os.urandom(16)
    aead = ChaCha20Poly1305(hkdf_sha256(file_key, nonce, b"payload"))
    chunks = [plaintext[i : i + 65536] for i in range(0, len(plaintext), 65536)] or [b""]
    payload = b"".join(
        aead.encrypt(i.to_bytes(11, "big") + (b"\x01" if i == len(chunks) - 1 else b"\x00"), chunk, b"")
        for i, chunk in enumerate(chunks)
    )
    return header + b" " + b64(mac).encode() + b"\n" + nonce + payload


def parse_stanzas(data: bytes) -> list[tuple[str, list[str], bytes]]:
    lines = data.split(b"\n")
    assert lines[0] == b"age-encryption.org/v1"
    stanzas, i = [], 1
    while lines[i].startswith(b"-> "):
        kind, *args = lines[i][3:].decode().split(" ")
        body, i = "", i + 1
        while True:
            body += lines[i].decode()
            i += 1
            if len(lines[i - 1]) < 64:
                break
        stanzas.append((kind, args, unb64(body)))
    return stanzas


# ---- fixtures ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tool(build_tool):
    return build_tool("age_pq_tool")


def run(binary, *args, input_bytes=None):
    return subprocess.run([str(binary), *map(str, args)], input=input_bytes, capture_output=True, check=False)


@pytest.fixture()
def pq_identity(warpcrypt_binary, tmp_path):
    key_file = tmp_path / "key.txt"
    done = run(warpcrypt_binary, "age-keygen", "-pq", "-o", key_file)
    assert done.returncode == 0, done.stderr
    secret = next(line for line in key_file.read_text().splitlines() if not line.startswith("#"))
    hrp, seed = bech32_decode(secret)
    assert secret.startswith("AGE-SECRET-KEY-PQ-1") and hrp == "age-secret-key-pq-" and len(seed) == 32
    recipient = run(warpcrypt_binary, "age-keygen", "-y", key_file).stdout.decode().strip()
    return key_file, seed, recipient


# ---- tests -------------------------------------------------------------------


def test_hpke_pq_vector(tool):
    path = vectors_dir() / "HPKE" / "hpke-pq-test-vectors.json"
    vectors = [v for v in json.loads(path.read_text()) if (v["kem_id"], v["kdf_id"], v["aead_id"]) == (0x647A, 1, 3)]
    assert len(vectors) == 1
    v = vectors[0]
    assert run(tool, "public", v["skRm"]).stdout.decode().split() == [v["pkRm"]]
    # The context's first message is sealed under the base nonce itself.
    first = v["encryptions"][0]
    assert first["nonce"] == v["base_nonce"]
    sealed = run(tool, "seal", v["pkRm"], v["ikmE"], v["info"], first["aad"], first["pt"])
    assert sealed.stdout.decode().split() == [v["enc"], first["ct"]], sealed.stderr
    opened = run(tool, "open", v["skRm"], v["enc"], v["info"], first["aad"], first["ct"])
    assert opened.stdout.decode().split() == [first["pt"]], opened.stderr
    damaged = first["ct"][:-2] + f"{int(first['ct'][-2:], 16) ^ 1:02x}"
    assert run(tool, "open", v["skRm"], v["enc"], v["info"], first["aad"], damaged).returncode == 1
    # The reference reproduces the vector's secret from its private key too.
    reference = HybridKey(bytes.fromhex(v["skRm"]))
    assert reference.public.hex() == v["pkRm"]
    aead_key, base_nonce = key_schedule(bytes.fromhex(v["shared_secret"]), bytes.fromhex(v["info"]))
    assert (aead_key.hex(), base_nonce.hex()) == (v["key"], v["base_nonce"])
    sealed = ChaCha20Poly1305(aead_key).encrypt(base_nonce, bytes.fromhex(first["pt"]), bytes.fromhex(first["aad"]))
    assert sealed.hex() == first["ct"]


def test_keys_match_reference(pq_identity):
    _, seed, recipient = pq_identity
    assert recipient == bech32_encode("age1pq", HybridKey(seed).public)
    assert len(recipient) == len("age1pq1") + -(-1216 * 8 // 5) + 6  # no length limit, unlike BIP 173


def test_reference_opens_warpcrypt_stanza(warpcrypt_binary, pq_identity, tmp_path):
    _, seed, recipient = pq_identity
    plaintext = os.urandom(70000)
    (tmp_path / "plain").write_bytes(plaintext)
    done = run(warpcrypt_binary, "age", "-r", recipient, "-o", tmp_path / "f.age", tmp_path / "plain")
    assert done.returncode == 0, done.stderr
    data = (tmp_path / "f.age").read_bytes()
    [(kind, args, body)] = parse_stanzas(data)
    assert kind == "mlkem768x25519" and len(args) == 1 and len(unb64(args[0])) == 1120
    file_key = reference_unwrap(seed, unb64(args[0]), body)
    # The header MAC under that file key proves it is the file's.
    header_end = data.index(b"\n---") + 4
    mac = hmac.new(hkdf_sha256(file_key, b"", b"header"), data[:header_end], "sha256").digest()
    assert data[header_end + 1 : data.index(b"\n", header_end)] == b64(mac).encode()


def test_warpcrypt_opens_reference_file(warpcrypt_binary, pq_identity, tmp_path):
    key_file, _, recipient = pq_identity
    _, public = bech32_decode(recipient)
    plaintext = os.urandom(100000)
    file_key = os.urandom(16)
    enc, body = reference_wrap(public, file_key)
    (tmp_path / "ref.age").write_bytes(age_file([("mlkem768x25519", [b64(enc)], body)], file_key, plaintext))
    done = run(warpcrypt_binary, "age", "-d", "-i", key_file, "-o", tmp_path / "out", tmp_path / "ref.age")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_bytes() == plaintext


def test_inspect_says_post_quantum(warpcrypt_binary, pq_identity, tmp_path):
    _, _, recipient = pq_identity
    (tmp_path / "plain").write_bytes(b"x")
    assert run(warpcrypt_binary, "age", "-r", recipient, "-o", tmp_path / "f.age", tmp_path / "plain").returncode == 0
    report = json.loads(run(warpcrypt_binary, "age-inspect", "--json", tmp_path / "f.age").stdout)
    assert report["postquantum"] == "yes"


def test_mixing_with_classical_recipient_refused(warpcrypt_binary, pq_identity, tmp_path):
    _, _, recipient = pq_identity
    classical = run(warpcrypt_binary, "age-keygen").stdout.decode()
    classical_recipient = next(l for l in classical.splitlines() if l.startswith("# public key: ")).split()[-1]
    (tmp_path / "plain").write_bytes(b"secret")
    done = run(
        warpcrypt_binary, "age", "-r", recipient, "-r", classical_recipient, "-o", tmp_path / "f.age", tmp_path / "plain"
    )
    assert done.returncode != 0
    assert b"cannot be combined with classical ones" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "f.age").exists()


MALFORMED_REASONS = {
    "enc_truncated": "the encapsulation is not 1120 bytes of canonical base64",
    "enc_appended": "the encapsulation is not 1120 bytes of canonical base64",
    "enc_padded": "the encapsulation is not 1120 bytes of canonical base64",
    "body_short": "the body is not 32 bytes",
    "body_long": "the body is not 32 bytes",
    "two_args": "it takes exactly one argument",
    "no_args": "it takes exactly one argument",
    "share_zero": "its X25519 share is a low-order point",
}


@pytest.mark.parametrize("damage", sorted(MALFORMED_REASONS))
def test_malformed_stanza_refused(warpcrypt_binary, pq_identity, tmp_path, damage):
    key_file, seed, recipient = pq_identity
    _, public = bech32_decode(recipient)
    file_key = os.urandom(16)
    enc, body = reference_wrap(public, file_key)
    args = [b64(enc)]
    if damage == "enc_truncated":
        args = [b64(enc[:-1])]
    elif damage == "enc_appended":
        args = [b64(enc + b"\x00")]
    elif damage == "enc_padded":
        args = [base64.b64encode(enc).decode() + "=="]
    elif damage == "body_short":
        body = body[:-1]
    elif damage == "body_long":
        body = body + b"\x00"
    elif damage == "two_args":
        args = args + ["AAAA"]
    elif damage == "no_args":
        args = []
    elif damage == "share_zero":
        args = [b64(enc[:1088] + bytes(32))]
    (tmp_path / "bad.age").write_bytes(age_file([("mlkem768x25519", args, body)], file_key, b"plain"))
    done = run(warpcrypt_binary, "age", "-d", "-i", key_file, "-o", tmp_path / "out", tmp_path / "bad.age")
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert MALFORMED_REASONS[damage] in done.stderr.decode()
    assert not (tmp_path / "out").exists()
    assert b"AGE-SECRET-KEY" not in done.stderr


def test_wrong_identity_is_no_identity(warpcrypt_binary, pq_identity, tmp_path):
    _, _, recipient = pq_identity
    other = tmp_path / "other.txt"
    assert run(warpcrypt_binary, "age-keygen", "-pq", "-o", other).returncode == 0
    (tmp_path / "plain").write_bytes(b"x")
    assert run(warpcrypt_binary, "age", "-r", recipient, "-o", tmp_path / "f.age", tmp_path / "plain").returncode == 0
    done = run(warpcrypt_binary, "age", "-d", "-i", other, "-o", tmp_path / "out", tmp_path / "f.age")
    assert done.returncode != 0 and b"no identity matched" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "what", ["short_identity", "long_identity", "short_recipient", "bad_checksum", "unreduced_mlkem", "low_order_x25519"]
)
def test_malformed_keys_refused(warpcrypt_binary, pq_identity, tmp_path, what):
    _, seed, recipient = pq_identity
    _, public = bech32_decode(recipient)
    (tmp_path / "plain").write_bytes(b"x")
    if what in ("short_identity", "long_identity"):
        key = seed[:31] if what == "short_identity" else seed + b"\x00"
        (tmp_path / "k").write_text(bech32_encode("AGE-SECRET-KEY-PQ-", key) + "\n")
        done = run(warpcrypt_binary, "age-keygen", "-y", tmp_path / "k")
    else:
        if what == "short_recipient":
            text = bech32_encode("age1pq", public[:-1])
        elif what == "bad_checksum":
            text = recipient[:-1] + ("q" if recipient[-1] != "q" else "p")
        elif what == "unreduced_mlkem":  # the first coefficient 0xFFF, at least q
            text = bech32_encode("age1pq", b"\xff\x0f" + public[2:])
        else:  # the X25519 half the all-zero point, of small order
            text = bech32_encode("age1pq", public[:1184] + bytes(32))
        done = run(warpcrypt_binary, "age", "-r", text, "-o", tmp_path / "f.age", tmp_path / "plain")
        if what in ("unreduced_mlkem", "low_order_x25519"):
            half = "ML-KEM-768 half" if what == "unreduced_mlkem" else "X25519 half"
            assert half.encode() in done.stderr, done.stderr
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "f.age").exists()
    assert b"AGE-SECRET-KEY-PQ-1" not in done.stderr
