"""warpcrypt.zarr against an attacker who controls the store but not the
key, in zarr formats 2 and 3: what an encrypted array must refuse (a
deleted or replayed chunk, a chunk spliced in from another store or array,
edited metadata, a codec after the AEAD, the codec stripped, the manifest
deleted, a failing chunk committed) and what it must accept (the array
opened at its own root). docs/security.md, "Zarr arrays", lists what each
check covers and what is left to a pinned digest."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import warpcrypt

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", reason="zarr is not installed: codec tests skipped")
numcodecs = pytest.importorskip("numcodecs")
wz = pytest.importorskip("warpcrypt.zarr")

KEY = bytes(range(32))
KEY_ID = "attack-suite"
FORMATS = [3, 2]
# The document that describes an array, per format.
METADATA = {3: "zarr.json", 2: ".zarray"}


@pytest.fixture(autouse=True)
def registered_key():
    wz.register_key(KEY_ID, KEY)
    yield
    wz._keys.pop(KEY_ID, None)


def create(store, fmt, name="a", key_id=KEY_ID, **options):
    """A 40x30 float64 array in 2x2 chunks, sealed under `key_id` (KEY's),
    made the documented way."""
    sealing = {"compressors": [wz.AeadCodec(key_id=key_id)]} if fmt == 3 else \
        {"compressors": wz.AeadNumcodec(key_id=key_id)}
    return wz.create_array(store, name=name, shape=(40, 30), chunks=(20, 15), dtype="f8", fill_value=0.0,
                           zarr_format=fmt, **(sealing | options))


def open_sealed(store, mode="r"):
    """The array "a" opened the documented way, naming the key it is sealed under."""
    return wz.open_array(store, path="a", key_id=KEY_ID, mode=mode)


def values(seed):
    return np.random.default_rng(seed).random((40, 30))


def chunk(array, coords):
    """The store key of one of the array's chunks."""
    return f"{array.path}/{array.metadata.encode_chunk_key(coords)}"


def raw(store):
    return store._store_dict


def contents(store):
    return {key: value.to_bytes() for key, value in raw(store).items()}


def put(store, key, data):
    raw(store)[key] = zarr.core.buffer.cpu.Buffer.from_bytes(data)


def edit_metadata(store, array, fmt, change):
    key = f"{array.path}/{METADATA[fmt]}"
    document = json.loads(raw(store)[key].to_bytes())
    change(document)
    put(store, key, json.dumps(document).encode())


# ---- deleted chunks ----------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_deleted_chunk_fails_instead_of_reading_as_the_fill_value(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(1)
    del raw(store)[chunk(array, (1, 1))]
    reopened = open_sealed(store)
    with pytest.raises(warpcrypt.InvalidTag, match=r"chunk '.*' is missing"):
        reopened[:]
    with pytest.raises(warpcrypt.InvalidTag, match="is missing"):
        reopened[25, 20]
    assert np.array_equal(reopened[:20, :], values(1)[:20, :])  # the chunks left still read


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_deleted_chunk_that_held_only_the_fill_value_fails(fmt):
    """zarr skips writing a chunk equal to the fill value, so deleting one
    would be invisible: every chunk of an encrypted array is written."""
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    data = values(2)
    data[:20, :15] = 0.0
    array[:] = data
    raw(store).pop(chunk(array, (0, 0)), None)
    with pytest.raises(warpcrypt.InvalidTag, match="is missing"):
        open_sealed(store)[:]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_partial_write_over_a_deleted_chunk_fails_instead_of_dropping_its_data(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(3)
    wz.commit(array)
    del raw(store)[chunk(array, (0, 1))]
    with pytest.raises(warpcrypt.InvalidTag, match="is missing"):
        array[0, 20] = 5.0


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_never_written_read_as_the_fill_value_once_committed(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    with pytest.raises(warpcrypt.InvalidTag, match="never written"):
        array[:]
    array[0:5, 0:5] = 1.0  # a partial write of a chunk never written
    wz.commit(array)
    expected = np.zeros((40, 30))
    expected[0:5, 0:5] = 1.0
    assert np.array_equal(open_sealed(store)[:], expected)
    assert sorted(k for k in raw(store) if k.startswith("a/") and "json" not in k and ".z" not in k) == \
        sorted([chunk(array, (0, 0)), "a/warpcrypt.manifest"])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("committed", [True, False], ids=["committed", "never committed"])
def test_a_deleted_manifest_does_not_let_a_write_or_commit_fill_a_deleted_chunk(fmt, committed):
    """Issue 48, item 3: with the manifest deleted, the array looked never
    committed, so a partial write filled a deleted chunk from the fill
    value and the next commit recorded it as never written. The manifest
    is written when the array is made, so its absence means deletion."""
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(25)
    if committed:
        wz.commit(array)
    del raw(store)["a/warpcrypt.manifest"], raw(store)[chunk(array, (0, 1))]
    attacked = contents(store)
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' is missing"):
        array[0, 20] = 5.0  # a partial write over the deleted chunk
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' is missing"):
        wz.commit(array)
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' is missing"):
        wz.verify(array)
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' is missing"):
        array[:20, :15]
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' is missing"):
        open_sealed(store)
    assert contents(store) == attacked  # nothing filled, nothing recorded


# ---- replayed chunks ---------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_older_version_of_a_chunk_put_back_fails(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(4)
    wz.commit(array)
    old = raw(store)[chunk(array, (1, 0))].to_bytes()
    array[:] = values(5)
    wz.commit(array)
    put(store, chunk(array, (1, 0)), old)
    with pytest.raises(warpcrypt.InvalidTag, match="earlier version was put back"):
        open_sealed(store)[:]
    with pytest.raises(warpcrypt.InvalidTag, match="earlier version was put back"):
        wz.commit(array)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_version_superseded_before_a_commit_put_back_after_it_fails(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(6)
    old = raw(store)[chunk(array, (0, 0))].to_bytes()
    array[:] = values(7)
    wz.commit(array)
    array[:] = values(8)  # written after the commit, in the next generation
    put(store, chunk(array, (0, 0)), old)
    with pytest.raises(warpcrypt.InvalidTag, match="earlier version was put back"):
        array[:]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_manifest_deleted_or_replaced_fails(fmt):
    store = zarr.storage.MemoryStore()
    array, other = create(store, fmt), create(store, fmt, name="b")
    created = raw(store)["a/warpcrypt.manifest"]
    array[:], other[:] = values(9), values(10)
    wz.commit(array)
    wz.commit(other)
    array[:] = values(11)  # generation 2
    manifest = raw(store).pop("a/warpcrypt.manifest")
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' is missing"):
        array[:]
    raw(store)["a/warpcrypt.manifest"] = raw(store)["b/warpcrypt.manifest"]
    with pytest.raises(warpcrypt.InvalidTag, match="warpcrypt.manifest' did not authenticate"):
        array[:]
    raw(store)["a/warpcrypt.manifest"] = created  # the one written when the array was made
    with pytest.raises(warpcrypt.InvalidTag, match="manifest was put back to an earlier one"):
        array[:]
    raw(store)["a/warpcrypt.manifest"] = manifest
    assert np.array_equal(array[:], values(11))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_pinned_digest_exposes_a_rollback_of_the_whole_store(fmt):
    """The store put back as it was at an earlier commit is consistent, and
    reads; only a digest kept outside the store tells it apart."""
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(12)
    first = wz.commit(array)
    earlier = dict(raw(store))
    array[:] = values(13)
    with pytest.raises(warpcrypt.InvalidTag, match="written after the last commit"):
        wz.verify(array)
    second = wz.commit(array)
    assert first != second and wz.verify(array) == second
    raw(store).clear()
    raw(store).update(earlier)
    reopened = open_sealed(store)
    assert np.array_equal(reopened[:], values(12))
    assert wz.verify(reopened) == first != second


@pytest.mark.parametrize("fmt", FORMATS)
def test_commit_refuses_a_chunk_that_does_not_authenticate(fmt):
    """Issue 48, item 4: commit read only the chunks' headers, so it recorded
    (and gave a digest to pin for) a chunk whose tag fails every read."""
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(26)
    wz.commit(array)
    array[20:, :15] = values(27)[20:, :15]  # written since the commit
    for coords in ((0, 0), (1, 0)):  # one committed chunk, one written since
        damaged = bytearray(raw(store)[chunk(array, coords)].to_bytes())
        damaged[-1] ^= 1  # in the tag
        put(store, chunk(array, coords), bytes(damaged))
    committed = contents(store)
    with pytest.raises(warpcrypt.InvalidTag, match="did not authenticate"):
        wz.commit(array)
    with pytest.raises(warpcrypt.InvalidTag, match="did not authenticate"):
        wz.verify(array)
    assert contents(store) == committed  # the manifest was not replaced


# ---- splices -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_chunk_from_another_store_under_the_same_key_id_fails(fmt):
    first, second = zarr.storage.MemoryStore(), zarr.storage.MemoryStore()
    array, other = create(first, fmt), create(second, fmt)
    array[:], other[:] = values(14), values(15)
    raw(second)[chunk(other, (0, 1))] = raw(first)[chunk(array, (0, 1))]
    with pytest.raises(warpcrypt.InvalidTag, match="did not authenticate"):
        other[:]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_chunk_from_an_earlier_array_at_the_same_path_fails(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(16)
    old = raw(store)[chunk(array, (1, 1))].to_bytes()
    replacement = create(store, fmt, overwrite=True)
    replacement[:] = values(17)
    put(store, chunk(replacement, (1, 1)), old)
    with pytest.raises(warpcrypt.InvalidTag, match="did not authenticate"):
        replacement[:]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_chunk_moved_within_the_array_or_into_a_sibling_fails(fmt):
    store = zarr.storage.MemoryStore()
    array, sibling = create(store, fmt), create(store, fmt, name="b")
    array[:], sibling[:] = values(18), values(19)
    raw(store)[chunk(sibling, (0, 0))] = raw(store)[chunk(array, (0, 0))]
    raw(store)[chunk(array, (0, 1))] = raw(store)[chunk(array, (1, 0))]
    with pytest.raises(warpcrypt.InvalidTag):
        sibling[:20, :15]
    with pytest.raises(warpcrypt.InvalidTag):
        array[:20, 15:]


def test_one_codec_object_gives_each_array_its_own_id():
    store = zarr.storage.MemoryStore()
    codec = wz.AeadCodec(key_id=KEY_ID)
    first = wz.create_array(store, name="a", shape=(4,), chunks=(4,), dtype="i4", compressors=[codec])
    second = wz.create_array(store, name="b", shape=(4,), chunks=(4,), dtype="i4", compressors=[codec])
    first[:], second[:] = np.arange(4), np.arange(4) + 10
    ids = {json.loads(raw(store)[f"{name}/zarr.json"].to_bytes())["codecs"][-1]["configuration"]["array_id"]
           for name in "ab"}
    assert len(ids) == 2
    raw(store)["b/c/0"] = raw(store)["a/c/0"]
    with pytest.raises(warpcrypt.InvalidTag):
        second[:]


# ---- metadata ----------------------------------------------------------------

EDITS = {
    3: {
        "shape shrunk": lambda d: d.update(shape=[30, 30]),
        "shape grown": lambda d: d.update(shape=[50, 30]),
        "data_type": lambda d: d.update(data_type="int64"),
        "fill_value": lambda d: d.update(fill_value=7.0),
        "codecs": lambda d: d["codecs"][0]["configuration"].update(endian="big"),
        "chunk shape": lambda d: d["chunk_grid"]["configuration"].update(chunk_shape=[15, 20]),
        "dimension names": lambda d: d.update(dimension_names=["y", "x"]),
        "chunk key encoding": lambda d: d.update(chunk_key_encoding={"name": "v2",
                                                                     "configuration": {"separator": "."}}),
        "array_id": lambda d: d["codecs"][-1]["configuration"].update(array_id="0" * 32),
    },
    2: {
        "shape shrunk": lambda d: d.update(shape=[30, 30]),
        "shape grown": lambda d: d.update(shape=[50, 30]),
        "data_type": lambda d: d.update(dtype="<i8"),
        "fill_value": lambda d: d.update(fill_value=7.0),
        "codecs": lambda d: d.update(filters=[{"id": "delta", "dtype": "<f8"}]),
        "chunk shape": lambda d: d.update(chunks=[15, 20]),
        "order": lambda d: d.update(order="F"),
        "dimension separator": lambda d: d.update(dimension_separator="/"),
        "array_id": lambda d: d["compressor"].update(array_id="0" * 32),
    },
}


@pytest.mark.parametrize("fmt, edit", [(fmt, edit) for fmt in FORMATS for edit in EDITS[fmt]])
def test_edited_metadata_fails_instead_of_reinterpreting_the_chunks(fmt, edit):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(20)
    edit_metadata(store, array, fmt, EDITS[fmt][edit])
    with pytest.raises(warpcrypt.InvalidTag, match="did not authenticate"):
        open_sealed(store)[:20, :15]


@pytest.mark.parametrize("fmt", FORMATS)
def test_attributes_are_the_users_and_can_change(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(21)
    wz.commit(array)
    array.attrs["units"] = "kelvin"
    reopened = open_sealed(store)
    assert reopened.attrs["units"] == "kelvin" and np.array_equal(reopened[:], values(21))


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_array_opened_at_its_own_root_reads(tmp_path, fmt):
    array = create(zarr.storage.LocalStore(tmp_path), fmt, name="group/a")
    array[:] = values(22)
    digest = wz.commit(array)
    at_root = wz.open_array(tmp_path / "group" / "a", key_id=KEY_ID, mode="r+")
    assert np.array_equal(at_root[:], values(22))
    at_root[0, 0] = -1.0
    assert wz.commit(at_root) != digest
    assert wz.open_array(zarr.storage.LocalStore(tmp_path), path="group/a", key_id=KEY_ID)[0, 0] == -1.0


def test_a_chunk_of_the_earlier_format_is_refused_by_version():
    store = zarr.storage.MemoryStore()
    array = create(store, 3)
    array[:] = values(23)
    sealed = bytearray(raw(store)[chunk(array, (0, 0))].to_bytes())
    sealed[0] = 1
    put(store, chunk(array, (0, 0)), bytes(sealed))
    with pytest.raises(warpcrypt.FormatError, match="chunk format version 1; .* reads version 2"):
        array[:]


# ---- the codec stripped ------------------------------------------------------

ATTACKERS = np.full((40, 30), 666.0)


def strip_the_codec(store, array, fmt):
    """The codec edited out of the array's metadata, and plaintext chunks
    written in its place (by zarr, which now sees an array in the clear)."""
    edit_metadata(store, array, fmt, lambda d: d["codecs"].pop() if fmt == 3 else d.update(compressor=None))
    zarr.open_array(store, path="a", mode="r+")[:] = ATTACKERS


def plant_the_other_format(store, array, fmt):
    """A plaintext array of the other zarr format put at the array's path:
    zarr prefers format 3's zarr.json to format 2's .zarray, so a format 3
    one goes beside a format 2 array, and a format 2 one replaces format
    3's document."""
    planted = 2 if fmt == 3 else 3
    scratch = zarr.storage.MemoryStore()
    zarr.create_array(scratch, name="a", shape=(40, 30), chunks=(20, 15), dtype="f8", zarr_format=planted,
                      compressors=None)[:] = ATTACKERS
    if planted == 2:
        del raw(store)["a/zarr.json"]
    raw(store).update((key, value) for key, value in raw(scratch).items() if key.startswith("a/"))


STRIPS = {"codec edited out": strip_the_codec, "other format planted": plant_the_other_format}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("strip", STRIPS)
def test_an_array_stripped_of_its_codec_is_refused_by_open_array(fmt, strip):
    """Issue 48, item 2: someone who can write the store puts a plaintext
    array where the encrypted one was. zarr's own open reads it (the
    attacker's values, no error) and writes in the clear; opening it the
    documented way, naming the key, refuses it for reading and writing."""
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(28)
    wz.commit(array)
    STRIPS[strip](store, array, fmt)
    assert np.array_equal(zarr.open_array(store, path="a")[:], ATTACKERS)  # the attack works on zarr's own open
    attacked = contents(store)
    for mode in ("r", "r+"):
        with pytest.raises(warpcrypt.FormatError, match="names no warpcrypt.aead codec"):
            open_sealed(store, mode)
    assert contents(store) == attacked


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_array_sealed_under_another_key_id_is_refused_by_open_array(fmt):
    """A reader who holds several keys (one of them known to others, say)
    opens the array under the key it expects: another array, sealed under
    another key, copied over it, is refused."""
    wz.register_key("other", bytes(32))
    try:
        store = zarr.storage.MemoryStore()
        array, other = create(store, fmt), create(store, fmt, name="b", key_id="other")
        array[:], other[:] = values(29), ATTACKERS
        wz.commit(array)
        wz.commit(other)
        for key in [key for key in raw(store) if key.startswith("a/")]:
            del raw(store)[key]
        raw(store).update(("a/" + key[2:], value) for key, value in list(raw(store).items()) if key.startswith("b/"))
        assert np.array_equal(zarr.open_array(store, path="a")[:], ATTACKERS)  # the attack works on zarr's own open
        with pytest.raises(warpcrypt.FormatError, match="sealed under key_id 'other', not 'attack-suite'"):
            open_sealed(store)
    finally:
        wz._keys.pop("other", None)


# ---- codec order -------------------------------------------------------------


def test_a_compressor_after_the_aead_is_refused_at_creation():
    with pytest.raises(warpcrypt.InvalidArgument, match="must be the last codec.*warpcrypt.aead, zstd"):
        wz.create_array(zarr.storage.MemoryStore(), name="a", shape=(10,), chunks=(5,), dtype="i4",
                        compressors=[wz.AeadCodec(key_id=KEY_ID), zarr.codecs.ZstdCodec()])
    with pytest.raises(warpcrypt.InvalidArgument, match="must be the last codec.*warpcrypt.aead, zstd"):
        wz.create_array(zarr.storage.MemoryStore(), name="a", shape=(10,), chunks=(5,), dtype="i4",
                        zarr_format=2, filters=[wz.AeadNumcodec(key_id=KEY_ID)], compressors=numcodecs.Zstd())


COMPRESSOR_AFTER_THE_AEAD = {
    3: lambda d: d["codecs"].append({"name": "zstd", "configuration": {"level": 0}}),
    2: lambda d: d.update(filters=[d["compressor"]], compressor={"id": "zstd", "level": 0}),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_compressor_put_after_the_aead_in_stored_metadata_is_refused_at_open(fmt):
    store = zarr.storage.MemoryStore()
    array = create(store, fmt)
    array[:] = values(24)
    edit_metadata(store, array, fmt, COMPRESSOR_AFTER_THE_AEAD[fmt])
    with pytest.raises(warpcrypt.InvalidArgument, match="must be the last codec"):
        open_sealed(store)


def test_the_aead_inside_a_sharding_codec_is_refused():
    with pytest.raises(warpcrypt.InvalidArgument, match="inside a sharding codec"):
        wz.create_array(zarr.storage.MemoryStore(), name="a", shape=(8,), chunks=(2,), shards=(4,), dtype="i4",
                        compressors=[wz.AeadCodec(key_id=KEY_ID)])


def test_the_aead_after_a_sharding_codec_seals_whole_shards():
    store = zarr.storage.MemoryStore()
    array = wz.create_array(store, name="a", shape=(8,), chunks=(4,), dtype="i4",
                            serializer=zarr.codecs.ShardingCodec(chunk_shape=(2,)),
                            compressors=[wz.AeadCodec(key_id=KEY_ID)])
    array[:] = np.arange(8)
    digest = wz.commit(array)
    assert np.array_equal(array[:], np.arange(8)) and wz.verify(array) == digest
    raw(store)["a/c/0"] = raw(store)["a/c/1"]
    with pytest.raises(warpcrypt.InvalidTag, match="'a/c/0' did not authenticate"):
        array[:]


# ---- the interpreter's exit --------------------------------------------------


def test_a_failed_read_leaves_no_tracebacks_at_exit():
    """One failing chunk among many used to leave zarr's other tasks pending
    and a context variable reset in the wrong context: hundreds of lines of
    asyncio tracebacks on stderr when the interpreter exited. The other
    chunks arrive late here, so that they are still being read when the
    damaged one fails."""
    script = textwrap.dedent(f"""
        import asyncio, numpy as np, zarr, warpcrypt, warpcrypt.zarr as wz
        wz.register_key("default", {KEY!r})

        class Slow(zarr.storage.WrapperStore):
            async def get(self, key, prototype, byte_range=None):
                if key[-1].isdigit() and key != "a/" + damaged:
                    await asyncio.sleep(2)
                return await self._store.get(key, prototype, byte_range)

        for fmt in (3, 2):
            store = zarr.storage.MemoryStore()
            codec = wz.AeadCodec() if fmt == 3 else wz.AeadNumcodec()
            array = wz.create_array(store, name="a", shape=(40, 40), chunks=(10, 10), dtype="f8",
                                    zarr_format=fmt, compressors=[codec] if fmt == 3 else codec)
            array[:] = 1.0
            damaged = array.metadata.encode_chunk_key((0, 0))
            store._store_dict["a/" + damaged] = store._store_dict["a/" + array.metadata.encode_chunk_key((1, 1))]
            try:
                zarr.open_array(Slow(store), path="a")[:]
            except warpcrypt.InvalidTag as error:
                print("refused:", error)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("refused: warpcrypt.aead: chunk") == 2, result.stdout
    assert result.stderr == ""
