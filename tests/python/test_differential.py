"""warpcrypt against pyca/cryptography (OpenSSL underneath) for every cipher
the two share, on random keys, IVs and sizes, through the one-shot functions
and through cipher contexts fed in random pieces. Skips without the
`cryptography` package."""

from __future__ import annotations

import pytest

import warpcrypt
from warpcrypt import Cipher, algorithms, modes

try:  # cryptography 43 moved CFB, CFB8 and OFB here, and will drop the old names
    from cryptography.hazmat.decrepit.ciphers import modes as legacy_modes
except ImportError:  # an older cryptography, or none (the tests then skip)
    legacy_modes = None

AES_MODES = {"ecb": modes.ECB, "cbc": modes.CBC, "cfb": modes.CFB, "cfb8": modes.CFB8, "ofb": modes.OFB,
             "ctr": modes.CTR}
SHARED = [f"aes-{bits}-{mode}" for bits in (128, 192, 256) for mode in AES_MODES] + ["chacha20"]
PADDED = ("ecb", "cbc")
# Past 128 KiB the CPU backend splits work over its threads.
LARGE = 1 << 20


def is_padded(name: str) -> bool:
    return name.endswith(PADDED)


def len_of(name: str, what: str) -> int:
    info = warpcrypt.cipher_info(name)
    return info.key_size if what == "key" else info.iv_size


def sizes(rng, name: str, padding: bool) -> list[int]:
    chosen = [0, 1, 15, 16, 17, 64, 4096, LARGE + 5] + [rng.randrange(4097) for _ in range(4)]
    if is_padded(name) and not padding:
        chosen = sorted({n - n % 16 for n in chosen})
    return chosen


def ours(name: str, key: bytes, iv: bytes) -> Cipher:
    if name == "chacha20":
        return Cipher(algorithms.ChaCha20(key, iv), None, backend="cpu")
    mode = AES_MODES[name.rsplit("-", 1)[1]]
    return Cipher(algorithms.AES(key), mode() if mode is modes.ECB else mode(iv), backend="cpu")


def reference_encrypt(reference, name: str, key: bytes, iv: bytes, data: bytes, padding: bool) -> bytes:
    ciphers, pkcs7 = reference
    if name == "chacha20":
        cipher = ciphers.Cipher(ciphers.algorithms.ChaCha20(key, iv), None)
    else:
        mode_name = name.rsplit("-", 1)[1].upper()
        mode = getattr(legacy_modes, mode_name, None) or getattr(ciphers.modes, mode_name)
        cipher = ciphers.Cipher(ciphers.algorithms.AES(key), mode() if mode is ciphers.modes.ECB else mode(iv))
    if padding and is_padded(name):
        padder = pkcs7.PKCS7(128).padder()
        data = padder.update(data) + padder.finalize()
    encryptor = cipher.encryptor()
    return encryptor.update(data) + encryptor.finalize()


def random_pieces(rng, data: bytes) -> list[bytes]:
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(4)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("backend", ("cpu", "auto"))
@pytest.mark.parametrize("name, padding", [(name, False) for name in SHARED] +
                         [(name, True) for name in SHARED if is_padded(name)])
def test_one_shot_matches_cryptography(name, padding, backend, reference, rng):
    for size in sizes(rng, name, padding):
        key, iv = rng.randbytes(len_of(name, "key")), rng.randbytes(len_of(name, "iv"))
        plaintext = rng.randbytes(size)
        expected = reference_encrypt(reference, name, key, iv, plaintext, padding)
        got = warpcrypt.encrypt(name, key, iv, plaintext, padding=padding, backend=backend)
        assert got == expected, f"{name}, {size} bytes"
        assert warpcrypt.decrypt(name, key, iv, got, padding=padding, backend=backend) == plaintext


@pytest.mark.parametrize("name", SHARED)
def test_contexts_in_pieces_match_cryptography(name, reference, rng):
    """Split equals whole: update() on random pieces, and update_into() into
    one buffer, give the reference's ciphertext, and decrypt it back."""
    for size in sizes(rng, name, padding=True):
        key, iv = rng.randbytes(len_of(name, "key")), rng.randbytes(len_of(name, "iv"))
        plaintext = rng.randbytes(size)
        expected = reference_encrypt(reference, name, key, iv, plaintext, padding=True)
        cipher = ours(name, key, iv)

        encryptor = cipher.encryptor()
        pieces = b"".join(encryptor.update(piece) for piece in random_pieces(rng, plaintext))
        assert pieces + encryptor.finalize() == expected, f"{name}, {size} bytes, update()"

        encryptor = cipher.encryptor()
        buffer = bytearray(len(expected) + 16)
        written = 0
        for piece in random_pieces(rng, plaintext):
            written += encryptor.update_into(piece, memoryview(buffer)[written:])
        tail = encryptor.finalize()
        assert bytes(buffer[:written]) + tail == expected, f"{name}, {size} bytes, update_into()"

        decryptor = cipher.decryptor()
        pieces = b"".join(decryptor.update(piece) for piece in random_pieces(rng, expected))
        assert pieces + decryptor.finalize() == plaintext, f"{name}, {size} bytes, decryption"


@pytest.mark.parametrize("name", ("aes-128-cbc", "aes-256-ecb"))
def test_padding_false_is_cryptographys_behaviour(name, reference, rng):
    """padding=False does what pyca/cryptography always does: whole blocks in,
    as many out, and a ValueError for anything else."""
    key, iv = rng.randbytes(len_of(name, "key")), rng.randbytes(len_of(name, "iv"))
    block_data = rng.randbytes(48)
    assert warpcrypt.encrypt(name, key, iv, block_data, padding=False) == reference_encrypt(
        reference, name, key, iv, block_data, padding=False)
    with pytest.raises(ValueError):
        reference_encrypt(reference, name, key, iv, block_data[:47], padding=False)
    with pytest.raises(warpcrypt.NotBlockAligned):
        warpcrypt.encrypt(name, key, iv, block_data[:47], padding=False)


def test_chacha20_counter_carries_into_the_nonce_as_openssl(reference, rng):
    """A block counter that passes 2**32 carries into the nonce's first word,
    as in OpenSSL. pyca/cryptography refuses to run past the counter, so each
    side of the carry is checked against it separately."""
    key, nonce = rng.randbytes(32), rng.randbytes(12)
    first_word = int.from_bytes(nonce[:4], "little")
    carried = ((first_word + 1) % 2**32).to_bytes(4, "little") + nonce[4:]
    plaintext = rng.randbytes(64 * 3 + 5)
    ciphertext = warpcrypt.encrypt("chacha20", key, (2**32 - 1).to_bytes(4, "little") + nonce, plaintext)
    assert ciphertext[:64] == reference_encrypt(
        reference, "chacha20", key, (2**32 - 1).to_bytes(4, "little") + nonce, plaintext[:64], padding=False)
    assert ciphertext[64:] == reference_encrypt(
        reference, "chacha20", key, bytes(4) + carried, plaintext[64:], padding=False)


def test_ctr_counter_carries_across_128_bits(reference, rng):
    key = rng.randbytes(16)
    for nonce in (b"\xff" * 16, bytes(8) + b"\xff" * 8, rng.randbytes(12) + b"\xff" * 4):
        plaintext = rng.randbytes(16 * 5 + 3)
        assert warpcrypt.encrypt("aes-128-ctr", key, nonce, plaintext) == reference_encrypt(
            reference, "aes-128-ctr", key, nonce, plaintext, padding=False)
