"""warpcrypt-tensors, the command line of warpcrypt.safetensors: every
command on real files, against safetensors and cryptotensors, and each
failure as one line and the `warpcrypt` CLI's exit status kinds."""

from __future__ import annotations

import json
import os
import stat
import struct
import subprocess
import sys
import time

import pytest

np = pytest.importorskip("numpy")
safetensors_numpy = pytest.importorskip("safetensors.numpy")
cryptotensors = pytest.importorskip("cryptotensors", reason="the cryptotensors package is not installed")
import cryptotensors.numpy  # noqa: E402
from test_safetensors import plain_file  # noqa: E402

from warpcrypt import _tensors_cli  # noqa: E402

WEIGHTS = {"w": np.arange(600, dtype=np.float32).reshape(20, 30), "b": np.ones(7, np.int64), "e": np.zeros(0, np.uint8)}


def tensors_cli(*args, check=True):
    # Bytes, decoded here: text mode would turn the progress line's carriage
    # returns into newlines.
    result = subprocess.run([sys.executable, "-m", "warpcrypt._tensors_cli", *map(str, args)], capture_output=True,
                            timeout=120)
    result.stdout, result.stderr = result.stdout.decode(), result.stderr.decode()
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def files(tmp_path):
    tensors_cli("keygen", tmp_path / "keys.json", "--enc-kid", "m", "--sign-kid", "s")
    safetensors_numpy.save_file(WEIGHTS, str(tmp_path / "plain.safetensors"), metadata={"model": "tiny"})
    return tmp_path


def test_keygen_writes_a_key_set_only_its_owner_reads_and_never_over_another(files):
    keys = files / "keys.json"
    assert stat.S_IMODE(os.stat(keys).st_mode) == 0o600
    assert [k["kty"] for k in json.loads(keys.read_text())["keys"]] == ["oct", "okp"]
    before = keys.read_bytes()
    result = tensors_cli("keygen", keys, check=False)
    assert result.returncode == 3 and result.stderr.count("\n") == 1 and "exists" in result.stderr
    assert keys.read_bytes() == before


def test_encrypt_inspect_decrypt_round_trip(files):
    tensors_cli("encrypt", files / "plain.safetensors", files / "enc.safetensors", "--keys", files / "keys.json",
                "--chunk-size", "256")
    keys = json.loads((files / "keys.json").read_text())
    enc, sign = keys["keys"]
    with cryptotensors.safe_open(str(files / "enc.safetensors"), framework="np",
                                 config={"enc_key": enc, "sign_key": sign}) as f:
        assert all(np.array_equal(f.get_tensor(name), WEIGHTS[name]) for name in WEIGHTS)
    shown = json.loads(tensors_cli("inspect", files / "enc.safetensors", "--keys", files / "keys.json",
                                   "--json").stdout)
    assert shown["verified"] and shown["format"] == "CryptoTensors version 2" and shown["chunk_size"] == 256
    assert shown["metadata"] == {"model": "tiny"}
    assert {t["name"]: t["encrypted"] for t in shown["tensors"]} == {"w": True, "b": True, "e": True}
    unverified = tensors_cli("inspect", files / "enc.safetensors").stdout
    assert "NOT verified" in unverified
    tensors_cli("decrypt", files / "enc.safetensors", files / "back.safetensors", "--keys", files / "keys.json")
    back = safetensors_numpy.load_file(str(files / "back.safetensors"))
    assert all(np.array_equal(back[name], WEIGHTS[name]) for name in WEIGHTS)


def test_encrypt_some_tensors_and_rewrap(files):
    tensors_cli("encrypt", files / "plain.safetensors", files / "enc.safetensors", "--keys", files / "keys.json",
                "--tensors", "w", "--version", "1")
    shown = json.loads(tensors_cli("inspect", files / "enc.safetensors", "--keys", files / "keys.json",
                                   "--json").stdout)
    assert {t["name"]: t["encrypted"] for t in shown["tensors"]} == {"w": True, "b": False, "e": False}
    tensors_cli("keygen", files / "new.json", "--enc-kid", "m2", "--sign-kid", "s2")
    tensors_cli("rewrap", files / "enc.safetensors", "--keys", files / "keys.json", "--new-keys", files / "new.json")
    refused = tensors_cli("inspect", files / "enc.safetensors", "--keys", files / "keys.json", check=False)
    assert refused.returncode == 2 and "no signature key 's2'" in refused.stderr
    shown = json.loads(tensors_cli("inspect", files / "enc.safetensors", "--keys", files / "new.json",
                                   "--json").stdout)
    assert shown["master_key"]["kid"] == "m2" and shown["verified"]


@pytest.mark.parametrize("damage, status, words", [
    ("flip", 4, "does not authenticate"),
    ("truncate", 4, "truncated"),
    ("missing", 3, "No such file"),
])
def test_failures_are_one_line_and_an_exit_status(files, damage, status, words):
    tensors_cli("encrypt", files / "plain.safetensors", files / "enc.safetensors", "--keys", files / "keys.json")
    target = files / "enc.safetensors"
    raw = bytearray(target.read_bytes())
    if damage == "flip":
        raw[-10] ^= 1
        target.write_bytes(raw)
    elif damage == "truncate":
        target.write_bytes(raw[:-3])
    else:
        target.unlink()
    result = tensors_cli("decrypt", target, files / "out.safetensors", "--keys", files / "keys.json", check=False)
    assert result.returncode == status, result.stderr
    assert result.stderr.count("\n") == 1 and words in result.stderr and "Traceback" not in result.stderr
    assert not (files / "out.safetensors").exists()
    secret = json.loads((files / "keys.json").read_text())["keys"][0]["k"]
    assert secret not in result.stderr and secret not in result.stdout


@pytest.mark.parametrize("command", ["encrypt over the plain file", "encrypt over the keys", "decrypt over the keys",
                                     "decrypt over a link to the file", "rewrap -o over the new keys",
                                     "rewrap -o over the file"])
def test_an_output_that_is_a_file_the_command_reads_is_refused(files, command):
    """`encrypt PLAIN KEYS.json --keys KEYS.json` once replaced the keys with
    the encrypted file. Every output that is a file the command reads, by
    any name, is refused with one line (exit 2), and every file is kept."""
    keys, plain, enc = files / "keys.json", files / "plain.safetensors", files / "enc.safetensors"
    tensors_cli("encrypt", plain, enc, "--keys", keys)
    tensors_cli("keygen", files / "new.json")
    (files / "enc-link").symlink_to(enc)
    args = {
        "encrypt over the plain file": ("encrypt", plain, files / "." / plain.name, "--keys", keys),
        "encrypt over the keys": ("encrypt", plain, keys, "--keys", keys),
        "decrypt over the keys": ("decrypt", enc, keys, "--keys", keys),
        "decrypt over a link to the file": ("decrypt", enc, files / "enc-link", "--keys", keys),
        "rewrap -o over the new keys": ("rewrap", enc, "--keys", keys, "--new-keys", files / "new.json", "-o",
                                        files / "new.json"),
        "rewrap -o over the file": ("rewrap", enc, "--keys", keys, "--new-keys", files / "new.json", "-o",
                                    files / "enc-link"),
    }[command]
    before = {path: path.read_bytes() for path in files.iterdir() if not path.is_symlink()}
    result = tensors_cli(*args, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "a file this command reads" in result.stderr
    assert {path: path.read_bytes() for path in files.iterdir() if not path.is_symlink()} == before


def test_rewrap_without_an_output_still_replaces_its_file(files):
    enc = files / "enc.safetensors"
    tensors_cli("encrypt", files / "plain.safetensors", enc, "--keys", files / "keys.json")
    tensors_cli("keygen", files / "new.json", "--sign-kid", "s2")
    tensors_cli("rewrap", enc, "--keys", files / "keys.json", "--new-keys", files / "new.json")
    assert json.loads(tensors_cli("inspect", enc, "--keys", files / "new.json", "--json").stdout)["verified"]


def test_a_keys_file_that_is_not_json(files):
    (files / "bad.json").write_text("{not json")
    (files / "bad.json").chmod(0o600)
    result = tensors_cli("encrypt", files / "plain.safetensors", files / "o", "--keys", files / "bad.json", check=False)
    assert result.returncode == 2 and "is not JSON" in result.stderr


def test_progress_is_shown_when_asked_and_not_by_default_without_a_terminal(files):
    """Each step draws one line, rewritten in place and ended at 100 %.
    The tests' stderr is a pipe, not a terminal: no line unless asked."""
    keys = files / "keys.json"
    shown = tensors_cli("encrypt", files / "plain.safetensors", files / "enc.safetensors", "--keys", keys,
                        "--progress").stderr
    data = sum(tensor.nbytes for tensor in WEIGHTS.values())
    size = f"{data / 1024:.1f} KiB"
    assert shown.endswith("\n") and shown.count("\n") == 2
    steps = [line.split("\r")[-1].rstrip() for line in shown.split("\n")[:-1]]
    assert steps == [f"reading: {size} of {size} (100 %)", f"encrypting: {size} of {size} (100 %)"]
    for command in (["decrypt", files / "enc.safetensors", files / "back.safetensors", "--keys", keys],
                    ["rewrap", files / "enc.safetensors", "--keys", keys, "--new-keys", keys]):
        assert tensors_cli(*command).stderr == ""
        last = tensors_cli(*command, "--progress").stderr.split("\n")[-2].split("\r")[-1].rstrip()
        assert last.endswith(f"{size} of {size} (100 %)")
    assert tensors_cli("rewrap", files / "enc.safetensors", "--keys", keys, "--new-keys", keys,
                       "--no-progress").stderr == ""


def inspect_here(capsys, *args):
    """inspect in this process (the parsing is what is tested, not the
    interpreter's start): its exit status, stdout and stderr."""
    status = _tensors_cli.main(["inspect", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def edit_header(path, edit) -> None:
    """The file with its header as `edit` leaves it (a dict it changes in
    place), its data as it was; the signature no longer matches."""
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    edit(header)
    plain_file(path, header, raw[8 + length:])


def test_a_shape_of_huge_rank_is_refused_at_once(files):
    """500,000 dimensions (a 10 MB header): inspect and encrypt spent
    minutes multiplying the shape out; now one line and status 4 at once."""
    huge = files / "huge.safetensors"
    plain_file(huge, {"t": {"dtype": "U8", "shape": [2**62] * 500_000, "data_offsets": [0, 1]}}, b"x")
    for command in (["inspect", huge], ["encrypt", huge, files / "out", "--keys", files / "keys.json"]):
        started = time.perf_counter()
        result = tensors_cli(*command, check=False)
        assert time.perf_counter() - started < 20
        assert result.returncode == 4 and result.stderr.count("\n") == 1, result.stderr
        assert "500000 dimensions, more than 64" in result.stderr
    assert not (files / "out").exists()


def crypto_keys(value):
    return lambda header: header["__metadata__"].__setitem__("__crypto_keys__", value)


def encryption(value):
    return lambda header: header["__metadata__"].__setitem__("__encryption__", value)


@pytest.mark.parametrize("edit, words", [
    (lambda header: header["__metadata__"].pop("__crypto_keys__"), "without __crypto_keys__"),
    (crypto_keys("1"), "__crypto_keys__ is not a JSON object"),
    (crypto_keys("[" * 5000), "__crypto_keys__ is not JSON"),
    (crypto_keys("{bad"), "__crypto_keys__ is not JSON"),
    (crypto_keys('{"sign": 1}'), "does not name a key"),
    (encryption("[" * 5000), "__encryption__ is not JSON"),
    (encryption("[]"), "__encryption__ is not a JSON object"),
    (encryption('{"nope": {}}'), "which is no tensor of the file"),
], ids=["no crypto keys", "crypto keys not an object", "crypto keys nested", "crypto keys not json",
        "no signer", "encryption nested", "encryption not an object", "encryption names no tensor"])
def test_inspect_without_keys_refuses_malformed_encryption_fields(files, capsys, edit, words):
    """Without keys, inspect shows what the header claims, unverified; it
    read the claims with json.loads and dict lookups of its own, and a
    malformed field ended in KeyError, AttributeError, RecursionError or
    ValueError (status 1 or 2), or was shown as if it were sound. The
    claims are read by the library's parser: FormatError, status 4."""
    target = files / "enc.safetensors"
    tensors_cli("encrypt", files / "plain.safetensors", target, "--keys", files / "keys.json")
    assert inspect_here(capsys, target)[0] == 0
    edit_header(target, edit)
    status, out, err = inspect_here(capsys, target)
    assert status == 4 and err.count("\n") == 1 and words in err, err
    assert out == ""


def test_inspect_reads_the_encryption_field_once_not_once_per_tensor(files, capsys):
    """5,000 tensors that the header claims are encrypted: inspect parsed
    __encryption__ again for each tensor, in time quadratic in the header."""
    target = files / "enc.safetensors"
    tensors_cli("encrypt", files / "plain.safetensors", target, "--keys", files / "keys.json")
    names = [f"t{i}" for i in range(5000)]

    def many(header):
        sealed = json.loads(header["__metadata__"]["__encryption__"])["w"]
        header["__metadata__"]["__encryption__"] = json.dumps({name: sealed for name in names})
        for name in ("w", "b", "e"):
            del header[name]
        header.update({name: {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]} for i, name in enumerate(names)})

    edit_header(target, many)
    with open(target, "r+b") as f:  # the data section: a byte per tensor
        (length,) = struct.unpack("<Q", f.read(8))
        f.truncate(8 + length + len(names))
    started = time.perf_counter()
    status, out, err = inspect_here(capsys, target)
    assert time.perf_counter() - started < 2
    assert status == 0, err
    assert out.count(" encrypted\n") == len(names)


@pytest.mark.parametrize("name", ["w\x1b[2J\nsignature: verified", "w\x9b31m", "w\u202egnp.exe"])
def test_inspect_shows_a_hostile_name_escaped_on_one_line(files, capsys, name):
    """Names and metadata are the file's, shown before anything verifies
    them: a control character (a terminal escape, a newline, a C1 control,
    a bidirectional override) is shown escaped, so a header can neither
    forge a line of the report nor drive the terminal."""
    target = files / "hostile.safetensors"
    plain_file(target, {"__metadata__": {"note": name}, name: {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}},
               b"x")
    status, out, err = inspect_here(capsys, target)
    assert status == 0, err
    assert not any(character in out for character in "\x1b\x9b\u202e")
    assert out.count("\n") == 3 and not any(line.startswith("signature") for line in out.splitlines())


def test_a_checkpoint_rewrap_that_fails_midway_leaves_every_shard_as_it_was(tmp_path, monkeypatch):
    """The third shard's rewrap fails after two were rewrapped: no shard is
    replaced, and nothing is left beside them."""
    np = pytest.importorskip("numpy")
    import warpcrypt._tensors_cli as cli
    import warpcrypt.safetensors as ws
    from warpcrypt.safetensors.numpy import save_state_dict

    keys, new_keys = ws.generate_keys(), ws.generate_keys()
    for name, value in (("keys.json", keys), ("new.json", new_keys)):
        (tmp_path / name).write_text(json.dumps(value))
        (tmp_path / name).chmod(0o600)
    folder = tmp_path / "checkpoint"
    save_state_dict({f"layers.{i}": np.full((64, 64), i, np.float32) for i in range(6)}, folder, keys=keys,
                    max_shard_size=40_000)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert len(before) == 4  # three shards and the index
    rewrap = ws.rewrap_file
    calls = []

    def failing_third(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        rewrap(*args, **kwargs)

    monkeypatch.setattr(ws, "rewrap_file", failing_third)
    status = cli.main(["rewrap", str(folder), "--keys", str(tmp_path / "keys.json"),
                       "--new-keys", str(tmp_path / "new.json")])
    assert status == 3 and len(calls) == 3
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
