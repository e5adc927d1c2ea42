"""warpcrypt.safetensors against the `cryptotensors` package (the reference
implementation of the format, through its NumPy API): files either writes
open in the other, in both format versions, with each AEAD; and what both
must refuse (a changed chunk, tag, header or signature, tensors swapped,
a truncated or extended file, a wrong key), each in one clear error.
docs/security.md, "Encrypted safetensors", says what is authenticated."""

from __future__ import annotations

import base64
import json
import errno
import os
import struct
import sys
import time

import pytest

import warpcrypt
from warpcrypt import _cryptotensors as ct

np = pytest.importorskip("numpy")
ws = pytest.importorskip("warpcrypt.safetensors")
cryptotensors = pytest.importorskip("cryptotensors", reason="the cryptotensors package is not installed")

ALGS = ["aes256gcm", "aes128gcm", "chacha20poly1305"]


def tensors(seed: int = 7) -> dict[str, object]:
    """Every dtype NumPy shares with safetensors, an empty tensor, and one
    of several chunks at the small chunk sizes the tests use."""
    rng = np.random.default_rng(seed)
    return {
        "weight": rng.standard_normal((64, 40)).astype(np.float32),
        "bias": rng.standard_normal(40),
        "ids": rng.integers(-2**60, 2**60, size=33),
        "mask": rng.integers(0, 2, size=17).astype(bool),
        "bytes": rng.integers(0, 256, size=1001).astype(np.uint8),
        "half": rng.standard_normal(12).astype(np.float16),
        "small": rng.integers(-100, 100, size=(3, 3)).astype(np.int8),
        "u16": rng.integers(0, 60000, size=5).astype(np.uint16),
        "c": (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex64),
        "empty": np.zeros((0, 3), np.float32),
    }


def same(got, want) -> None:
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].dtype == want[name].dtype, name
        assert got[name].shape == want[name].shape, name
        assert np.array_equal(got[name], want[name]), name


def ct_load(path, keys, names=None):
    """cryptotensors' NumPy load of the named tensors (every one by default)."""
    enc, sign = (k for k in keys["keys"])
    with cryptotensors.safe_open(str(path), framework="np", config={"enc_key": enc, "sign_key": sign}) as f:
        return {name: f.get_tensor(name) for name in names or f.keys()}


def ct_save(data, path, keys, **config):
    enc, sign = keys["keys"]
    cryptotensors.numpy.save_file(data, str(path), config={"enc_key": enc, "sign_key": sign, **config})


def header_of(path) -> tuple[int, dict]:
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    return n, json.loads(raw[8:8 + n])


def rewrite_header(path, header: dict) -> None:
    """The file with its header replaced (its data left as it is)."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])


def plain_file(path, header: dict | bytes, data: bytes = b"") -> None:
    """A file of this header (a dict as JSON, bytes as they are) and data."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)


@pytest.fixture
def keys():
    return ws.generate_keys(enc_kid="master-1", sign_kid="signer-1")


import cryptotensors.numpy  # noqa: E402  (after the importorskip above)


# ---------------------------------------------------------------- interop


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("chunk_size", [64, 1024, ct.DEFAULT_CHUNK_SIZE])
def test_warpcrypt_files_open_in_cryptotensors(tmp_path, alg, chunk_size):
    keys = ws.generate_keys(alg=alg, enc_kid="m", sign_kid="s")
    data = tensors()
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, chunk_size=chunk_size, metadata={"format": "np"})
    same(ct_load(tmp_path / "m.safetensors", keys), data)
    same(ws.load_file(tmp_path / "m.safetensors", keys=keys, framework="np"), data)


@pytest.mark.parametrize("alg", ALGS)
def test_cryptotensors_files_open_in_warpcrypt(tmp_path, alg):
    keys = ws.generate_keys(alg=alg, enc_kid="m", sign_kid="s")
    data = tensors()
    ct_save(data, tmp_path / "m.safetensors", keys, chunk_size=256)
    same(ws.load_file(tmp_path / "m.safetensors", keys=keys, framework="np"), data)


def test_version_1_both_ways(tmp_path, keys):
    data = tensors()
    ws.save_file(data, tmp_path / "w.safetensors", keys=keys, version="1")
    assert json.loads(header_of(tmp_path / "w.safetensors")[1]["__metadata__"]["__crypto_keys__"])["version"] == "1"
    same(ct_load(tmp_path / "w.safetensors", keys), data)
    ct_save(data, tmp_path / "c.safetensors", keys, version="1")
    same(ws.load_file(tmp_path / "c.safetensors", keys=keys, framework="np"), data)


def test_metadata_that_needs_escaping_is_signed_as_the_reference_signs_it(tmp_path, keys):
    """The signature covers a re-serialization of the header: warpcrypt's
    must match serde_json's byte for byte, escapes and non-ASCII included."""
    metadata = {"quote": 'a "b" \\ c', "controls": "\x00\x01\x1f\x7f\n\t\r\b\f", "text": "héllo wörld ✓ 𝄞",
                "zz": "", "Aa": "sorted before lower case"}
    ws.save_file(tensors(), tmp_path / "w.safetensors", keys=keys, metadata=metadata)
    same(ct_load(tmp_path / "w.safetensors", keys), tensors())
    enc, sign = keys["keys"]
    cryptotensors.numpy.save_file(tensors(), str(tmp_path / "c.safetensors"), metadata=metadata,
                                  config={"enc_key": enc, "sign_key": sign})
    with ws.safe_open(tmp_path / "c.safetensors", "np", keys=keys) as f:
        assert f.metadata() == metadata


def test_tensor_names_that_need_escaping(tmp_path, keys):
    data = {"layer.0/\"w\"": np.ones(3, np.float32), "ünïcode": np.zeros(2, np.int64), "a\nb": np.ones(1, np.uint8)}
    ws.save_file(data, tmp_path / "w.safetensors", keys=keys)
    same(ct_load(tmp_path / "w.safetensors", keys), data)


def test_some_tensors_in_the_clear(tmp_path, keys):
    data = tensors()
    ws.save_file(data, tmp_path / "w.safetensors", keys=keys, encrypt=["weight", "empty"])
    same(ct_load(tmp_path / "w.safetensors", keys), data)
    with ws.safe_open(tmp_path / "w.safetensors", "np", keys=keys) as f:
        assert f.encrypted("weight") and f.encrypted("empty") and not f.encrypted("bias")
        assert f.keys() == sorted(data)
        same({"bias": f.get_tensor("bias")}, {"bias": data["bias"]})


def test_a_plain_safetensors_file_loads_without_keys_and_is_refused_with_them(tmp_path, keys):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    data = tensors()
    safetensors_numpy.save_file(data, str(tmp_path / "plain.safetensors"), metadata={"k": "v"})
    same(ws.load_file(tmp_path / "plain.safetensors", framework="np"), data)
    with ws.safe_open(tmp_path / "plain.safetensors", "np") as f:
        assert f.metadata() == {"k": "v"} and not f.encrypted("bias")
    with pytest.raises(warpcrypt.FormatError, match="not a signed CryptoTensors file"):
        ws.load_file(tmp_path / "plain.safetensors", keys=keys, framework="np")


def test_an_encrypted_file_without_keys_is_refused(tmp_path, keys):
    ws.save_file(tensors(), tmp_path / "w.safetensors", keys=keys)
    with pytest.raises(warpcrypt.InvalidArgument, match="is encrypted .*pass keys="):
        ws.load_file(tmp_path / "w.safetensors", framework="np")


def test_safe_open_reads_one_tensor_at_a_time(tmp_path, keys):
    data = tensors()
    ws.save_file(data, tmp_path / "w.safetensors", keys=keys, chunk_size=128)
    with ws.safe_open(tmp_path / "w.safetensors", "np", keys=keys) as f:
        assert f.offset_keys()[0] in ("bias", "ids", "c")  # 64-bit dtypes first, as safetensors orders
        for name in data:
            assert np.array_equal(f.get_tensor(name), data[name])
        with pytest.raises(KeyError):
            f.get_tensor("missing")
    with pytest.raises(warpcrypt.InvalidArgument, match="closed"):
        f.keys()


def test_keys_as_a_list_a_set_or_with_url_safe_base64(tmp_path, keys):
    enc, sign = keys["keys"]
    ws.save_file(tensors(), tmp_path / "w.safetensors", keys=[enc, sign])
    url_safe = [{**k, **{m: base64.urlsafe_b64encode(base64.b64decode(k[m])).decode().rstrip("=")
                         for m in ("k", "x", "d") if m in k}} for k in (enc, sign)]
    same(ws.load_file(tmp_path / "w.safetensors", keys=url_safe, framework="np"), tensors())
    public_only = [enc, {k: v for k, v in sign.items() if k != "d"}]
    same(ws.load_file(tmp_path / "w.safetensors", keys={"keys": public_only}, framework="np"), tensors())


def test_rewrap_changes_the_keys_and_not_the_data(tmp_path, keys):
    data = tensors()
    ws.save_file(data, tmp_path / "w.safetensors", keys=keys, chunk_size=512)
    before = open(tmp_path / "w.safetensors", "rb").read()
    new = ws.generate_keys(enc_kid="master-2", sign_kid="signer-2-with-a-longer-name")
    ws.rewrap_file(tmp_path / "w.safetensors", keys=keys, new_keys=new)
    after = open(tmp_path / "w.safetensors", "rb").read()
    n0, n1 = struct.unpack("<Q", before[:8])[0], struct.unpack("<Q", after[:8])[0]
    assert before[8 + n0:] == after[8 + n1:]
    same(ct_load(tmp_path / "w.safetensors", new), data)
    same(ws.load_file(tmp_path / "w.safetensors", keys=new, framework="np"), data)
    with pytest.raises(warpcrypt.InvalidKey):
        ws.load_file(tmp_path / "w.safetensors", keys=keys, framework="np")
    ws.rewrap_file(tmp_path / "w.safetensors", keys=new, new_keys=keys, output=tmp_path / "back.safetensors")
    same(ct_load(tmp_path / "back.safetensors", keys), data)


def test_cryptotensors_rewrap_opens_in_warpcrypt(tmp_path, keys):
    data = tensors()
    ws.save_file(data, tmp_path / "w.safetensors", keys=keys)
    new = ws.generate_keys(enc_kid="master-2", sign_kid="signer-2")
    (enc, sign), (new_enc, new_sign) = keys["keys"], new["keys"]
    cryptotensors.rewrap_file(str(tmp_path / "w.safetensors"), {"enc_key": new_enc, "sign_key": new_sign},
                              {"enc_key": enc, "sign_key": sign})
    same(ws.load_file(tmp_path / "w.safetensors", keys=new, framework="np"), data)


# ---------------------------------------------------------------- attacks


def both_refuse(path, keys, error, match):
    with pytest.raises(error, match=match):
        ws.load_file(path, keys=keys, framework="np")
    with pytest.raises(Exception):  # the reference refuses too
        ct_load(path, keys)


@pytest.fixture
def sealed(tmp_path, keys):
    path = tmp_path / "m.safetensors"
    ws.save_file(tensors(), path, keys=keys, chunk_size=256)
    return path


def flip(path, offset: int) -> None:
    raw = bytearray(open(path, "rb").read())
    raw[offset] ^= 0x01
    open(path, "wb").write(raw)


def test_a_changed_chunk_is_refused_naming_tensor_and_chunk(sealed, keys):
    n, header = header_of(sealed)
    start = header["weight"]["data_offsets"][0]
    flip(sealed, 8 + n + start + 3 * 256 + 5)
    both_refuse(sealed, keys, warpcrypt.InvalidTag, r"tensor 'weight', chunk 3 does not authenticate")


def test_a_changed_tag_is_a_changed_header(sealed, keys):
    n, header = header_of(sealed)
    encryption = json.loads(header["__metadata__"]["__encryption__"])
    tags = bytearray(base64.b64decode(encryption["bias"]["tags"]))
    tags[0] ^= 1
    encryption["bias"]["tags"] = base64.b64encode(tags).decode()
    header["__metadata__"]["__encryption__"] = json.dumps(encryption, separators=(",", ":"))
    rewrite_header(sealed, header)
    both_refuse(sealed, keys, warpcrypt.InvalidSignature, "signature does not verify")


@pytest.mark.parametrize("edit", ["shape", "dtype", "offsets", "metadata", "signature", "drop_signature", "rename"])
def test_a_changed_header_is_refused(sealed, keys, edit):
    n, header = header_of(sealed)
    meta = header["__metadata__"]
    if edit == "shape":
        header["weight"]["shape"] = [40, 64]
    elif edit == "dtype":
        header["ids"]["dtype"] = "U64"
    elif edit == "offsets":  # two tensors of the same size trade places
        header["ids"]["data_offsets"], header["bias"]["data_offsets"] = \
            header["bias"]["data_offsets"], header["ids"]["data_offsets"]
    elif edit == "metadata":
        meta["added"] = "by an attacker"
    elif edit == "signature":
        signature = bytearray(base64.b64decode(meta["__signature__"]))
        signature[10] ^= 4
        meta["__signature__"] = base64.b64encode(signature).decode()
    elif edit == "drop_signature":
        del meta["__signature__"]
    elif edit == "rename":
        header["renamed"] = header.pop("bias")
    rewrite_header(sealed, header)
    error = warpcrypt.FormatError if edit == "drop_signature" else warpcrypt.InvalidSignature
    both_refuse(sealed, keys, error, "signature does not verify|without __signature__")


def test_tensors_swapped_between_names_are_refused(sealed, keys):
    """bias and ids, both 40 elements of 8 bytes: their data traded places
    (the header left as signed) fails their tags."""
    data = tensors()
    data["ids"] = np.arange(40, dtype=np.int64)
    ws.save_file(data, sealed, keys=keys, chunk_size=256)
    n, header = header_of(sealed)
    raw = bytearray(open(sealed, "rb").read())
    (a0, a1), (b0, b1) = header["bias"]["data_offsets"], header["ids"]["data_offsets"]
    assert a1 - a0 == b1 - b0
    base = 8 + n
    raw[base + a0:base + a1], raw[base + b0:base + b1] = raw[base + b0:base + b1], raw[base + a0:base + a1]
    open(sealed, "wb").write(raw)
    both_refuse(sealed, keys, warpcrypt.InvalidTag, "does not authenticate")


def test_chunks_reordered_within_a_tensor_are_refused(sealed, keys):
    n, header = header_of(sealed)
    start = 8 + n + header["weight"]["data_offsets"][0]
    raw = bytearray(open(sealed, "rb").read())
    raw[start:start + 256], raw[start + 256:start + 512] = raw[start + 256:start + 512], raw[start:start + 256]
    open(sealed, "wb").write(raw)
    both_refuse(sealed, keys, warpcrypt.InvalidTag, r"tensor 'weight', chunk 0")


@pytest.mark.parametrize("cut", [1, 255, 4096])
def test_a_truncated_file_is_refused(sealed, keys, cut):
    raw = open(sealed, "rb").read()
    open(sealed, "wb").write(raw[:-cut])
    both_refuse(sealed, keys, warpcrypt.FormatError, "truncated")


def test_bytes_appended_are_refused(sealed, keys):
    with open(sealed, "ab") as f:
        f.write(b"\0" * 16)
    with pytest.raises(warpcrypt.FormatError, match="16 bytes follow the last tensor"):
        ws.load_file(sealed, keys=keys, framework="np")


@pytest.mark.parametrize("size", [0, 7])
def test_a_file_shorter_than_its_length_prefix(tmp_path, size):
    (tmp_path / "short").write_bytes(b"\x01" * size)
    with pytest.raises(warpcrypt.FormatError, match="too short"):
        ws.load_file(tmp_path / "short", framework="np")


@pytest.mark.parametrize("length", [ct.MAX_HEADER_BYTES + 1, 2**64 - 1])
def test_an_oversized_header_is_refused_before_it_is_read(tmp_path, length):
    (tmp_path / "big").write_bytes(struct.pack("<Q", length) + b"{}")
    with pytest.raises(warpcrypt.FormatError, match="over the limit of 100000000 bytes"):
        ws.load_file(tmp_path / "big", framework="np")


def test_a_header_longer_than_the_file(tmp_path):
    (tmp_path / "f").write_bytes(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(warpcrypt.FormatError, match="truncated: the header is 1000 bytes"):
        ws.load_file(tmp_path / "f", framework="np")


@pytest.mark.parametrize("header, match", [
    ({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, "holds 12 bytes, but its data_offsets give 8"),
    ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, "do not follow"),
    ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, "do not follow"),
    ({"t": {"dtype": "X99", "shape": [2], "data_offsets": [0, 8]}}, "unknown dtype"),
    ({"t": {"dtype": [4], "shape": [2], "data_offsets": [0, 8]}}, "unknown dtype"),  # found by the fuzzer
    ({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, "not a list of sizes"),
    ({"t": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}}, "not a list of sizes"),
    ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "extra": 1}}, "not dtype, shape and data_offsets"),
    ({"t": [1, 2]}, "not dtype, shape and data_offsets"),
    ({"__metadata__": {"a": 1}}, "not an object of strings"),
    ([], "not a JSON object"),
    ({"t": {"dtype": "F32", "shape": [2**62, 2**62], "data_offsets": [0, 8]}}, "data_offsets give 8"),
    # A size past what a float holds was an OverflowError from the refusal's own message.
    ({"t": {"dtype": "F32", "shape": [2**62] * 20, "data_offsets": [0, 8]}},
     r"holds more than 2\^63 bytes, but its data_offsets give 8"),
    ({"t": {"dtype": "F4", "shape": [3], "data_offsets": [0, 8]}}, "holds 12 bits, but"),
    ({"t": {"dtype": "U8", "shape": [1] * (ct.MAX_DIMS + 1), "data_offsets": [0, 8]}},
     f"{ct.MAX_DIMS + 1} dimensions, more than {ct.MAX_DIMS}"),
])
def test_plain_headers_that_do_not_match_their_data(tmp_path, header, match):
    plain_file(tmp_path / "f", header, b"\0" * 8)
    with pytest.raises(warpcrypt.FormatError, match=match):
        ws.load_file(tmp_path / "f", framework="np")


@pytest.mark.parametrize("text", [b'{"t": 1, "t": 2}', b'{"a": NaN}', b"\xff\xfe", b"[" * 100000])
def test_headers_that_are_not_json_or_repeat_a_name(tmp_path, text):
    plain_file(tmp_path / "f", text)
    with pytest.raises(warpcrypt.FormatError, match="not JSON"):
        ws.load_file(tmp_path / "f", framework="np")


def test_a_shape_of_huge_rank_is_refused_at_once(tmp_path):
    """500,000 dimensions, a 10 MB header (under the 100 MB limit): the
    size check multiplied the shape out, in time that grows with the square
    of the dimensions (minutes here; the safetensors package refuses the
    file in milliseconds). The rank is bounded before any product."""
    path = tmp_path / "f"
    plain_file(path, {"t": {"dtype": "U8", "shape": [2**62] * 500_000, "data_offsets": [0, 1]}}, b"x")
    for opening in (lambda: ws.load_file(path, framework="np"), lambda: ws.safe_open(path, "np")):
        started = time.perf_counter()
        with pytest.raises(warpcrypt.FormatError, match=f"500000 dimensions, more than {ct.MAX_DIMS}"):
            opening()
        assert time.perf_counter() - started < 2


def test_the_most_dimensions_a_tensor_may_have_are_the_same_to_write_and_to_read(tmp_path):
    """MAX_DIMS (NumPy 2's own limit; a checkpoint's tensors have 5 at most)
    bounds the writer too, so that no file it writes is one its reader
    refuses; a file of MAX_DIMS dimensions opens in safetensors as well."""
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    most = (1,) * ct.MAX_DIMS
    ws.save_file({"t": ws.RawTensor("U8", most, b"x")}, tmp_path / "most", keys=None)
    assert ws.load_file(tmp_path / "most", framework="raw")["t"].shape == most
    assert safetensors_numpy.load_file(str(tmp_path / "most"))["t"].shape == most
    with pytest.raises(warpcrypt.InvalidArgument, match=f"{ct.MAX_DIMS + 1} dimensions, more than {ct.MAX_DIMS}"):
        ws.save_file({"t": ws.RawTensor("U8", most + (1,), b"x")}, tmp_path / "more", keys=None)
    assert sorted(os.listdir(tmp_path)) == ["most"]


def test_a_raw_tensor_whose_size_overflows_a_float_is_one_clear_error(tmp_path):
    with pytest.raises(warpcrypt.InvalidArgument, match=r"is more than 2\^63 bytes, not the 1 given"):
        ws.save_file({"t": ws.RawTensor("U8", (2**62,) * 20, b"x")}, tmp_path / "f", keys=None)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("encrypted", [True, False], ids=["encrypted", "plain"])
def test_a_tensor_may_not_be_named_metadata(tmp_path, keys, encrypted):
    """A tensor named __metadata__ took the place of the header's metadata:
    the signature and every wrapped data key were lost, and save_file
    reported success for a file nothing can open."""
    data = {"__metadata__": np.zeros(2, np.float32), "w": np.ones(3, np.float32)}
    with pytest.raises(warpcrypt.InvalidArgument, match="'__metadata__' is reserved"):
        ws.save_file(data, tmp_path / "m.safetensors", keys=keys if encrypted else None)
    assert os.listdir(tmp_path) == []


LONE_SURROGATE = "\ud800"


def test_a_name_that_is_not_unicode_text_is_refused_when_read(tmp_path, sealed, keys):
    """JSON can escape half a surrogate pair, which no UTF-8 holds: serde_json
    (safetensors, cryptotensors) refuses it, and warpcrypt raised
    UnicodeEncodeError as it re-serialized the header to check its
    signature. Every string of a header is Unicode text, or the header is
    refused."""
    _, header = header_of(sealed)
    header[LONE_SURROGATE] = header.pop("bias")
    rewrite_header(sealed, header)
    both_refuse(sealed, keys, warpcrypt.FormatError, "not Unicode text")
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    for plain in ({LONE_SURROGATE: {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}},
                  {"__metadata__": {"a": LONE_SURROGATE}, "t": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}},
                  {"__metadata__": {LONE_SURROGATE: "a"}, "t": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}):
        plain_file(tmp_path / "plain", plain, b"x")
        with pytest.raises(warpcrypt.FormatError, match="not Unicode text"):
            ws.load_file(tmp_path / "plain", framework="np")
        with pytest.raises(Exception, match="surrogate|hex escape"):
            safetensors_numpy.load_file(str(tmp_path / "plain"))


def test_a_name_that_is_not_unicode_text_is_refused_when_written(tmp_path, keys):
    for data, metadata in (({LONE_SURROGATE: np.ones(2)}, None), ({"t": np.ones(2)}, {"a": LONE_SURROGATE}),
                           ({"t": np.ones(2)}, {LONE_SURROGATE: "a"})):
        with pytest.raises(warpcrypt.InvalidArgument, match="not Unicode text"):
            ws.save_file(data, tmp_path / "m.safetensors", keys=keys, metadata=metadata)
    assert os.listdir(tmp_path) == []


def test_a_huge_integer_is_refused_whatever_the_process_allows(tmp_path):
    """Python turns decimal digits into an int in time quadratic in their
    count; its guard, 4,300 digits, is a setting of the whole process that
    an application may lift. Every integer of a header is a size or an
    offset under 2^63, so a longer one is refused before it is converted."""
    path = tmp_path / "f"
    plain_file(path, b'{"t": {"dtype": "U8", "shape": [' + b"7" * 1_000_000 + b'], "data_offsets": [0, 1]}}', b"x")
    allowed = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        started = time.perf_counter()
        with pytest.raises(warpcrypt.FormatError, match="an integer of 1000000 digits"):
            ws.load_file(path, framework="np")
        assert time.perf_counter() - started < 2
    finally:
        sys.set_int_max_str_digits(allowed)


# Headers of megabytes in one field, made when a test runs.
LARGE_FIELDS = {
    "name": lambda: {"n" * 10_000_000: {"dtype": "X", "shape": [1], "data_offsets": [0, 1]}},
    "dtype": lambda: {"t": {"dtype": "X" * 10_000_000, "shape": [1], "data_offsets": [0, 1]}},
    "shape": lambda: {"t": {"dtype": "U8", "shape": ["x"] * 1_000_000, "data_offsets": [0, 1]}},
    "members": lambda: {"t": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1],
                              **{f"k{i}": 0 for i in range(300_000)}}},
}


@pytest.mark.parametrize("field", LARGE_FIELDS)
def test_a_refusal_quotes_the_header_briefly(tmp_path, field):
    """A refusal is one line that names what is wrong, never a copy of
    megabytes of the header it refuses."""
    plain_file(tmp_path / "f", LARGE_FIELDS[field](), b"x")
    with pytest.raises(warpcrypt.FormatError) as refused:
        ws.load_file(tmp_path / "f", framework="np")
    assert len(str(refused.value)) < 500 and "\n" not in str(refused.value)


def test_a_wrong_master_key_is_refused(sealed, keys):
    enc, sign = keys["keys"]
    other = {**enc, "k": base64.b64encode(os.urandom(32)).decode()}
    with pytest.raises(warpcrypt.InvalidTag, match="data key does not unwrap"):
        ws.load_file(sealed, keys=[other, sign], framework="np")
    with pytest.raises(Exception):
        ct_load(sealed, {"keys": [other, sign]})


def test_a_file_signed_by_another_key_is_refused(tmp_path, keys):
    enc, sign = keys["keys"]
    forger = ws.generate_keys(sign_kid="signer-1")["keys"][1]  # same kid, another key
    ws.save_file(tensors(), tmp_path / "f.safetensors", keys=[enc, forger])
    both_refuse(tmp_path / "f.safetensors", keys, warpcrypt.InvalidSignature, "signature does not verify")


def test_keys_the_header_names_must_be_among_the_callers(sealed, keys):
    enc, sign = keys["keys"]
    with pytest.raises(warpcrypt.InvalidKey, match="no signature key 'signer-1'"):
        ws.load_file(sealed, keys=[enc, {**sign, "kid": "someone-else"}], framework="np")
    with pytest.raises(warpcrypt.InvalidKey, match="no master key 'master-1'"):
        ws.load_file(sealed, keys=[{**enc, "kid": "x"}, sign], framework="np")


def test_a_policy_other_than_allow_all_is_refused_not_ignored(tmp_path, keys):
    """cryptotensors enforces a Rego access policy; warpcrypt runs no Rego,
    so it refuses any policy but the default rather than skip it."""
    ct_save(tensors(), tmp_path / "c.safetensors", keys, policy={"local": "package model\nallow = false"})
    with pytest.raises(warpcrypt.Unsupported, match="access policy"):
        ws.load_file(tmp_path / "c.safetensors", keys=keys, framework="np")
    with pytest.raises(Exception, match="[Pp]olicy"):
        ct_load(tmp_path / "c.safetensors", keys)


@pytest.mark.parametrize("chunks", [1, 5, 2**16])
def test_a_nonce_counter_that_would_wrap_is_refused(monkeypatch, chunks):
    """The reference refuses chunk nonces whose counter passes 2^32 - 1;
    so does warpcrypt, and its writer never picks such a base, whatever its
    random draw for the counter is (each extreme draw tried)."""
    with pytest.raises(warpcrypt.FormatError, match="overflow the nonce counter"):
        ct.chunk_nonces(b"\0" * 8 + b"\xff\xff\xff\xfe", 3, "tensor 't'")
    assert ct.chunk_nonces(b"\0" * 8 + b"\xff\xff\xff\xfe", 2, "")[1][-4:] == b"\xff\xff\xff\xff"
    room = 0x100000000 - chunks + 1  # the bases that leave room for every chunk
    for draw in sorted({0, room - 1, min(room, 0xFFFFFFFF), 0xFFFFFFFF}):
        monkeypatch.setattr(ct, "random_bytes", lambda n, draw=draw: draw.to_bytes(4, "big") if n == 4 else bytes(n))
        sealing = ct.new_sealing("aes256gcm", chunks * 64, 64)
        counters = [int.from_bytes(nonce[8:], "big") for nonce in (sealing.nonces[0], sealing.nonces[-1])]
        assert len(sealing.nonces) == chunks and counters[1] - counters[0] == chunks - 1 <= counters[1] <= 0xFFFFFFFF


def test_save_refuses_bad_arguments_before_writing(tmp_path, keys):
    enc, sign = keys["keys"]
    target = tmp_path / "never.safetensors"
    cases = [
        (dict(keys=[enc]), warpcrypt.InvalidArgument, "exactly one master key"),
        (dict(keys=[enc, {k: v for k, v in sign.items() if k != "d"}]), warpcrypt.InvalidKey, "no 'd'"),
        (dict(keys=keys, metadata={"__signature__": "x"}), warpcrypt.InvalidArgument, "may not set __signature__"),
        (dict(keys=keys, encrypt=["nope"]), warpcrypt.InvalidArgument, "'nope'"),
        (dict(keys=keys, version="3"), warpcrypt.InvalidArgument, "version"),
        (dict(keys=keys, chunk_size=100), warpcrypt.InvalidArgument, "multiple of 64"),
        (dict(keys=[{**enc, "k": base64.b64encode(b"short").decode()}, sign]), warpcrypt.InvalidKey, "32-byte key"),
        (dict(keys=[{**enc, "alg": "rot13"}, sign]), warpcrypt.Unsupported, "unknown encryption algorithm"),
    ]
    for arguments, error, match in cases:
        with pytest.raises(error, match=match):
            ws.save_file(tensors(), target, **arguments)
        assert not target.exists()
    assert os.listdir(tmp_path) == []


def test_a_failed_save_leaves_the_old_file(tmp_path, keys):
    target = tmp_path / "m.safetensors"
    target.write_bytes(b"old")
    with pytest.raises(warpcrypt.InvalidArgument):
        ws.save_file({"t": object()}, target, keys=keys)
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors"]


def test_secrets_stay_out_of_reprs(keys):
    key_set = ct.KeySet(keys)
    text = repr(key_set)
    for jwk in keys["keys"]:
        for member in ("k", "d"):
            if member in jwk:
                assert jwk[member] not in text
    sealing = ct.new_sealing("aes256gcm", 10, 64)
    assert sealing.data_key.hex() not in repr(sealing) and repr(sealing.data_key) not in repr(sealing)


def test_torch_tensors_round_trip_on_the_cpu(tmp_path, keys):
    torch = pytest.importorskip("torch")
    data = {"w": torch.randn(33, 7, dtype=torch.bfloat16), "i": torch.arange(10), "e": torch.empty(0, 2)}
    ws.save_file(data, tmp_path / "t.safetensors", keys=keys, chunk_size=64)
    got = ws.load_file(tmp_path / "t.safetensors", keys=keys)
    assert all(torch.equal(got[k], data[k]) and got[k].dtype == data[k].dtype for k in data)


def test_cryptotensors_files_with_tensors_in_the_clear(tmp_path, keys):
    data = tensors()
    ct_save(data, tmp_path / "c.safetensors", keys, tensors=["bias", "weight"])
    with ws.safe_open(tmp_path / "c.safetensors", "np", keys=keys) as f:
        assert [name for name in f.keys() if f.encrypted(name)] == ["bias", "weight"]
    same(ws.load_file(tmp_path / "c.safetensors", keys=keys, framework="np"), data)


# ---------------------------------------------------------------- progress


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 1 KiB: a test file is many pieces, and crosses every pinned
    slot many times."""
    monkeypatch.setattr(ws, "PIECE_BYTES", 1024)


class Recorded:
    """A progress callback that keeps its calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, done, total):
        self.calls.append((done, total))

    def assert_counts_up_to(self, total):
        """Several calls, bytes done growing to exactly the total."""
        dones = [done for done, _ in self.calls]
        assert len(self.calls) > 1 and {t for _, t in self.calls} == {total}
        assert dones == sorted(dones) and dones[-1] == total


def data_bytes(data) -> int:
    return sum(tensor.nbytes for tensor in data.values())


@pytest.mark.parametrize("framework", ["np", "pt"])
@pytest.mark.parametrize("version, chunk_size", [("2", 256), ("1", 256)])
def test_save_and_load_count_their_bytes(tmp_path, keys, small_pieces, framework, version, chunk_size):
    if framework == "pt":
        torch = pytest.importorskip("torch")
        data = {"w": torch.randn(300, 41), "i": torch.arange(5000), "e": torch.empty(0)}
    else:
        data = tensors()
    saved, loaded = Recorded(), Recorded()
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, version=version, chunk_size=chunk_size,
                 progress=saved)
    got = ws.load_file(tmp_path / "m.safetensors", keys=keys, framework=framework, progress=loaded)
    assert sorted(got) == sorted(data)
    saved.assert_counts_up_to(data_bytes(data))
    loaded.assert_counts_up_to(data_bytes(data))


def test_a_plain_save_counts_its_bytes(tmp_path, small_pieces):
    data, saved = tensors(), Recorded()
    ws.save_file(data, tmp_path / "m.safetensors", keys=None, progress=saved)
    saved.assert_counts_up_to(data_bytes(data))


class Stop(Exception):
    pass


def stop_after(calls: int):
    seen = []

    def progress(done, total):
        seen.append(done)
        if len(seen) == calls:
            raise Stop(f"stopped at {done} of {total} bytes")

    return progress


def test_a_progress_callback_that_raises_aborts_the_save(tmp_path, keys, small_pieces):
    target = tmp_path / "m.safetensors"
    with pytest.raises(Stop):
        ws.save_file(tensors(), target, keys=keys, chunk_size=256, progress=stop_after(3))
    assert os.listdir(tmp_path) == []
    target.write_bytes(b"old")
    with pytest.raises(Stop):
        ws.save_file(tensors(), target, keys=keys, chunk_size=256, progress=stop_after(3))
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["m.safetensors"]


def test_a_progress_callback_that_raises_aborts_the_load(sealed, keys, small_pieces):
    with pytest.raises(Stop):
        ws.load_file(sealed, keys=keys, framework="np", progress=stop_after(3))


def test_rewrap_counts_its_copy_and_a_raising_callback_leaves_the_file(tmp_path, keys, small_pieces):
    data = tensors()
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, chunk_size=256)
    before = (tmp_path / "m.safetensors").read_bytes()
    new_keys = ws.generate_keys(enc_kid="new", sign_kid="new-signer")
    with pytest.raises(Stop):
        ws.rewrap_file(tmp_path / "m.safetensors", keys=keys, new_keys=new_keys, progress=stop_after(2))
    assert (tmp_path / "m.safetensors").read_bytes() == before and os.listdir(tmp_path) == ["m.safetensors"]
    copied = Recorded()
    ws.rewrap_file(tmp_path / "m.safetensors", keys=keys, new_keys=new_keys, progress=copied)
    copied.assert_counts_up_to(data_bytes(data))
    same(ws.load_file(tmp_path / "m.safetensors", keys=new_keys, framework="np"), data)


# ---------------------------------------------------------------- on the GPU


@pytest.fixture
def cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not warpcrypt.devices():
        pytest.skip("no CUDA device (or PyTorch without CUDA): GPU safetensors tests skipped")
    return torch


def test_gpu_save_and_load_count_their_bytes(tmp_path, keys, cuda, small_pieces):
    torch = cuda
    data = {"w": torch.randn(300, 41, device="cuda:0"), "i": torch.arange(5000), "e": torch.empty(0)}
    saved, loaded = Recorded(), Recorded()
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, chunk_size=256, progress=saved)
    ws.load_file(tmp_path / "m.safetensors", device="cuda:0", keys=keys, progress=loaded)
    saved.assert_counts_up_to(data_bytes(data))
    loaded.assert_counts_up_to(data_bytes(data))


@pytest.mark.parametrize("version, chunk_size", [("2", 256), ("2", ct.DEFAULT_CHUNK_SIZE), ("1", 256)])
def test_gpu_load_matches_the_cpu_load(tmp_path, keys, cuda, small_pieces, version, chunk_size):
    torch = cuda
    data = {"w": torch.randn(300, 41, dtype=torch.bfloat16), "b": torch.randn(7), "e": torch.empty(0),
            "i": torch.arange(5000)}
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, version=version, chunk_size=chunk_size,
                 encrypt=["w", "e", "i"])
    got = ws.load_file(tmp_path / "m.safetensors", device="cuda:0", keys=keys)
    for name, tensor in data.items():
        assert got[name].device.type == "cuda" and torch.equal(got[name].cpu(), tensor), name
    # NumPy has no bfloat16, so cryptotensors' NumPy loader reads only "i".
    assert np.array_equal(ct_load(tmp_path / "m.safetensors", keys, ["i"])["i"], data["i"].numpy())


def test_gpu_device_map_splits_one_load(tmp_path, keys, cuda, small_pieces):
    torch = cuda
    data = {"layer.0.w": torch.randn(100, 10), "layer.1.w": torch.randn(100, 10), "head": torch.randn(3)}
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, chunk_size=128)
    last = f"cuda:{torch.cuda.device_count() - 1}"
    got = ws.load_file(tmp_path / "m.safetensors", device={"layer.0.": "cuda:0", "layer.1.": last, "": "cpu"},
                       keys=keys)
    assert str(got["layer.0.w"].device) == "cuda:0" and str(got["layer.1.w"].device) == last
    assert got["head"].device.type == "cpu"
    assert all(torch.equal(got[k].cpu(), data[k]) for k in data)
    with pytest.raises(warpcrypt.InvalidArgument, match="places no prefix of tensor 'head'"):
        ws.load_file(tmp_path / "m.safetensors", device={"layer.": "cuda:0"}, keys=keys)


@pytest.mark.parametrize("version", ["2", "1"])
def test_gpu_load_refuses_a_changed_chunk(tmp_path, keys, cuda, small_pieces, version):
    torch = cuda
    ws.save_file({"w": torch.randn(4096), "b": torch.randn(10)}, tmp_path / "m.safetensors", keys=keys,
                 chunk_size=256, version=version)
    n, header = header_of(tmp_path / "m.safetensors")
    flip(tmp_path / "m.safetensors", 8 + n + header["w"]["data_offsets"][0] + 5000)
    expected = r"tensor 'w', chunk 19 " if version == "2" else r"tensor 'w' does not"
    with pytest.raises(warpcrypt.InvalidTag, match=expected):
        ws.load_file(tmp_path / "m.safetensors", device="cuda:0", keys=keys)


@pytest.mark.parametrize("version", ["2", "1"])
def test_gpu_save_opens_in_cryptotensors(tmp_path, keys, cuda, small_pieces, version):
    torch = cuda
    data = {"w": torch.randn(1000, 3, device="cuda:0"), "e": torch.empty(0, device="cuda:0"),
            "h": torch.randn(5, dtype=torch.float16, device="cuda:0"), "c": torch.arange(9)}
    ws.save_file(data, tmp_path / "m.safetensors", keys=keys, chunk_size=512, version=version)
    got = ct_load(tmp_path / "m.safetensors", keys)
    for name, tensor in data.items():
        assert np.array_equal(got[name], tensor.cpu().numpy()), name
    back = ws.load_file(tmp_path / "m.safetensors", device="cuda:0", keys=keys)
    assert all(torch.equal(back[k], data[k].to("cuda:0")) for k in data)


# ---------------------------------------------------------------- the writer's file


def test_fill_mapped_copies_and_refuses_pages_the_file_cannot_back(tmp_path):
    import mmap

    with open(tmp_path / "f", "w+b") as f:
        f.truncate(8192)
        with mmap.mmap(f.fileno(), 8192) as mapped:
            view = memoryview(mapped)
            assert ws._native.fill_mapped(view[100:300], b"x" * 150) is True
            f.truncate(4096)  # the second page now lies past the end: a store there would be SIGBUS
            with pytest.raises(OSError) as raised:
                ws._native.fill_mapped(view[5000:5001], b"y")
            assert raised.value.errno == errno.ENOSPC
            with pytest.raises(warpcrypt.InvalidArgument, match="more than the region's"):
                ws._native.fill_mapped(view[0:1], b"zz")
            view.release()
    assert (tmp_path / "f").read_bytes() == bytes(100) + b"x" * 150 + bytes(4096 - 250)


def test_the_blocks_are_reserved_in_steps_beside_the_writers(tmp_path, keys, monkeypatch):
    reserved = []
    real = os.posix_fallocate
    monkeypatch.setattr(ws, "_RESERVE_STEP", 1000)
    monkeypatch.setattr(ws.os, "posix_fallocate", lambda fd, offset, length: (reserved.append((offset, length)),
                                                                             real(fd, offset, length)))
    ws.save_file(tensors(), tmp_path / "m.safetensors", keys=keys, chunk_size=128)
    size = os.path.getsize(tmp_path / "m.safetensors")
    assert len(reserved) == -(-size // 1000) > 1
    assert reserved == [(at, min(1000, size - at)) for at in range(0, size, 1000)]
    same(ct_load(tmp_path / "m.safetensors", keys), tensors())


def test_without_madvise_populate_the_copies_hold_the_gil_but_land(tmp_path, keys, monkeypatch):
    """Before Linux 5.14 fill_mapped copies nothing and answers False."""
    monkeypatch.setattr(ws._native, "fill_mapped", lambda region, data: False)
    ws.save_file(tensors(), tmp_path / "m.safetensors", keys=keys, chunk_size=128)
    same(ct_load(tmp_path / "m.safetensors", keys), tensors())


def test_a_filesystem_that_cannot_reserve_blocks_is_written_with_pwrite(tmp_path, keys, monkeypatch):
    def unsupported(fd, offset, length):
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(ws.os, "posix_fallocate", unsupported)
    ws.save_file(tensors(), tmp_path / "m.safetensors", keys=keys, chunk_size=128)
    same(ct_load(tmp_path / "m.safetensors", keys), tensors())


@pytest.mark.parametrize("full_from", [0, 2000], ids=["at once", "in the reserving thread"])
def test_a_full_disk_from_the_reservation_is_one_error_and_leaves_no_file(tmp_path, keys, monkeypatch, full_from):
    real = os.posix_fallocate

    def full(fd, offset, length):
        if offset >= full_from:
            raise OSError(28, "No space left on device")
        real(fd, offset, length)

    (tmp_path / "m.safetensors").write_bytes(b"the old model")
    monkeypatch.setattr(ws, "_RESERVE_STEP", 1000)
    monkeypatch.setattr(ws.os, "posix_fallocate", full)
    with pytest.raises(OSError, match="No space left"):
        ws.save_file(tensors(), tmp_path / "m.safetensors", keys=keys)
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors"]
    assert (tmp_path / "m.safetensors").read_bytes() == b"the old model"


def test_a_full_disk_is_one_error_not_a_signal_and_leaves_no_file(tmp_path):
    """A real full filesystem: a 1 MiB tmpfs, mounted in a user and mount
    namespace of the test's own, and 4 MiB of host and of CUDA tensors
    (where there is a GPU). The writer allocates each page before writing
    it, so the disk filling up is ENOSPC from save_file, not a SIGBUS that
    kills the process; the older file stays as it was."""
    import subprocess
    import sys
    import textwrap

    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no user namespaces here to mount a small filesystem in: " + probe.stderr.decode().strip())
    script = textwrap.dedent("""
        import os, sys, subprocess, numpy as np, warpcrypt, warpcrypt.safetensors as ws
        mount = sys.argv[1]
        keys = ws.generate_keys()
        sources = [{"w": np.ones(1 << 20, np.float32)}]
        try:
            import torch
            if torch.cuda.is_available():
                sources.append({"w": torch.ones(1 << 20, dtype=torch.float32, device="cuda:0")})
        except ImportError:
            pass
        for tensors in sources:
            with open(os.path.join(mount, "m.safetensors"), "wb") as old:
                old.write(b"the old model")
            for key_set in (keys, None):
                try:
                    ws.save_file(tensors, os.path.join(mount, "m.safetensors"), keys=key_set)
                    print("saved")
                except OSError as error:
                    print("refused:", error.errno)
            print(sorted(os.listdir(mount)), open(os.path.join(mount, "m.safetensors"), "rb").read())
    """)
    command = f"mount -t tmpfs -o size=1m none {tmp_path} && {sys.executable} -c '{script}' {tmp_path}"
    result = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", command],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) % 3 == 0 and lines, result.stdout
    for first in range(0, len(lines), 3):
        assert lines[first:first + 3] == ["refused: 28", "refused: 28",
                                          "['m.safetensors'] b'the old model'"], result.stdout


def test_a_file_size_limit_is_an_error_not_a_signal(tmp_path, keys):
    """Under RLIMIT_FSIZE the blocks cannot be reserved: EFBIG before any
    page is mapped, so no SIGBUS or SIGXFSZ ends the process."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import resource, signal, numpy as np, warpcrypt, warpcrypt.safetensors as ws
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))
        try:
            ws.save_file({{"w": np.zeros(1 << 20, np.float32)}}, {str(tmp_path / "m.safetensors")!r}, keys={keys!r})
        except OSError as error:
            print("refused:", error.errno)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("refused: 27"), result.stdout
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("member, value, match", [
    ("k", "", "takes a 32-byte key, not 0 bytes"),
    ("d", "", "'d' is 0 bytes, not 32"),
    ("x", "", "'x' is 0 bytes, not 32"),
])
def test_empty_secrets_are_refused(tmp_path, keys, member, value, match):
    enc, sign = keys["keys"]
    given = [{**enc, member: value}, sign] if member == "k" else [enc, {**sign, member: value}]
    with pytest.raises(warpcrypt.InvalidKey, match=match):
        ws.save_file(tensors(), tmp_path / "m.safetensors", keys=given)
    assert os.listdir(tmp_path) == []


def test_the_output_follows_the_librarys_rules_for_links(tmp_path, keys):
    """save_file writes through the library's atomic output: a dangling link
    is refused (not followed into a file the caller never named)."""
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="symlink to a file that does not exist"):
        ws.save_file(tensors(), tmp_path / "dangling", keys=keys)
    assert sorted(os.listdir(tmp_path)) == ["dangling"]


def test_a_failure_names_the_first_failing_piece_in_order_not_the_first_to_finish():
    """Pieces load on several readers at once: which failing piece finished
    first must not decide which tensor the error names, or the same file
    would name different tensors from run to run (it did on 32 cores). The
    failure of the first failing piece in file order is raised."""
    import threading
    import time

    later_failed = threading.Event()

    def work(index: int) -> None:
        if index == 0:
            later_failed.wait(5)
            time.sleep(0.05)
            raise ValueError("piece 0")
        later_failed.set()
        raise ValueError(f"piece {index}")

    with pytest.raises(ValueError, match="piece 0"):
        ws._run_all(work, [(0,), (1,)])
