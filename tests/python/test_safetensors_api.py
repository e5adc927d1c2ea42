"""warpcrypt.safetensors.numpy and warpcrypt.safetensors.torch: the
functions of safetensors.numpy and safetensors.torch with `keys`, checked
against those packages: a plain file is safetensors' own, byte for byte;
an encrypted one opens in cryptotensors, and cryptotensors' open here."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import warpcrypt

np = pytest.importorskip("numpy")
safetensors = pytest.importorskip("safetensors")
safetensors_numpy = pytest.importorskip("safetensors.numpy")
cryptotensors = pytest.importorskip("cryptotensors", reason="the cryptotensors package is not installed")
import cryptotensors.numpy  # noqa: E402  (after the importorskip above)

import warpcrypt.safetensors as ws  # noqa: E402
import warpcrypt.safetensors.numpy as wnp  # noqa: E402
from test_safetensors import same  # noqa: E402


def arrays(seed: int = 3) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    return {
        "weight": rng.standard_normal((8, 5)).astype(np.float32),
        "ids": rng.integers(-2**40, 2**40, size=7),
        "mask": rng.integers(0, 2, size=9).astype(bool),
        "empty": np.zeros((0, 2), np.float16),
    }


@pytest.fixture
def keys():
    return ws.generate_keys(enc_kid="master", sign_kid="signer")


def config(keys) -> dict[str, object]:
    """The keys as cryptotensors takes them."""
    enc, sign = keys["keys"]
    return {"enc_key": enc, "sign_key": sign}


# ---------------------------------------------------------------- signatures


def leading_parameters(function) -> list[tuple[str, object, object]]:
    """What a call may pass: each parameter's name, kind and default."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()
            if p.name != "backend"]


@pytest.mark.parametrize("name", ["save_file", "load_file", "save", "load"])
def test_numpy_functions_take_what_safetensors_numpy_takes_and_keys(name):
    """A call written for safetensors.numpy is a call here (its `backend`,
    a choice of how safetensors maps the file, aside), plus keys=."""
    ours = inspect.signature(getattr(wnp, name)).parameters
    theirs = leading_parameters(getattr(safetensors_numpy, name))
    assert [(p.name, p.kind, p.default) for p in list(ours.values())[:len(theirs)]] == theirs
    assert ours["keys"].kind is inspect.Parameter.KEYWORD_ONLY


def test_saving_needs_keys_said_and_loading_defaults_to_a_plain_file():
    for save in (wnp.save, wnp.save_file):
        assert inspect.signature(save).parameters["keys"].default is inspect.Parameter.empty
    for load in (wnp.load, wnp.load_file):
        assert inspect.signature(load).parameters["keys"].default is None


# ---------------------------------------------------------------- numpy, plain


def test_a_plain_save_is_safetensors_numpys_bytes(tmp_path):
    data, metadata = arrays(), {"format": "np"}  # one key: safetensors orders several at random
    assert wnp.save(data, metadata, keys=None) == safetensors_numpy.save(data, metadata)
    assert wnp.save(data, keys=None) == safetensors_numpy.save(data)
    wnp.save_file(data, tmp_path / "w.safetensors", metadata, keys=None)
    safetensors_numpy.save_file(data, str(tmp_path / "s.safetensors"), metadata)
    assert (tmp_path / "w.safetensors").read_bytes() == (tmp_path / "s.safetensors").read_bytes()


def test_plain_files_load_both_ways(tmp_path):
    data = arrays()
    same(safetensors_numpy.load(wnp.save(data, keys=None)), data)
    same(wnp.load(safetensors_numpy.save(data)), data)
    safetensors_numpy.save_file(data, str(tmp_path / "s.safetensors"))
    same(wnp.load_file(tmp_path / "s.safetensors"), data)


def test_big_endian_arrays_are_written_little_endian_as_safetensors_writes_them():
    data = {"swapped": np.arange(-3, 4, dtype=">i4"), "double": np.linspace(0, 1, 5).astype(">f8")}
    written = wnp.save(data, keys=None)
    assert written == safetensors_numpy.save(data)
    loaded = wnp.load(written)
    assert loaded["swapped"].dtype == np.dtype("<i4")
    for name in data:
        assert np.array_equal(loaded[name], data[name]), name


def test_a_strided_array_is_written_as_its_values():
    base = np.arange(24, dtype=np.int16).reshape(4, 6)
    data = {"transposed": base.T, "every_other": base[:, ::2]}
    loaded = wnp.load(wnp.save(data, keys=None))
    for name, array in data.items():
        assert loaded[name].shape == array.shape and np.array_equal(loaded[name], array), name
    assert wnp.save(data, keys=None) == safetensors_numpy.save({k: np.ascontiguousarray(v) for k, v in data.items()})


def test_numpy_save_takes_only_numpy_arrays(tmp_path):
    with pytest.raises(warpcrypt.InvalidArgument, match="'raw' is a RawTensor, not a NumPy array"):
        wnp.save({"raw": ws.RawTensor("U8", (1,), b"\0")}, keys=None)
    with pytest.raises(warpcrypt.InvalidArgument, match="'x' is a list"):
        wnp.save_file({"x": [1, 2]}, tmp_path / "m.safetensors", keys=None)
    assert not (tmp_path / "m.safetensors").exists()


# ---------------------------------------------------------------- numpy, encrypted


def test_encrypted_bytes_and_files_open_in_cryptotensors(tmp_path, keys):
    data = arrays()
    (tmp_path / "bytes.safetensors").write_bytes(wnp.save(data, {"k": "v"}, keys=keys))
    wnp.save_file(data, tmp_path / "file.safetensors", {"k": "v"}, keys=keys)
    for name in ("bytes", "file"):
        with cryptotensors.safe_open(str(tmp_path / f"{name}.safetensors"), framework="np",
                                     config=config(keys)) as f:
            same({tensor: f.get_tensor(tensor) for tensor in f.keys()}, data)
            assert f.metadata() == {"k": "v"}


def test_cryptotensors_files_open_here_from_bytes_and_files(tmp_path, keys):
    data = arrays()
    path = tmp_path / "c.safetensors"
    cryptotensors.numpy.save_file(data, str(path), config=config(keys))
    same(wnp.load_file(path, keys=keys), data)
    same(wnp.load(path.read_bytes(), keys=keys), data)


def test_keys_read_only_a_signed_file_and_no_keys_only_a_plain_one(keys):
    plain, encrypted = wnp.save(arrays(), keys=None), wnp.save(arrays(), keys=keys)
    with pytest.raises(warpcrypt.InvalidArgument, match="encrypted"):
        wnp.load(encrypted)
    with pytest.raises(warpcrypt.FormatError, match="not a signed CryptoTensors file"):
        wnp.load(plain, keys=keys)
    with pytest.raises(warpcrypt.InvalidSignature):
        wnp.load(encrypted, keys=ws.generate_keys(enc_kid="master", sign_kid="signer"))


def test_load_takes_bytes_only():
    with pytest.raises(TypeError, match="bytes, not str"):
        wnp.load("model.safetensors")


def test_a_metadata_free_file_has_none_as_safetensors_and_cryptotensors_say(tmp_path, keys):
    path = tmp_path / "m.safetensors"
    wnp.save_file(arrays(), path, keys=keys)
    with cryptotensors.safe_open(str(path), framework="np", config=config(keys)) as f:
        theirs = f.metadata()
    with ws.safe_open(path, "np", keys=keys) as f:
        assert f.metadata() is None and theirs is None
        assert f.keys() == sorted(arrays())
        assert np.array_equal(f.get_tensor("weight"), arrays()["weight"])
    wnp.save_file(arrays(), path, keys=None)
    with safetensors.safe_open(str(path), framework="np") as f, ws.safe_open(path, "np") as ours:
        assert ours.metadata() is None and f.metadata() is None


# ---------------------------------------------------------------- errors


def test_safetensors_except_clauses_catch_warpcrypts_errors(keys):
    """Code written for safetensors keeps its `except SafetensorError`,
    and the error is warpcrypt's class still."""
    encrypted = wnp.save(arrays(), keys=keys)
    damaged = encrypted[:8] + b"[" + encrypted[9:]
    tampered = encrypted[:-1] + bytes([encrypted[-1] ^ 1])
    for data, warpcrypt_class in ((damaged, warpcrypt.FormatError), (tampered, warpcrypt.InvalidTag),
                                  (encrypted[:20], warpcrypt.FormatError)):
        with pytest.raises(safetensors.SafetensorError) as raised:
            wnp.load(data, keys=keys)
        assert isinstance(raised.value, warpcrypt_class)
    with pytest.raises(safetensors.SafetensorError) as raised:
        ws.safe_open(__file__, "tf")
    assert isinstance(raised.value, warpcrypt.InvalidArgument)


def test_without_safetensors_the_exceptions_stand_alone():
    script = (
        "import sys; sys.modules['safetensors'] = None; sys.modules['cryptography'] = None\n"
        "import warpcrypt\n"
        "for cls in (warpcrypt.FormatError, warpcrypt.InvalidArgument):\n"
        "    assert cls.__mro__[1:] == (warpcrypt.Error, ValueError, Exception, BaseException, object), cls\n"
        "assert warpcrypt.Unsupported.__mro__[1:] == (warpcrypt.Error, Exception, BaseException, object)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout == "ok\n", result.stderr


def test_without_torch_load_file_says_so_and_names_numpy(tmp_path, monkeypatch):
    """The top-level load_file is safetensors.torch's: where PyTorch is
    missing it says what to use instead."""
    path = tmp_path / "m.safetensors"
    wnp.save_file(arrays(), path, keys=None)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ModuleNotFoundError, match="needs PyTorch.*warpcrypt.safetensors.numpy") as raised:
        ws.load_file(path)
    assert raised.value.name == "torch"
    same(wnp.load_file(path), arrays())


# ---------------------------------------------------------------- torch


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed: the torch API is tested where it is")


@pytest.fixture
def wpt(torch):
    import warpcrypt.safetensors.torch as module

    return module


def torch_tensors(torch) -> dict[str, object]:
    generator = torch.Generator().manual_seed(5)
    return {"weight": torch.randn(6, 4, generator=generator), "bias": torch.randn(4, generator=generator),
            "half": torch.randn(3, generator=generator).to(torch.bfloat16)}


def torch_same(got, want, torch) -> None:
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].dtype == want[name].dtype and torch.equal(got[name].cpu(), want[name].cpu()), name


@pytest.mark.parametrize("name", ["save_file", "load_file", "save", "load", "save_model", "load_model"])
def test_torch_functions_take_what_safetensors_torch_takes_and_keys(wpt, name):
    theirs = leading_parameters(getattr(pytest.importorskip("safetensors.torch"), name))
    ours = inspect.signature(getattr(wpt, name)).parameters
    assert [(p.name, p.kind, p.default) for p in list(ours.values())[:len(theirs)]] == theirs
    assert ours["keys"].kind is inspect.Parameter.KEYWORD_ONLY


def test_a_plain_torch_save_is_safetensors_torchs_bytes(torch, wpt, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    data = torch_tensors(torch)
    assert wpt.save(data, {"a": "b"}, keys=None) == safetensors_torch.save(data, {"a": "b"})
    torch_same(wpt.load(safetensors_torch.save(data)), data, torch)
    wpt.save_file(data, tmp_path / "m.safetensors", keys=None)
    torch_same(safetensors_torch.load_file(str(tmp_path / "m.safetensors")), data, torch)


def test_encrypted_torch_files_round_trip(torch, wpt, tmp_path, keys):
    data = torch_tensors(torch)
    wpt.save_file(data, tmp_path / "m.safetensors", keys=keys)
    torch_same(wpt.load_file(tmp_path / "m.safetensors", keys=keys), data, torch)
    torch_same(wpt.load(wpt.save(data, keys=keys), keys=keys), data, torch)


def test_shared_and_strided_tensors_are_refused_where_safetensors_refuses_them(torch, wpt, tmp_path, keys):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    base = torch.arange(12.0).reshape(3, 4)
    refused = {"shared": {"a": base, "b": base}, "overlapping": {"a": base[:2], "b": base[1:]},
               "strided": {"t": base.t()}}
    accepted = {"side_by_side": {"a": base[:1], "b": base[1:]}, "copies": {"a": base, "b": base.clone()}}
    for case, data in refused.items():
        with pytest.raises((RuntimeError, ValueError)):
            safetensors_torch.save(data)
        for save in (lambda: wpt.save(data, keys=keys), lambda: wpt.save_file(data, tmp_path / case, keys=None)):
            with pytest.raises(warpcrypt.InvalidArgument, match="share memory|not contiguous"):
                save()
        assert not (tmp_path / case).exists()
    for case, data in accepted.items():
        assert wpt.save(data, keys=None) == safetensors_torch.save(data), case


def tied_model(torch):
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10, bias=False))
    model[1].weight = model[0].weight
    return model


def test_save_model_writes_tied_weights_once_as_safetensors_does(torch, wpt, tmp_path, keys):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    model = tied_model(torch)
    wpt.save_model(model, tmp_path / "w.safetensors", keys=None)
    safetensors_torch.save_model(model, str(tmp_path / "s.safetensors"))
    assert (tmp_path / "w.safetensors").read_bytes() == (tmp_path / "s.safetensors").read_bytes()
    wpt.save_model(model, tmp_path / "e.safetensors", keys=keys)
    with ws.safe_open(tmp_path / "e.safetensors", "pt", keys=keys) as f:
        assert f.keys() == ["0.weight"] and f.metadata() == {"1.weight": "0.weight"}
    fresh = tied_model(torch)
    assert wpt.load_model(fresh, tmp_path / "e.safetensors", keys=keys) == ([], [])
    assert torch.equal(fresh[1].weight, model[0].weight) and fresh[1].weight is fresh[0].weight


def test_load_model_reports_what_safetensors_reports(torch, wpt, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    path = tmp_path / "m.safetensors"
    wpt.save_file({"0.weight": torch.zeros(10, 4), "extra": torch.ones(1)}, path, keys=None)
    ours = wpt.load_model(torch.nn.Sequential(torch.nn.Linear(4, 10)), path, strict=False)
    theirs = safetensors_torch.load_model(torch.nn.Sequential(torch.nn.Linear(4, 10)), str(path), strict=False)
    assert (sorted(ours[0]), sorted(ours[1])) == (sorted(theirs[0]), sorted(theirs[1]))
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.bias"'):
        wpt.load_model(torch.nn.Sequential(torch.nn.Linear(4, 10)), path)
