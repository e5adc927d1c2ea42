"""Sharded checkpoints (warpcrypt.safetensors.numpy.save_state_dict and
load_state_dict) against huggingface_hub's layout and cryptotensors' files,
the attacks on a sharded folder, and safe_open's get_slice against
safetensors' own."""

from __future__ import annotations

import json
import os
import shutil

import pytest

np = pytest.importorskip("numpy")
safetensors_numpy = pytest.importorskip("safetensors.numpy")
from safetensors import safe_open as reference_open  # noqa: E402

import warpcrypt  # noqa: E402
import warpcrypt.safetensors as ws  # noqa: E402
import warpcrypt.safetensors.numpy as wnp  # noqa: E402
from warpcrypt.safetensors import _sharded  # noqa: E402

INDEX = "model.safetensors.index.json"


def state_dict(count: int = 10, seed: int = 5) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    tensors: dict[str, object] = {f"layers.{i}.weight": rng.standard_normal((40, 25)).astype(np.float32)
                                  for i in range(count)}
    tensors["big"] = rng.standard_normal(3000).astype(np.float32)  # beyond a shard: a shard of its own
    tensors["ids"] = rng.integers(-100, 100, size=9)
    return tensors


@pytest.fixture
def keys():
    return ws.generate_keys(enc_kid="master", sign_kid="signer")


def config(keys) -> dict[str, object]:
    enc, sign = keys["keys"]
    return {"enc_key": enc, "sign_key": sign}


def same_dict(got, want) -> None:
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, name
        assert np.array_equal(got[name], want[name]), name


# ---------------------------------------------------------------- layout


@pytest.mark.parametrize("limit", [4000, 10_000, "10KB", 10**9])
def test_shards_are_laid_out_as_huggingface_hub_lays_them_out(tmp_path, limit):
    """Each tensor's shard, the shard names and the index's total size are
    what huggingface_hub's splitter gives for the same tensors and limit."""
    hub = pytest.importorskip("huggingface_hub.serialization._base")
    tensors = state_dict()
    split = hub.split_state_dict_into_shards_factory(
        tensors, get_storage_size=lambda array: array.nbytes, filename_pattern="model{suffix}.safetensors",
        max_shard_size=limit)
    wnp.save_state_dict(tensors, tmp_path, keys=None, max_shard_size=limit)
    if not split.is_sharded:
        assert sorted(os.listdir(tmp_path)) == ["model.safetensors"]
        return
    index = json.loads((tmp_path / INDEX).read_text())
    assert index == {"metadata": split.metadata, "weight_map": split.tensor_to_filename}
    assert list(index["weight_map"]) == list(split.tensor_to_filename)
    assert sorted(os.listdir(tmp_path)) == sorted([*split.filename_to_tensors, INDEX])
    for shard, names in split.filename_to_tensors.items():
        assert sorted(safetensors_numpy.load_file(str(tmp_path / shard))) == sorted(names)


@pytest.mark.parametrize("size, expected", [("5GB", 5 * 10**9), ("1.5 MB", 1_500_000), ("500MiB", 500 << 20),
                                            ("7kb", 7000), (4096, 4096)])
def test_shard_sizes_are_read_as_huggingface_hub_reads_them(size, expected):
    assert _sharded.shard_size_bytes(size) == expected


@pytest.mark.parametrize("size", ["5 parsecs", "", "-3MB", 0, -1, True, None])
def test_a_shard_size_that_is_not_one_is_refused(size):
    with pytest.raises(warpcrypt.InvalidArgument, match="max_shard_size"):
        _sharded.shard_size_bytes(size)


# ---------------------------------------------------------------- round trips and interop


def test_a_plain_sharded_checkpoint_is_safetensors_files_under_an_index(tmp_path):
    tensors = state_dict()
    wnp.save_state_dict(tensors, tmp_path, keys=None, max_shard_size=10_000, metadata={"model": "test"})
    same_dict(wnp.load_state_dict(tmp_path), tensors)
    index = json.loads((tmp_path / INDEX).read_text())
    assert index["metadata"]["model"] == "test"
    loaded = {}
    for shard in sorted(set(index["weight_map"].values())):
        loaded.update(safetensors_numpy.load_file(str(tmp_path / shard)))
    same_dict({name: loaded[name] for name in tensors}, tensors)


def test_an_encrypted_sharded_checkpoint_opens_shard_by_shard_in_cryptotensors(tmp_path, keys):
    cryptotensors = pytest.importorskip("cryptotensors", reason="the cryptotensors package is not installed")
    tensors = state_dict()
    wnp.save_state_dict(tensors, tmp_path, keys=keys, max_shard_size=10_000)
    same_dict(wnp.load_state_dict(tmp_path, keys=keys), tensors)
    same_dict(wnp.load_state_dict(tmp_path / INDEX, keys=keys), tensors)
    index = json.loads((tmp_path / INDEX).read_text())
    for shard in set(index["weight_map"].values()):
        with cryptotensors.safe_open(str(tmp_path / shard), framework="np", config=config(keys)) as f:
            for name in f.keys():
                assert np.array_equal(f.get_tensor(name), tensors[name])


def test_shards_that_cryptotensors_wrote_under_a_hub_index_load_here(tmp_path, keys):
    """The other way: cryptotensors writes each shard, the index is
    huggingface_hub's; no shard binds the index, and each authenticates."""
    cryptotensors_numpy = pytest.importorskip("cryptotensors.numpy")
    tensors = state_dict()
    names = list(tensors)
    shards = {"model-00001-of-00002.safetensors": names[:5], "model-00002-of-00002.safetensors": names[5:]}
    for shard, held in shards.items():
        cryptotensors_numpy.save_file({name: tensors[name] for name in held}, str(tmp_path / shard),
                                      config=config(keys))
    (tmp_path / INDEX).write_text(json.dumps({"metadata": {"total_size": 1},
                                              "weight_map": {n: s for s, held in shards.items() for n in held}}))
    same_dict(wnp.load_state_dict(tmp_path, keys=keys), tensors)


def test_one_shard_is_model_safetensors_alone_and_a_resave_leaves_no_stale_shards(tmp_path, keys):
    tensors = state_dict()
    wnp.save_state_dict(tensors, tmp_path, keys=keys, max_shard_size=10_000)
    (tmp_path / "notes.txt").write_text("kept")
    wnp.save_state_dict(tensors, tmp_path, keys=keys)
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors", "notes.txt"]
    same_dict(wnp.load_state_dict(tmp_path, keys=keys), tensors)
    wnp.save_state_dict(tensors, tmp_path, keys=keys, max_shard_size=20_000)
    assert "model.safetensors" not in os.listdir(tmp_path)
    same_dict(wnp.load_state_dict(tmp_path, keys=keys), tensors)


# ---------------------------------------------------------------- attacks


@pytest.fixture
def checkpoint(tmp_path, keys):
    folder = tmp_path / "checkpoint"
    wnp.save_state_dict(state_dict(), folder, keys=keys, max_shard_size=10_000)
    return folder


def shard_names(folder) -> list[str]:
    return sorted(set(json.loads((folder / INDEX).read_text())["weight_map"].values()))


def refused(folder, keys, error, match) -> None:
    with pytest.raises(error, match=match):
        wnp.load_state_dict(folder, keys=keys)


def test_swapped_shards_are_refused(checkpoint, keys):
    first, second = (checkpoint / name for name in shard_names(checkpoint)[:2])
    first.rename(checkpoint / "swap")
    second.rename(first)
    (checkpoint / "swap").rename(second)
    refused(checkpoint, keys, warpcrypt.InvalidSignature, "renamed or swapped")


def test_a_dropped_shard_is_refused(checkpoint, keys):
    (checkpoint / shard_names(checkpoint)[1]).unlink()
    refused(checkpoint, keys, warpcrypt.FormatError, "is missing")


def test_a_shard_renamed_with_the_index_edited_to_match_is_refused(checkpoint, keys):
    name = shard_names(checkpoint)[0]
    (checkpoint / name).rename(checkpoint / "renamed.safetensors")
    index = json.loads((checkpoint / INDEX).read_text())
    index["weight_map"] = {t: "renamed.safetensors" if s == name else s for t, s in index["weight_map"].items()}
    (checkpoint / INDEX).write_text(json.dumps(index))
    refused(checkpoint, keys, warpcrypt.InvalidSignature, "index is not the one")


@pytest.mark.parametrize("edit", ["drop a tensor", "move a tensor", "change the metadata"])
def test_an_edited_index_is_refused(checkpoint, keys, edit):
    index = json.loads((checkpoint / INDEX).read_text())
    weight_map = index["weight_map"]
    if edit == "drop a tensor":
        shard = weight_map.pop("layers.0.weight")
        # the shard must then not hold it either: drop the whole shard's tensors
        for name in [n for n, s in weight_map.items() if s == shard]:
            del weight_map[name]
        (checkpoint / shard).unlink()
    elif edit == "move a tensor":
        weight_map["ids"] = weight_map["layers.0.weight"]
    else:
        index["metadata"]["total_size"] += 1
    (checkpoint / INDEX).write_text(json.dumps(index))
    refused(checkpoint, keys, (warpcrypt.InvalidSignature, warpcrypt.FormatError), "index is not the one|other tensors")


def test_a_shard_of_another_checkpoint_is_refused(tmp_path, checkpoint, keys):
    other = tmp_path / "other"
    wnp.save_state_dict(state_dict(seed=9), other, keys=keys, max_shard_size=10_000)
    name = shard_names(checkpoint)[2]
    shutil.copyfile(other / name, checkpoint / name)
    refused(checkpoint, keys, warpcrypt.InvalidSignature, "another checkpoint")


def test_an_unbound_shard_among_bound_ones_is_refused(checkpoint, keys):
    """A shard whose header binds no index (as cryptotensors writes one),
    holding the same tensors under the same keys, put in place of one."""
    cryptotensors_numpy = pytest.importorskip("cryptotensors.numpy")
    name = shard_names(checkpoint)[0]
    tensors = wnp.load_file(checkpoint / name, keys=keys)
    cryptotensors_numpy.save_file(tensors, str(checkpoint / name), config=config(keys))
    refused(checkpoint, keys, warpcrypt.InvalidSignature, "binds no index")


@pytest.mark.parametrize("shard", ["../outside.safetensors", "/etc/passwd.safetensors", ".hidden.safetensors",
                                   "model.bin", 7])
def test_an_index_that_points_outside_its_folder_is_refused(checkpoint, keys, shard):
    index = json.loads((checkpoint / INDEX).read_text())
    index["weight_map"]["ids"] = shard
    (checkpoint / INDEX).write_text(json.dumps(index))
    refused(checkpoint, keys, warpcrypt.FormatError, "not a .safetensors file of the index's folder")


@pytest.mark.parametrize("text", ["[]", "{", '{"weight_map": []}', '{"weight_map": {"a": "x.safetensors", '
                                  '"a": "y.safetensors"}}', "\xff"])
def test_a_damaged_index_is_one_format_error(checkpoint, keys, text):
    (checkpoint / INDEX).write_bytes(text.encode("latin-1"))
    refused(checkpoint, keys, warpcrypt.FormatError, "index|JSON")


@pytest.mark.parametrize("metadata", [None, {"total_size": 6144}, {"total_size": 6144, "warpcryp": "87646a1d"}])
def test_an_index_that_names_no_tensor_is_refused(checkpoint, keys, metadata):
    """An index emptied names no shard, so no shard's binding is checked: it
    must not load as an empty checkpoint (sharded_index_fuzzer found it)."""
    index = {"weight_map": {}} if metadata is None else {"metadata": metadata, "weight_map": {}}
    (checkpoint / INDEX).write_text(json.dumps(index))
    for given in (keys, None):
        refused(checkpoint, given, warpcrypt.FormatError, "names no tensor")


def test_a_folder_with_no_checkpoint_says_so(tmp_path, keys):
    with pytest.raises(FileNotFoundError, match="no model.safetensors.index.json or model.safetensors"):
        wnp.load_state_dict(tmp_path, keys=keys)


# ---------------------------------------------------------------- get_slice


INDICES = [slice(None), slice(1, 3), 2, -1, (slice(None), 1), (..., 2), (1, ...), (slice(0, 7, 2),),
           (slice(1, 6, 3), slice(0, 5, 2), 1), ...]


@pytest.mark.parametrize("chunk_size, version", [(64, "2"), (2 << 20, "2"), (2 << 20, "1")])
def test_get_slice_gives_what_safetensors_gives(tmp_path, keys, chunk_size, version):
    array = np.arange(7 * 5 * 3, dtype=np.float32).reshape(7, 5, 3)
    safetensors_numpy.save_file({"a": array}, str(tmp_path / "plain.safetensors"))
    ws.save_file({"a": array}, tmp_path / "sealed.safetensors", keys=keys, chunk_size=chunk_size, version=version)
    with reference_open(str(tmp_path / "plain.safetensors"), "np") as reference, \
            ws.safe_open(tmp_path / "sealed.safetensors", "np", keys=keys) as sealed, \
            ws.safe_open(tmp_path / "plain.safetensors", "np") as plain:
        want = reference.get_slice("a")
        for part in (sealed.get_slice("a"), plain.get_slice("a")):
            assert part.get_shape() == want.get_shape() and part.get_dtype() == want.get_dtype()
            for index in INDICES:
                got, expected = part[index], want[index]
                assert got.shape == expected.shape and np.array_equal(got, expected), index


def test_get_slice_of_a_quarter_reads_about_a_quarter(tmp_path, keys, monkeypatch):
    """Rows [n/4, n/2) of a 32 MiB tensor in 2 MiB chunks: the chunks that
    hold them are read, not the tensor."""
    rows = np.arange(1024 * 2048, dtype=np.float32).reshape(1024, 8192 // 4)  # 8 KiB rows, 8 MiB
    array = np.concatenate([rows] * 4)  # 32 MiB, 4096 rows
    ws.save_file({"w": array}, tmp_path / "w.safetensors", keys=keys)
    read = []
    original = ws._read_into
    monkeypatch.setattr(ws, "_read_into", lambda fd, view, offset: (read.append(len(view)), original(fd, view, offset)))
    with ws.safe_open(tmp_path / "w.safetensors", "np", keys=keys) as f:
        part = f.get_slice("w")[1024:2048]
    assert np.array_equal(part, array[1024:2048])
    assert sum(read) <= 0.3 * array.nbytes


def test_get_slice_authenticates_the_chunks_it_reads_and_only_those(tmp_path, keys):
    array = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)  # 64-byte rows, chunks of 256 bytes: 4 rows
    path = tmp_path / "w.safetensors"
    ws.save_file({"w": array}, path, keys=keys, chunk_size=256)
    with ws.safe_open(path, "np", keys=keys) as f:
        start = f._open().header.data_start + f._open().entries["w"].start
    data = bytearray(path.read_bytes())
    data[start + 256 * 5 + 3] ^= 1  # chunk 5: rows 20 to 23
    path.write_bytes(data)
    with ws.safe_open(path, "np", keys=keys) as f:
        part = f.get_slice("w")
        assert np.array_equal(part[0:20], array[0:20])
        assert np.array_equal(part[24:], array[24:])
        with pytest.raises(warpcrypt.InvalidTag, match="tensor 'w', chunk 5 does not authenticate"):
            part[10:22]


@pytest.mark.parametrize("index, error", [((1, 2, 3, 4), IndexError), (7, IndexError), (-8, IndexError),
                                          ((..., ...), warpcrypt.InvalidArgument),
                                          (slice(None, None, -1), warpcrypt.InvalidArgument),
                                          ([0, 1], warpcrypt.InvalidArgument), (None, warpcrypt.InvalidArgument)])
def test_get_slice_refuses_what_it_cannot_take(tmp_path, keys, index, error):
    ws.save_file({"a": np.zeros((7, 5, 3), np.float32)}, tmp_path / "a.safetensors", keys=keys)
    with ws.safe_open(tmp_path / "a.safetensors", "np", keys=keys) as f:
        with pytest.raises(error):
            f.get_slice("a")[index]
