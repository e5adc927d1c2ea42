"""Every Python format draws its keys, nonces and ids from the library's
random source (warpcrypt._random), so a seeded run writes the same file
byte for byte, as the C formats' seeded tests do, and an unseeded one
never does. A format that drew from os.urandom would fail here."""

from __future__ import annotations

import pytest

from warpcrypt import _random

np = pytest.importorskip("numpy")
ws = pytest.importorskip("warpcrypt.safetensors")

WEIGHTS = {"w": np.arange(600, dtype=np.float32).reshape(20, 30), "b": np.ones(7, np.int64)}


def written_twice(write, tmp_path, seeds):
    """The bytes `write(path)` produced under each seed (None: unseeded)."""
    results = []
    for i, seed in enumerate(seeds):
        path = tmp_path / f"run-{i}"
        if seed is None:
            write(path)
        else:
            with _random.seeded(seed):
                write(path)
        results.append(path.read_bytes())
    return results


def test_the_seeded_stream_depends_on_the_seed_and_the_draw_alone():
    with _random.seeded(b"one"):
        first = [_random.random_bytes(n) for n in (16, 9000, 0, 32)]
    with _random.seeded(b"one"):
        again = [_random.random_bytes(n) for n in (16, 9000, 0, 32)]
    with _random.seeded(b"two"):
        other = _random.random_bytes(16)
    assert first == again and [len(b) for b in first] == [16, 9000, 0, 32]
    assert other != first[0] and len(set(first[1][i:i + 32] for i in range(0, 8160, 32))) == 255
    assert _random.random_bytes(16) != _random.random_bytes(16)


def test_a_seeded_encrypted_safetensors_file_is_reproduced(tmp_path):
    with _random.seeded(b"keys"):
        keys = ws.generate_keys()
    with _random.seeded(b"keys"):
        assert ws.generate_keys() == keys

    def write(path):
        ws.save_file(WEIGHTS, path, keys=keys, metadata={"model": "tiny"})

    same, again, other, unseeded = written_twice(write, tmp_path, [b"a", b"a", b"b", None])
    assert same == again and same != other and same != unseeded
    back = ws.load_file(tmp_path / "run-0", keys=keys, framework="np")
    assert all(np.array_equal(back[name], WEIGHTS[name]) for name in WEIGHTS)


def test_a_seeded_zarr_array_is_reproduced(tmp_path):
    zarr = pytest.importorskip("zarr")
    wz = pytest.importorskip("warpcrypt.zarr")

    def write(path):
        # One chunk at a time, so that the draws come in one order.
        store = path.with_suffix(".store")
        with zarr.config.set({"async.concurrency": 1, "threading.max_workers": 1}):
            array = wz.create_array(zarr.storage.LocalStore(store), shape=(40, 40), chunks=(20, 20), dtype="f8",
                                    compressors=[wz.AeadCodec(key=bytes(range(32)))])
            array[...] = np.arange(1600.0).reshape(40, 40)
            wz.commit(array)
        # The store's files, in order, as the bytes compared.
        path.write_bytes(b"".join(p.name.encode() + p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()))

    same, again, unseeded = written_twice(write, tmp_path, [b"z", b"z", None])
    assert same == again and same != unseeded


def test_a_seeded_torch_checkpoint_is_reproduced(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the checkpoint format is torch's")
    wt = pytest.importorskip("warpcrypt.torch")
    state = {"w": torch.arange(100, dtype=torch.float32), "step": 3}
    same, again, unseeded = written_twice(lambda path: wt.save(state, path, key=bytes(32)), tmp_path,
                                          [b"c", b"c", None])
    assert same == again and same != unseeded


def test_a_seeded_sharded_checkpoint_is_reproduced(tmp_path):
    """Every file of the folder: the shards, and the index with the
    checkpoint's random id that each shard's signed binding names."""
    from warpcrypt.safetensors.numpy import load_state_dict, save_state_dict

    keys = ws.generate_keys()
    layers = {f"layers.{i}": np.full((30, 30), i, np.float32) for i in range(4)}
    folders = []
    for i, seed in enumerate([b"a", b"a", b"b", None]):
        folder = tmp_path / f"run-{i}"
        if seed is None:
            save_state_dict(layers, folder, keys=keys, max_shard_size=8000)
        else:
            with _random.seeded(seed):
                save_state_dict(layers, folder, keys=keys, max_shard_size=8000)
        folders.append({path.name: path.read_bytes() for path in sorted(folder.iterdir())})
    same, again, other, unseeded = folders
    assert len(same) == 3 and same == again
    assert all(same[name] != other[name] and same[name] != unseeded[name] for name in same)
    back = load_state_dict(tmp_path / "run-0", keys=keys)
    assert all(np.array_equal(back[name], layers[name]) for name in layers)
