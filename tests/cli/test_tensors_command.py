"""`warpcrypt tensors`: encrypted safetensors from the main CLI, which runs
the Python package's warpcrypt-tensors. Listed in the help, each command on
real files, --json parsed, and each failure one line with the CLI's exit
status and no output left behind.

The tests put a warpcrypt-tensors of their own on PATH, which runs the
package installed for the interpreter running the tests (scripts/test.sh
installs this checkout's): what an install puts there."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest


TENSORS = {"w": ("F32", [2, 3], bytes(range(24))), "b": ("I64", [2], bytes(range(100, 116)))}
TRANSFER_FIELDS = {"command", "ok", "bytes_in", "bytes_out", "seconds", "gbps"}


@pytest.fixture(scope="module")
def script_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("bin")
    script = directory / "warpcrypt-tensors"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom warpcrypt._tensors_cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return directory


@pytest.fixture
def tensors(run_cli, script_dir):
    """`tensors(*args)`: `warpcrypt tensors args` with the script on PATH."""
    environment = {"PATH": f"{script_dir}{os.pathsep}{os.environ.get('PATH', '')}"}

    def run(*args, env=None):
        return run_cli("tensors", *args, env={**environment, **(env or {})})

    return run


def write_plain(path: Path) -> None:
    """A safetensors file of TENSORS, one after the other."""
    header, offset = {}, 0
    for name, (dtype, shape, data) in TENSORS.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    data = b"".join(TENSORS[name][2] for name in header)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def tensor_bytes(path: Path) -> dict[str, bytes]:
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.pop("__metadata__", None)
    data = raw[8 + length:]
    return {name: data[start:end] for name, (start, end) in ((n, e["data_offsets"]) for n, e in header.items())}


@pytest.fixture
def files(tmp_path, tensors) -> Path:
    tensors("keygen", tmp_path / "keys.json", "--enc-kid", "m", "--sign-kid", "s").check()
    write_plain(tmp_path / "plain.safetensors")
    return tmp_path


def one_json_line(run) -> dict:
    lines = run.stdout.decode().splitlines()
    assert len(lines) == 1, run.stdout
    return json.loads(lines[0])


def test_listed_in_the_help_with_its_line(run_cli):
    listing = run_cli("--help").check().stdout.decode()
    line = next(line for line in listing.splitlines() if line.split()[:1] == ["tensors"])
    assert "encrypted safetensors" in line
    assert "warpcrypt-tensors" in run_cli("help", "tensors").check().stdout.decode()


def test_its_help_is_the_python_tools(tensors):
    shown = tensors("--help").check().stdout.decode()
    assert shown.startswith("usage: warpcrypt tensors")
    assert all(command in shown for command in ("inspect", "encrypt", "decrypt", "rewrap", "keygen"))
    assert tensors("encrypt", "--help").check().stdout.decode().startswith("usage: warpcrypt tensors encrypt")


def test_encrypt_inspect_decrypt_rewrap_with_json(files, tensors):
    keys, plain, enc = files / "keys.json", files / "plain.safetensors", files / "enc.safetensors"
    report = one_json_line(tensors("encrypt", plain, enc, "--keys", keys, "--json").check())
    assert set(report) == TRANSFER_FIELDS and report["command"] == "tensors encrypt" and report["ok"]
    assert report["bytes_in"] == plain.stat().st_size and report["bytes_out"] == enc.stat().st_size

    shown = one_json_line(tensors("inspect", enc, "--keys", keys, "--json").check())
    assert shown["command"] == "tensors inspect" and shown["ok"] and shown["verified"]
    assert shown["format"] == "CryptoTensors version 2" and shown["master_key"]["kid"] == "m"
    assert {t["name"]: (t["encrypted"], t["bytes"]) for t in shown["tensors"]} == {
        name: (True, len(data)) for name, (_, _, data) in TENSORS.items()}
    assert "NOT verified" in tensors("inspect", enc).check().stdout.decode()

    report = one_json_line(tensors("decrypt", enc, files / "back.safetensors", "--keys", keys, "--json").check())
    assert set(report) == TRANSFER_FIELDS and report["command"] == "tensors decrypt"
    assert tensor_bytes(files / "back.safetensors") == {name: data for name, (_, _, data) in TENSORS.items()}

    tensors("keygen", files / "new.json", "--sign-kid", "s2", "--json").check()
    report = one_json_line(tensors("rewrap", enc, "--keys", keys, "--new-keys", files / "new.json", "--json").check())
    assert set(report) == TRANSFER_FIELDS and report["command"] == "tensors rewrap"
    assert one_json_line(tensors("inspect", enc, "--keys", files / "new.json", "--json"))["signing_key"]["kid"] == "s2"


def test_keygen_reports_the_key_names_never_the_keys(files, tensors):
    report = one_json_line(tensors("keygen", files / "more.json", "--enc-kid", "m9", "--json").check())
    assert report["master_key"] == {"alg": "aes256gcm", "kid": "m9", "kty": "oct"}
    secrets = [jwk[m] for jwk in json.loads((files / "more.json").read_text())["keys"] for m in ("k", "d") if m in jwk]
    assert not any(secret in json.dumps(report) for secret in secrets)


def test_keys_from_the_environment(files, tensors):
    variable = {"CRYPTOTENSOR_KEYS": (files / "keys.json").read_text(), "OTHER_KEYS": (files / "keys.json").read_text()}
    tensors("encrypt", files / "plain.safetensors", files / "enc.safetensors", "--keys", "env", env=variable).check()
    tensors("decrypt", files / "enc.safetensors", files / "back.safetensors", "--keys", "env:OTHER_KEYS",
            env=variable).check()
    assert tensor_bytes(files / "back.safetensors") == {name: data for name, (_, _, data) in TENSORS.items()}


def damage(target: Path, how: str) -> None:
    raw = bytearray(target.read_bytes())
    if how == "flipped":
        raw[-3] ^= 1
        target.write_bytes(raw)
    elif how == "truncated":
        target.write_bytes(raw[:-5])
    else:
        target.unlink()


@pytest.mark.parametrize("case, status, kind, words", [
    ("missing file", 3, "io", "No such file or directory"),
    ("flipped", 4, "auth", "does not authenticate"),
    ("truncated", 4, "auth", "truncated"),
    ("other keys of the same names", 4, "auth", "signature does not verify"),
    ("keys of other names", 2, "usage", "no signature key 's' among the key file"),
    ("missing key file", 3, "io", "cannot read the key file"),
    ("unset variable", 2, "usage", "the environment variable NO_SUCH_KEYS is not set"),
])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_failure_is_one_line_its_exit_status_and_no_output(files, tensors, case, status, kind, words, as_json):
    keys, enc, out = files / "keys.json", files / "enc.safetensors", files / "out.safetensors"
    tensors("encrypt", files / "plain.safetensors", enc, "--keys", keys).check()
    if case in ("missing file", "flipped", "truncated"):
        damage(enc, case)
    elif case == "other keys of the same names":
        keys = files / "other.json"
        tensors("keygen", keys, "--enc-kid", "m", "--sign-kid", "s").check()
    elif case == "keys of other names":
        keys = files / "other.json"
        tensors("keygen", keys, "--enc-kid", "m2", "--sign-kid", "s2").check()
    elif case == "missing key file":
        keys = files / "absent.json"
    else:
        keys = "env:NO_SUCH_KEYS"
    before = sorted(path.name for path in files.iterdir())
    run = tensors("decrypt", enc, out, "--keys", keys, *(["--json"] if as_json else []))
    assert run.returncode == status, run.stderr_text
    if as_json:
        report = one_json_line(run)
        assert run.stderr == b"" and report["ok"] is False
        assert (report["command"], report["kind"], report["exit"]) == ("tensors decrypt", kind, status)
        assert words in report["message"]
    else:
        assert run.stdout == b"" and len(run.stderr_lines) == 1, run.stderr_text
        assert run.stderr_lines[0].startswith("warpcrypt tensors: ") and words in run.stderr_text
    assert sorted(path.name for path in files.iterdir()) == before  # no output, no temporary left


def test_a_command_line_that_does_not_parse_is_one_line(tensors):
    for args in (["encrypt"], ["nosuch"], ["inspect", "f", "--bogus"]):
        run = tensors(*args)
        assert run.returncode == 2 and run.stdout == b"" and len(run.stderr_lines) == 1, run.stderr_text
        assert "(see 'warpcrypt tensors" in run.stderr_text


def test_without_the_python_package_it_says_what_to_install(run_cli, tmp_path):
    run = run_cli("tensors", "inspect", "x", env={"PATH": str(tmp_path)})
    assert run.returncode == 2 and run.stdout == b"" and len(run.stderr_lines) == 1
    assert run.stderr_lines[0] == ("warpcrypt: tensors runs warpcrypt-tensors from the Python package, found neither "
                                   "beside warpcrypt nor on PATH: install it (pip install warpcrypt)")


def test_a_script_whose_python_is_gone_is_named_with_what_to_do(run_cli, tmp_path):
    """A virtual environment moved or deleted after the install leaves the
    script with a first line naming no interpreter: the kernel's ENOENT is
    then not "found neither beside warpcrypt nor on PATH"."""
    script = tmp_path / "warpcrypt-tensors"
    script.write_text(f"#!{tmp_path / 'gone' / 'python'}\n")
    script.chmod(0o755)
    run = run_cli("tensors", "inspect", "x", env={"PATH": str(tmp_path)})
    assert run.returncode == 2 and run.stdout == b"" and len(run.stderr_lines) == 1
    assert run.stderr_lines[0] == (f"warpcrypt: tensors runs {script}, but the Python its first line names is missing "
                                   "(a moved or deleted virtual environment): reinstall the package "
                                   "(pip install warpcrypt)")


def test_warpcrypt_tensors_stays_an_alias(files, script_dir):
    """The script on its own, as pip installs it, names itself."""
    run = subprocess.run([str(script_dir / "warpcrypt-tensors"), "inspect", files / "absent"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 3 and run.stderr.startswith("warpcrypt-tensors: ")


# ---- sharded checkpoints: a folder wherever a file is taken ------------------


@pytest.fixture
def checkpoint(files) -> Path:
    """A plain sharded checkpoint of three shards, as save_state_dict and
    huggingface_hub lay it out."""
    np = pytest.importorskip("numpy")
    from warpcrypt.safetensors.numpy import save_state_dict

    arrays = {f"layers.{i}.weight": np.full((64, 64), i, np.float32) for i in range(6)}
    save_state_dict(arrays, files / "plain", keys=None, max_shard_size=40_000, metadata={"model": "demo"})
    return files / "plain"


def checkpoint_tensors(folder: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for shard in sorted(folder.glob("model-*-of-*.safetensors")):
        found.update(tensor_bytes(shard))
    return found


def test_a_sharded_checkpoint_is_encrypted_inspected_rewrapped_and_decrypted(files, tensors, checkpoint):
    keys, enc = files / "keys.json", files / "enc"
    report = one_json_line(tensors("encrypt", checkpoint, enc, "--keys", keys, "--json").check())
    assert report["ok"] and report["bytes_out"] > report["bytes_in"]
    assert sorted(path.name for path in enc.iterdir()) == sorted(path.name for path in checkpoint.iterdir())
    shown = one_json_line(tensors("inspect", enc, "--keys", keys, "--json").check())
    assert shown["verified"] and len(shown["shards"]) == 3
    assert all(tensor["encrypted"] for shard in shown["shards"] for tensor in shard["tensors"])
    tensors("keygen", files / "new.json", "--enc-kid", "m2", "--sign-kid", "s2").check()
    tensors("rewrap", enc, "--keys", keys, "--new-keys", files / "new.json").check()
    tensors("inspect", enc / "model.safetensors.index.json", "--keys", files / "new.json").check()
    tensors("rewrap", enc, "--keys", files / "new.json", "--new-keys", keys, "-o", files / "back-to-old").check()
    tensors("decrypt", files / "back-to-old", files / "clear", "--keys", keys).check()
    assert checkpoint_tensors(files / "clear") == checkpoint_tensors(checkpoint)
    index = json.loads((files / "clear" / "model.safetensors.index.json").read_text())
    assert index["metadata"]["model"] == "demo"


@pytest.mark.parametrize("attack", ["swap two shards", "drop a shard", "edit the index"])
def test_an_attacked_checkpoint_is_refused_by_every_command(files, tensors, checkpoint, attack):
    keys, enc = files / "keys.json", files / "enc"
    tensors("encrypt", checkpoint, enc, "--keys", keys).check()
    first, second = sorted(enc.glob("model-*-of-*.safetensors"))[:2]
    if attack == "swap two shards":
        first.rename(files / "swap")
        second.rename(first)
        (files / "swap").rename(second)
    elif attack == "drop a shard":
        second.unlink()
    else:
        index_path = enc / "model.safetensors.index.json"
        index = json.loads(index_path.read_text())
        index["metadata"]["model"] = "other"
        index_path.write_text(json.dumps(index))
    for command in (["inspect", enc], ["decrypt", enc, files / "clear"], ["rewrap", enc, "-o", files / "re"]):
        extra = ["--new-keys", keys] if command[0] == "rewrap" else []
        run = tensors(*command, "--keys", keys, *extra)
        assert run.returncode in (3, 4) and len(run.stderr_lines) == 1 and run.stdout == b"", run.stderr_text
        assert not (files / "clear").exists() and not (files / "re").exists()


def test_a_checkpoint_refuses_tensors_and_its_own_folder_as_output(files, tensors, checkpoint):
    keys = files / "keys.json"
    run = tensors("encrypt", checkpoint, files / "enc", "--keys", keys, "--tensors", "layers.0.weight")
    assert run.returncode == 2 and "--tensors takes a file" in run.stderr_text
    before = {path.name: path.read_bytes() for path in checkpoint.iterdir()}
    run = tensors("encrypt", checkpoint, checkpoint, "--keys", keys)
    assert run.returncode == 2 and "a file this command reads" in run.stderr_text
    assert {path.name: path.read_bytes() for path in checkpoint.iterdir()} == before
