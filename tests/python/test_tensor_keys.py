"""keys= as users hold them (warpcrypt._tensor_keys): JWKs, a key file by
path or file: URL, an environment variable as cryptotensors' "env" provider
reads it; each refusal one clear sentence that names what is missing and
never quotes key material; and the same files and variables opening both
ways with cryptotensors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy")

import warpcrypt  # noqa: E402
import warpcrypt.safetensors as ws  # noqa: E402
from warpcrypt import _cryptotensors as ct  # noqa: E402
from warpcrypt._tensor_keys import ENV_VARIABLE, MAX_KEY_FILE_BYTES, key_file  # noqa: E402
from warpcrypt.safetensors import numpy as wnp  # noqa: E402

WEIGHTS = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.ones(5, np.int64)}


@pytest.fixture
def keys():
    return ws.generate_keys(enc_kid="master", sign_kid="signer")


@pytest.fixture
def key_path(tmp_path, keys):
    return write_key_file(tmp_path / "keys.jwk", keys)


def write_key_file(path, content, mode=0o600):
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    path.chmod(mode)
    return path


def secrets_of(keys):
    """Every secret member of the key set, as written."""
    return [jwk[member] for jwk in keys["keys"] for member in ("k", "d") if member in jwk]


def assert_no_secret(text, keys):
    assert not any(secret in text for secret in secrets_of(keys)), text


def round_trip(tmp_path, write_keys, read_keys):
    path = tmp_path / "model.safetensors"
    ws.save_file(WEIGHTS, path, keys=write_keys)
    loaded = ws.load_file(path, keys=read_keys, framework="np")
    assert all(np.array_equal(loaded[name], WEIGHTS[name]) for name in WEIGHTS)
    return path


# ---------------------------------------------------------------- each source


def test_jwks_as_a_set_a_list_and_one_at_a_time(tmp_path, keys):
    enc, sign = keys["keys"]
    round_trip(tmp_path, keys, [enc, sign])
    path = round_trip(tmp_path, (enc, sign), keys)
    # Reading with the keys one by one: each stands for its kind.
    with pytest.raises(warpcrypt.InvalidKey, match="no master key 'master'"):
        ws.load_file(path, keys=sign, framework="np")


@pytest.mark.parametrize("spelling", ["str", "pathlike", "file:", "file:// URL"])
def test_a_key_file_by_path_or_url(tmp_path, keys, key_path, spelling):
    source = {"str": str(key_path), "pathlike": key_path, "file:": f"file:{key_path}",
              "file:// URL": f"file://{key_path}"}[spelling]
    round_trip(tmp_path, source, keys)
    round_trip(tmp_path, keys, source)
    assert key_file(source) == str(key_path)


def test_a_file_url_under_the_home_directory(tmp_path, keys, monkeypatch):
    write_key_file(tmp_path / "keys.jwk", keys)
    monkeypatch.setenv("HOME", str(tmp_path))
    round_trip(tmp_path, "file://~/keys.jwk", keys)


@pytest.mark.parametrize("content", ["set", "list", "one JWK"])
def test_a_key_file_holds_what_cryptotensors_reads(tmp_path, keys, content):
    enc, sign = keys["keys"]
    held = {"set": keys, "list": [enc, sign], "one JWK": sign}[content]
    path = write_key_file(tmp_path / "keys.jwk", held)
    assert repr(ct.KeySet(path)).endswith(f"from the key file {str(path)!r})")
    if content != "one JWK":
        round_trip(tmp_path, path, keys)


def test_env_reads_cryptotensors_variable_and_env_name_another(tmp_path, keys, monkeypatch):
    monkeypatch.setenv(ENV_VARIABLE, json.dumps(keys))
    round_trip(tmp_path, "env", keys)
    round_trip(tmp_path, keys, "env")
    monkeypatch.delenv(ENV_VARIABLE)
    monkeypatch.setenv("MODEL_KEYS", json.dumps(keys))
    round_trip(tmp_path, "env:MODEL_KEYS", "env:MODEL_KEYS")


def test_a_file_named_env_is_dot_slash_env(tmp_path, keys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_VARIABLE, raising=False)
    write_key_file(tmp_path / "env", keys)
    round_trip(tmp_path, "./env", keys)
    with pytest.raises(warpcrypt.InvalidKey, match=f"{ENV_VARIABLE} is not set"):
        ct.KeySet("env")


def test_every_public_function_takes_every_source(tmp_path, keys, key_path, monkeypatch):
    """safetensors' functions, the NumPy module's, safe_open and rewrap_file
    all read keys= through KeySet, so each takes a path or "env"."""
    monkeypatch.setenv(ENV_VARIABLE, json.dumps(keys))
    path = tmp_path / "np.safetensors"
    wnp.save_file(WEIGHTS, path, keys=str(key_path))
    assert np.array_equal(wnp.load_file(path, keys="env")["w"], WEIGHTS["w"])
    assert np.array_equal(wnp.load(wnp.save(WEIGHTS, keys=key_path), keys="env")["b"], WEIGHTS["b"])
    with ws.safe_open(path, "np", keys=key_path) as f:
        assert np.array_equal(f.get_tensor("b"), WEIGHTS["b"])
    new = write_key_file(tmp_path / "new.jwk", ws.generate_keys(enc_kid="master-2", sign_kid="signer-2"))
    ws.rewrap_file(path, keys="env", new_keys=new, output=tmp_path / "rewrapped.safetensors")
    assert np.array_equal(wnp.load_file(tmp_path / "rewrapped.safetensors", keys=new)["w"], WEIGHTS["w"])


def test_a_key_set_already_read_is_taken_as_it_is(tmp_path, keys, key_path):
    read = ct.KeySet(key_path)
    key_path.unlink()
    round_trip(tmp_path, read, read)
    assert ct.KeySet(read).origin == read.origin


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("case, error, words", [
    ("no master key", warpcrypt.InvalidArgument, "no master key (kty 'oct') among the keys given"),
    ("no signing key", warpcrypt.InvalidArgument, "no signing key (kty 'okp') among the keys given"),
    ("two master keys", warpcrypt.InvalidArgument, "2 master keys and 1 signing keys among the keys given"),
    ("a public signing key", warpcrypt.InvalidKey, "has no 'd': a public key verifies but cannot sign"),
    ("an RSA key", warpcrypt.Unsupported, "key 'rsa' of the keys given: key type 'RSA'"),
    ("a master key for ed25519", warpcrypt.Unsupported, "key 'master' of the keys given: unknown encryption "
                                                        "algorithm 'ed25519'"),
    ("a signing key for ES256", warpcrypt.Unsupported, "key 'signer' of the keys given: signature algorithm 'ES256'"),
    ("a short master key", warpcrypt.InvalidKey, "key 'master' of the keys given: aes256gcm takes a 32-byte key"),
    ("nothing", warpcrypt.InvalidArgument, "the keys given must be a JWK, a list of JWKs or a JWK Set"),
])
def test_writing_names_the_key_missing_or_of_the_wrong_type(tmp_path, keys, case, error, words):
    enc, sign = keys["keys"]
    given = {
        "no master key": [sign],
        "no signing key": [enc],
        "two master keys": [enc, {**enc, "kid": "other"}, sign],
        "a public signing key": [enc, {k: v for k, v in sign.items() if k != "d"}],
        "an RSA key": [enc, {"kty": "RSA", "kid": "rsa", "n": "AQAB", "e": "AQAB"}],
        "a master key for ed25519": [{**enc, "alg": "ed25519"}, sign],
        "a signing key for ES256": [enc, {**sign, "alg": "ES256"}],
        "a short master key": [{**enc, "k": "c2hvcnQ="}, sign],
        "nothing": [],
    }[case]
    with pytest.raises(error) as raised:
        ws.save_file(WEIGHTS, tmp_path / "out.safetensors", keys=given)
    assert words in str(raised.value) and "\n" not in str(raised.value)
    assert_no_secret(str(raised.value), keys)
    assert not (tmp_path / "out.safetensors").exists()


def test_reading_names_the_master_or_verifying_key_missing(tmp_path, keys):
    path = round_trip(tmp_path, keys, keys)
    enc, sign = keys["keys"]
    other = ws.generate_keys(enc_kid="master-2", sign_kid="signer-2")["keys"]
    with pytest.raises(warpcrypt.InvalidKey) as raised:
        ws.load_file(path, keys=[enc, other[1]], framework="np")
    assert str(raised.value) == ("no signature key 'signer' among the keys given: the header's signature cannot be "
                                 "verified")
    with pytest.raises(warpcrypt.InvalidKey) as raised:
        ws.load_file(path, keys=[other[0], {k: v for k, v in sign.items() if k != "d"}], framework="np")
    assert str(raised.value) == ("no master key 'master' among the keys given: the tensors' data keys cannot be "
                                 "unwrapped")


def test_a_missing_or_unreadable_key_file_is_named_with_its_path(tmp_path, keys):
    missing = tmp_path / "absent.jwk"
    with pytest.raises(FileNotFoundError) as raised:
        ws.save_file(WEIGHTS, tmp_path / "out.safetensors", keys=missing)
    assert raised.value.filename == str(missing) and "cannot read the key file" in str(raised.value)
    with pytest.raises(IsADirectoryError, match="cannot read the key file"):
        ct.KeySet(tmp_path)
    assert not (tmp_path / "out.safetensors").exists()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o644])
def test_a_key_file_others_may_read_or_replace_is_refused(tmp_path, keys, mode):
    path = write_key_file(tmp_path / "keys.jwk", keys, mode)
    with pytest.raises(warpcrypt.InvalidKey) as raised:
        ct.KeySet(path)
    assert f"has mode 0{mode:o}" in str(raised.value) and f"chmod 600 {path}" in str(raised.value)
    assert_no_secret(str(raised.value), keys)


def test_a_key_file_from_a_pipe_has_no_mode_to_check(keys):
    read, write = os.pipe()
    os.write(write, json.dumps(keys).encode())
    os.close(write)
    try:
        assert "oct:master, okp:signer" in repr(ct.KeySet(f"/dev/fd/{read}"))
    finally:
        os.close(read)


@pytest.mark.parametrize("content, words", [
    ("{not json", "is not JSON: Expecting property name"),
    (b"\xff\xfe{}", "is not JSON: not UTF-8 text"),
    ("[" * 100_000, "nested too deeply"),
    ('{"hello": "world"}', "key 0 of the key file"),
    ("42", "must be a JWK, a list of JWKs or a JWK Set"),
])
def test_a_key_file_that_is_no_key_set(tmp_path, content, words):
    path = tmp_path / "keys.jwk"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    path.chmod(0o600)
    with pytest.raises((warpcrypt.InvalidKey, warpcrypt.InvalidArgument, warpcrypt.Unsupported)) as raised:
        ct.KeySet(path)
    assert words in str(raised.value) and str(path) in str(raised.value)


def test_a_file_too_large_for_a_key_file_is_not_read_whole(tmp_path):
    path = write_key_file(tmp_path / "model.safetensors", " " * (MAX_KEY_FILE_BYTES + 1))
    with pytest.raises(warpcrypt.InvalidKey, match="is larger than a key file"):
        ct.KeySet(path)


def test_an_unset_or_empty_variable(monkeypatch):
    monkeypatch.delenv("MODEL_KEYS", raising=False)
    with pytest.raises(warpcrypt.InvalidKey) as raised:
        ct.KeySet("env:MODEL_KEYS")
    assert str(raised.value) == ("the environment variable MODEL_KEYS is not set: it should hold a JWK Set (the JSON "
                                 "of a key file)")
    monkeypatch.setenv("MODEL_KEYS", "  ")
    with pytest.raises(warpcrypt.InvalidKey, match="the environment variable MODEL_KEYS is empty"):
        ct.KeySet("env:MODEL_KEYS")
    monkeypatch.setenv("MODEL_KEYS", "{bad")
    with pytest.raises(warpcrypt.InvalidKey, match="the environment variable MODEL_KEYS is not JSON"):
        ct.KeySet("env:MODEL_KEYS")


def test_key_material_given_in_place_of_a_name_is_never_echoed(tmp_path, keys):
    text = json.dumps(keys)
    for source in (f"env:{text}", text, "  " + text, json.dumps(keys["keys"])):
        with pytest.raises(warpcrypt.InvalidArgument) as raised:
            ct.KeySet(source)
        assert_no_secret(str(raised.value), keys)
    with pytest.raises(warpcrypt.InvalidArgument, match="'env:' takes an environment variable's name"):
        ct.KeySet("env:")


def test_no_repr_or_message_of_a_key_source_shows_a_secret(tmp_path, keys, key_path, monkeypatch):
    monkeypatch.setenv(ENV_VARIABLE, json.dumps(keys))
    for source in (keys, key_path, "env"):
        assert_no_secret(repr(ct.KeySet(source)), keys)
    path = round_trip(tmp_path, keys, keys)
    wrong = ws.generate_keys(enc_kid="master", sign_kid="signer")  # same names, other keys
    with pytest.raises(warpcrypt.InvalidSignature) as raised:
        ws.load_file(path, keys=wrong, framework="np")
    assert_no_secret(str(raised.value), keys)
    assert_no_secret(str(raised.value), wrong)


# ---------------------------------------------------------------- cryptotensors, both ways


def run_cryptotensors(script, tmp_path, keys_variable=None):
    """`script` in a fresh interpreter, since cryptotensors' key providers
    are global to a process, with $CRYPTOTENSOR_KEYS set to `keys_variable`
    or unset; returns its stdout."""
    pytest.importorskip("cryptotensors", reason="the cryptotensors package is not installed")
    environment = {name: value for name, value in os.environ.items() if name != ENV_VARIABLE}
    if keys_variable is not None:
        environment[ENV_VARIABLE] = keys_variable
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=environment, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_file_cryptotensors_writes_from_its_key_file_opens_here_from_that_file_or_variable(
        tmp_path, keys, key_path, monkeypatch):
    run_cryptotensors(f"""
        import numpy as np, cryptotensors, cryptotensors.numpy
        cryptotensors.register_direct_key_provider(files=[{str(key_path)!r}])
        cryptotensors.numpy.save_file({{"w": np.arange(12, dtype=np.float32).reshape(3, 4)}}, "ct.safetensors",
                                      config={{"enc_kid": "master", "sign_kid": "signer"}})
    """, tmp_path)
    for source in (key_path, str(key_path), f"file://{key_path}"):
        assert np.array_equal(wnp.load_file(tmp_path / "ct.safetensors", keys=source)["w"], WEIGHTS["w"])
    monkeypatch.setenv(ENV_VARIABLE, key_path.read_text())
    assert np.array_equal(wnp.load_file(tmp_path / "ct.safetensors", keys="env")["w"], WEIGHTS["w"])


LOAD_WITH_PROVIDERS = """
    import numpy as np, cryptotensors.numpy
    print(cryptotensors.numpy.load_file("wc.safetensors")["w"].sum())
"""


def test_a_file_written_here_from_a_key_file_opens_in_cryptotensors_from_its_variable(tmp_path, keys, key_path):
    wnp.save_file(WEIGHTS, tmp_path / "wc.safetensors", keys=key_path)
    printed = run_cryptotensors(LOAD_WITH_PROVIDERS, tmp_path, keys_variable=key_path.read_text())
    assert float(printed) == WEIGHTS["w"].sum()


def test_a_file_written_here_from_the_variable_opens_in_cryptotensors_through_its_file_provider(
        tmp_path, keys, monkeypatch):
    """Keys whose jku is a file:// URL: the header names it, and
    cryptotensors' "file" provider reads the keys from there."""
    path = tmp_path / "keys.jwk"
    for jwk in keys["keys"]:
        jwk["jku"] = f"file://{path}"
    write_key_file(path, keys)
    monkeypatch.setenv(ENV_VARIABLE, json.dumps(keys))
    wnp.save_file(WEIGHTS, tmp_path / "wc.safetensors", keys="env")
    assert float(run_cryptotensors(LOAD_WITH_PROVIDERS, tmp_path)) == WEIGHTS["w"].sum()
