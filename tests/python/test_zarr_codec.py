"""warpcrypt.zarr: the "warpcrypt.aead" codec for zarr-python 3 and
numcodecs. Each chunk is bound to its array and coordinates; keys never
reach the store. test_zarr_attacks.py tries the array as an attacker
would."""

from __future__ import annotations

import json
import pickle

import pytest

import warpcrypt

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", reason="zarr is not installed: codec tests skipped")
numcodecs = pytest.importorskip("numcodecs")
wz = pytest.importorskip("warpcrypt.zarr")

KEY = bytes(range(32))


@pytest.fixture
def store():
    return zarr.storage.MemoryStore()


@pytest.fixture
def registered_key():
    wz.register_key("test-key", KEY)
    yield "test-key"
    wz._keys.pop("test-key", None)


def make_array(store, name="data/temperature", aead="aes-256-gcm", key=KEY, **options):
    return wz.create_array(store, name=name, shape=(50, 40), chunks=(20, 20), dtype="f8",
                           compressors=[wz.AeadCodec(aead=aead, key=key, **options)])


def values(seed=0):
    return np.random.default_rng(seed).random((50, 40))


@pytest.mark.parametrize("aead", ["aes-256-gcm", "aes-128-gcm", "chacha20-poly1305"])
def test_round_trip_and_reopen_by_key_id(aead, store):
    key = KEY if aead != "aes-128-gcm" else KEY[:16]
    array = make_array(store, aead=aead, key=key, key_id="k1")
    array[:] = values()
    array[3:7, 5] = -1.0  # a partial write decodes the chunk and seals it again
    expected = values()
    expected[3:7, 5] = -1.0
    assert np.array_equal(array[:], expected)
    wz.register_key("k1", key)
    try:
        assert np.array_equal(wz.open_array(store, path="data/temperature", key_id="k1")[:], expected)
    finally:
        wz._keys.pop("k1")


def test_chunks_are_ciphertext_and_metadata_holds_no_key(store):
    array = make_array(store)
    array[:] = values()
    documents = {k: v.to_bytes() for k, v in store._store_dict.items()}
    assert "data/temperature/warpcrypt.manifest" in documents  # written when the array was made
    for name, document in documents.items():
        assert KEY not in document and KEY.hex().encode() not in document, name
    metadata = json.loads(documents["data/temperature/zarr.json"])
    configuration = metadata["codecs"][-1]["configuration"]
    assert metadata["codecs"][-1]["name"] == "warpcrypt.aead"
    assert configuration.pop("array_id") == array.metadata.codecs[-1].array_id
    assert configuration == {"aead": "aes-256-gcm", "key_id": "default"}
    plain_chunk = values()[:20, :20].tobytes()
    assert plain_chunk[:64] not in documents["data/temperature/c/0/0"]
    # A version byte, the write generation (8 bytes), the nonce, the tag.
    assert len(documents["data/temperature/c/0/0"]) == len(plain_chunk) + 37


def test_a_chunk_moved_to_another_position_fails(store):
    array = make_array(store)
    array[:] = values()
    chunks = store._store_dict
    chunks["data/temperature/c/0/1"] = chunks["data/temperature/c/1/0"]
    assert np.array_equal(array[20:40, 0:20], values()[20:40, 0:20])  # the untouched chunk still opens
    with pytest.raises(warpcrypt.InvalidTag, match="data/temperature/c/0/1"):
        array[0:20, 20:40]


def test_a_chunk_copied_into_another_array_fails(store):
    first, second = make_array(store, name="a"), make_array(store, name="b")
    first[:] = values(1)
    second[:] = values(2)
    store._store_dict["b/c/0/0"] = store._store_dict["a/c/0/0"]
    with pytest.raises(warpcrypt.InvalidTag, match="'b/c/0/0'"):
        second[:]


def test_wrong_key_damage_and_missing_key(store):
    array = make_array(store)
    array[:] = values()
    wz.register_key("default", bytes(32))
    try:
        with pytest.raises(warpcrypt.InvalidTag, match="wrong key"):
            wz.open_array(store, path="data/temperature", key_id="default")
    finally:
        wz._keys.pop("default")
    with pytest.raises(warpcrypt.InvalidArgument, match="no key for key_id 'default'"):
        wz.open_array(store, path="data/temperature", key_id="default")
    damaged = bytearray(store._store_dict["data/temperature/c/1/1"].to_bytes())
    damaged[40] ^= 1
    store._store_dict["data/temperature/c/1/1"] = zarr.core.buffer.cpu.Buffer.from_bytes(bytes(damaged))
    with pytest.raises(warpcrypt.InvalidTag, match="c/1/1"):
        array[:]


def test_key_provider_and_bad_parameters(store):
    asked = []
    wz.set_key_provider(lambda key_id: asked.append(key_id) or KEY)
    try:
        array = make_array(store, key=None, key_id="from-kms")
        array[:] = values()
        assert np.array_equal(array[:], values()) and asked == ["from-kms"]
    finally:
        wz.set_key_provider(None)
    with pytest.raises(warpcrypt.InvalidKey):
        wz.AeadCodec(key=bytes(16))
    with pytest.raises(warpcrypt.InvalidArgument, match="unknown AEAD"):
        wz.AeadCodec(aead="aes-256-ctr")


def test_pickled_codecs_carry_no_key():
    for codec in (wz.AeadCodec(key=KEY), wz.AeadNumcodec(key=KEY)):
        pickled = pickle.dumps(codec)
        assert KEY not in pickled
        restored = pickle.loads(pickled)
        assert restored.key_id == "default" and restored.aead == "aes-256-gcm"
    assert "key" not in repr(wz.AeadCodec(key=KEY)).replace("key_id", "")


@pytest.mark.parametrize("fmt", [3, 2])
def test_a_pickled_array_carries_no_key_and_reads_where_its_key_id_is_registered(store, fmt):
    """Dask sends an array to its workers pickled: the key given as key=
    stays behind (it used to be pickled in the clear, and an array that had
    read or written could not be pickled at all)."""
    codec = wz.AeadCodec(key_id="pickled", key=KEY) if fmt == 3 else wz.AeadNumcodec(key_id="pickled", key=KEY)
    array = wz.create_array(store, name="p", shape=(8,), chunks=(4,), dtype="i4", zarr_format=fmt,
                            compressors=[codec] if fmt == 3 else codec)
    array[:] = np.arange(8)
    pickled = pickle.dumps(array)
    assert KEY not in pickled
    restored = pickle.loads(pickled)
    with pytest.raises(warpcrypt.InvalidArgument, match="no key for key_id 'pickled'"):
        restored[:]
    wz.register_key("pickled", KEY)
    try:
        assert np.array_equal(restored[:], np.arange(8))
    finally:
        wz._keys.pop("pickled")


@pytest.mark.parametrize("fmt", [3, 2])
def test_create_array_refuses_what_it_cannot_seal_and_leaves_nothing(store, fmt):
    with pytest.raises(warpcrypt.FormatError, match="names no warpcrypt.aead codec"):
        wz.create_array(store, name="plain", shape=(8,), chunks=(4,), dtype="i4", zarr_format=fmt)
    with pytest.raises(warpcrypt.InvalidArgument, match="data="):
        wz.create_array(store, name="plain", data=np.arange(8), chunks=(4,), zarr_format=fmt,
                        compressors=[wz.AeadCodec(key=KEY)] if fmt == 3 else wz.AeadNumcodec(key=KEY))
    # The manifest is sealed when the array is made: without the key, no array is left.
    with pytest.raises(warpcrypt.InvalidArgument, match="no key for key_id 'unregistered'"):
        wz.create_array(store, name="plain", shape=(8,), chunks=(4,), dtype="i4", zarr_format=fmt,
                        compressors=[wz.AeadCodec(key_id="unregistered")] if fmt == 3 else
                        wz.AeadNumcodec(key_id="unregistered"))
    assert not any(key.startswith("plain") for key in store._store_dict)


def test_open_array_opens_existing_arrays_only(store):
    make_array(store)
    with pytest.raises(warpcrypt.InvalidArgument, match="mode 'a'"):
        wz.open_array(store, path="data/temperature", key_id="default", mode="a")


def test_numcodecs_codec_under_one_id(registered_key):
    codec = numcodecs.get_codec({"id": "warpcrypt.aead", "key_id": registered_key})
    assert isinstance(codec, wz.AeadNumcodec) and codec.get_config() == {
        "id": "warpcrypt.aead", "aead": "aes-256-gcm", "key_id": registered_key, "array_id": codec.array_id}
    assert pickle.loads(pickle.dumps(codec)).array_id == codec.array_id
    data = np.arange(1000, dtype=np.int32)
    with wz.chunk_key("x/0"):
        sealed = codec.encode(data)
        assert np.array_equal(np.frombuffer(codec.decode(sealed), dtype=np.int32), data)
        out = np.empty(1000, dtype=np.int32)
        codec.decode(sealed, out=out)
        assert np.array_equal(out, data)
    with wz.chunk_key("x/1"), pytest.raises(warpcrypt.InvalidTag):
        codec.decode(sealed)
    with pytest.raises(warpcrypt.InvalidArgument, match="none was named"):
        codec.encode(data)


def test_zarr_format_2_with_the_numcodecs_codec(store, registered_key):
    array = wz.create_array(store, name="v2", shape=(30, 30), chunks=(10, 10), dtype="i4", zarr_format=2,
                            compressors=wz.AeadNumcodec(key_id=registered_key))
    data = np.arange(900, dtype="i4").reshape(30, 30)
    array[:] = data
    assert np.array_equal(wz.open_array(store, path="v2", key_id=registered_key)[:], data)
    store._store_dict["v2/0.1"] = store._store_dict["v2/1.0"]
    with pytest.raises(warpcrypt.InvalidTag):
        wz.open_array(store, path="v2", key_id=registered_key)[0:10, 10:20]


def test_dask_to_zarr_and_from_zarr(tmp_path, registered_key):
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    expected = values()[:40]
    source = da.from_array(expected, chunks=(20, 20))
    target = wz.create_array(str(tmp_path / "z"), shape=source.shape, chunks=(20, 20), dtype="f8",
                             compressors=[wz.AeadCodec(key_id=registered_key)])
    # Dask's threads in this process, whatever scheduler an earlier test's
    # distributed client left configured.
    import dask
    with dask.config.set(scheduler="threads"):
        da.to_zarr(source, target)
        # The workers are done: the client commits what they wrote.
        digest = wz.commit(target)
        loaded = da.from_zarr(wz.open_array(str(tmp_path / "z"), key_id=registered_key))
        assert np.array_equal(loaded.compute(), expected)
    assert wz.verify(wz.open_array(str(tmp_path / "z"), key_id=registered_key)) == digest
    chunk = (tmp_path / "z" / "c" / "0" / "0").read_bytes()
    assert expected[:20, :20].tobytes()[:64] not in chunk


def test_gpu_buffers(store, registered_key):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed: GPU codec test skipped")
    if not warpcrypt.devices():
        pytest.skip("no CUDA device: GPU codec test skipped")
    with zarr.config.enable_gpu():
        array = wz.create_array(store, name="gpu", shape=(64, 64), chunks=(32, 32), dtype="f4",
                                compressors=[wz.AeadCodec(key_id=registered_key)])
        data = cupy.arange(64 * 64, dtype=cupy.float32).reshape(64, 64)
        array[:] = data
        back = array[:]
        assert isinstance(back, cupy.ndarray) and bool((back == data).all())
    store._store_dict["gpu/c/0/1"] = store._store_dict["gpu/c/1/0"]
    with zarr.config.enable_gpu(), pytest.raises(warpcrypt.InvalidTag):
        array[0:32, 32:64]


@pytest.mark.parametrize("fmt", [3, 2])
def test_plain_zarr_finds_the_codec_and_asks_for_its_key(tmp_path, fmt):
    """An encrypted array opened with plain zarr, in a process that never
    imported warpcrypt.zarr: zarr finds the codec through the package's
    entry point, and the one error is that no key is registered for its
    key_id, not an unknown codec."""
    import importlib.metadata
    import subprocess
    import sys

    groups = {"zarr.codecs": 3, "numcodecs.codecs": 2}
    if not any(point.name == wz.CODEC_ID for group, version in groups.items() if version == fmt
               for point in importlib.metadata.entry_points(group=group)):
        pytest.skip("warpcrypt is not installed with its entry points (scripts/build.sh installs it)")
    codec = wz.AeadCodec(key_id="plain-zarr", key=KEY) if fmt == 3 else wz.AeadNumcodec(key_id="plain-zarr", key=KEY)
    array = wz.create_array(str(tmp_path / "a.zarr"), shape=(8,), chunks=(4,), dtype="i4", zarr_format=fmt,
                            compressors=[codec] if fmt == 3 else codec)
    array[:] = np.arange(8)
    reader = ("import zarr, sys\n"
              "try:\n"
              f"    zarr.open_array({str(tmp_path / 'a.zarr')!r}, mode='r')[:]\n"
              "except Exception as error:\n"
              "    print(type(error).__name__, error)\n")
    shown = subprocess.run([sys.executable, "-c", reader], capture_output=True, text=True, timeout=120)
    assert "no key for key_id 'plain-zarr'" in shown.stdout, shown.stdout + shown.stderr
    assert "Unknown" not in shown.stdout + shown.stderr
