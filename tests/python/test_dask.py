"""warpcrypt.dask on a Dask LocalCluster of two worker processes: files
encrypted and decrypted across workers (200 small files and three of 50 MiB),
per-file nonces, the manifest and reruns, a worker killed mid-file, corrupt
inputs, interop with the `warpcrypt` CLI, dask arrays, and the command line.

The CLI comes from $WARPCRYPT_CLI, else <repo>/build/warpcrypt, as in
tests/cli; its absence fails the interop tests rather than skipping them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dask
import dask.array as da
import distributed
import numpy as np
import pytest

import warpcrypt
import warpcrypt.aead
from warpcrypt.dask import (
    MANIFEST_NAME,
    EncryptedArray,
    JobReport,
    ManifestMismatch,
    decrypt_array,
    decrypt_files,
    derive_chunk_key,
    derive_file_key,
    encrypt_array,
    encrypt_files,
    hkdf_sha256,
    read_manifest,
)
from warpcrypt.dask._jobs import STAGING_NAME

REPO_ROOT = Path(__file__).resolve().parents[2]
MASTER_KEY = hashlib.sha256(b"warpcrypt.dask tests: master key").digest()
OTHER_KEY = hashlib.sha256(b"warpcrypt.dask tests: another key").digest()
SMALL_FILES = 200
LARGE_FILES = 3
LARGE_SIZE = 50 << 20
HEADER, TAG = 48, 16


def _cluster() -> distributed.LocalCluster:
    # One Dask thread per worker process, as the command line starts them.
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")


@pytest.fixture(scope="module")
def client():
    with _cluster() as cluster, distributed.Client(cluster) as dask_client:
        yield dask_client


@pytest.fixture(scope="module")
def cli() -> Path:
    configured = os.environ.get("WARPCRYPT_CLI")
    path = Path(configured) if configured else REPO_ROOT / "build" / "warpcrypt"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"warpcrypt CLI not found at {path}: build it or set WARPCRYPT_CLI", pytrace=False)
    return path


def _write_files(root: Path, sizes: dict[str, int], seed: str) -> dict[str, bytes]:
    generator = random.Random(seed)
    contents = {}
    for name, size in sizes.items():
        contents[name] = generator.randbytes(size)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(contents[name])
    return contents


def _small_file_sizes(count: int) -> dict[str, int]:
    """Names in nested folders, one not ASCII, sizes 0 to 64 KiB, some on
    the sealed format's 4 KiB chunk boundaries."""
    generator = random.Random("small file sizes")
    sizes = {f"small/{i % 7}/file-{i:03d}.bin": generator.randrange(0, 64 << 10) for i in range(count - 4)}
    sizes.update({"small/empty.bin": 0, "small/one-chunk.bin": 4096, "small/two-chunks.bin": 8192,
                  "small/données/été.bin": 1234})
    return sizes


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("dataset")
    sizes = _small_file_sizes(SMALL_FILES)
    sizes.update({f"large/part-{i}.bin": LARGE_SIZE + i * 1000 for i in range(LARGE_FILES)})
    return root, _write_files(root, sizes, "dataset")


@pytest.fixture(scope="module")
def sealed(client, dataset, tmp_path_factory) -> tuple[Path, JobReport]:
    """The dataset sealed with aes-256-gcm in 4 KiB chunks, once for the
    module; tests that damage it work on a copy."""
    root, _ = dataset
    out = tmp_path_factory.mktemp("sealed")
    report = encrypt_files(root, out, key=MASTER_KEY, client=client, chunk_size=4096)
    return out, report


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {name: ((root / name).stat().st_ino, (root / name).stat().st_mtime_ns) for name in _tree(root)}


# ----------------------------------------------------------------------------
# Key derivation
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("ikm, salt, info, length, expected", [
    # RFC 5869, appendix A, test cases 1 to 3.
    (bytes([0x0B] * 22), bytes(range(13)), bytes(range(0xF0, 0xFA)), 42,
     "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
    (bytes(range(0x50)), bytes(range(0x60, 0xB0)), bytes(range(0xB0, 0x100)), 82,
     "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09"
     "da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
    (bytes([0x0B] * 22), b"", b"", 42,
     "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
])
def test_hkdf_matches_rfc_5869(ikm, salt, info, length, expected):
    assert hkdf_sha256(ikm, salt, info, length).hex() == expected


def test_derived_keys_differ_by_file_cipher_and_job():
    job_a, job_b = bytes(16), bytes([1] * 16)
    sealed_keys = {derive_file_key(MASTER_KEY, f"f{i}").key for i in range(100)}
    assert len(sealed_keys) == 100
    ctr = derive_file_key(MASTER_KEY, "f0", cipher="aes-256-ctr", job_id=job_a)
    assert len(ctr.key) == 32 and len(ctr.iv) == 16
    assert derive_file_key(MASTER_KEY, "f0", cipher="aes-256-ctr", job_id=job_b).iv != ctr.iv
    assert derive_file_key(MASTER_KEY, "f0", cipher="aes-128-ctr", job_id=job_a).iv != ctr.iv
    # A sealed file's key is the prefix of the 32-byte derivation, whatever its AEAD.
    assert derive_file_key(MASTER_KEY, "f0", cipher="aes-128-gcm").key == derive_file_key(MASTER_KEY, "f0").key[:16]


def test_short_keys_ecb_and_jobless_plain_ciphers_are_refused():
    with pytest.raises(warpcrypt.InvalidKey, match="at least 16"):
        derive_file_key(b"short", "f")
    with pytest.raises(warpcrypt.InvalidArgument, match="takes no IV"):
        derive_file_key(MASTER_KEY, "f", cipher="aes-256-ecb", job_id=bytes(16))
    with pytest.raises(warpcrypt.InvalidArgument, match="job_id"):
        derive_file_key(MASTER_KEY, "f", cipher="aes-256-ctr")


# ----------------------------------------------------------------------------
# Files: round trips, nonces, manifest, reruns
# ----------------------------------------------------------------------------


def test_sealed_round_trip(client, dataset, sealed, tmp_path):
    root, contents = dataset
    out, report = sealed
    assert report.ok and report.processed == len(contents) and report.skipped == 0
    assert report.bytes == sum(map(len, contents.values()))
    assert sum(w.files for w in report.workers) == len(contents)
    assert _tree(out) == sorted([f"{name}.wcs" for name in contents] + [MANIFEST_NAME])

    manifest = read_manifest(out / MANIFEST_NAME)
    assert manifest["operation"] == "encrypt" and manifest["cipher"] == "aes-256-gcm"
    workers = client.scheduler_info()["workers"]
    for name, data in contents.items():
        entry = manifest["files"][name]
        chunks = max(1, -(-len(data) // 4096))
        assert entry["status"] == "done" and entry["authentication"] == "sealed"
        assert entry["input_size"] == len(data)
        assert entry["output_size"] == (out / entry["output"]).stat().st_size == HEADER + len(data) + TAG * chunks
        assert entry["worker"] in workers

    restored = tmp_path / "restored"
    back = decrypt_files(out, restored, key=MASTER_KEY, client=client)
    assert back.ok and back.processed == len(contents)
    assert _tree(restored) == sorted([*contents, MANIFEST_NAME])
    for name, data in contents.items():
        assert (restored / name).read_bytes() == data, name
    assert {e["authentication"] for e in read_manifest(restored / MANIFEST_NAME)["files"].values()} == {"verified"}


def test_every_sealed_file_has_its_own_salt_and_nonce_prefix(sealed):
    out, _ = sealed
    manifest = read_manifest(out / MANIFEST_NAME)
    infos = [warpcrypt.sealed_info(out / entry["output"]) for entry in manifest["files"].values()]
    assert len({info.salt for info in infos}) == len({info.nonce_prefix for info in infos}) == len(infos)
    for entry, info in zip(manifest["files"].values(), infos):
        assert (entry["salt"], entry["nonce_prefix"]) == (info.salt.hex(), info.nonce_prefix.hex())


def test_rerun_is_a_no_op_and_redoes_only_missing_outputs(client, dataset, sealed):
    root, contents = dataset
    out, _ = sealed
    before = _stamps(out)
    files_before = read_manifest(out / MANIFEST_NAME)["files"]

    report = encrypt_files(root, out, key=MASTER_KEY, client=client, chunk_size=4096)
    assert report.ok and (report.processed, report.skipped) == (0, len(contents))
    assert {k: v for k, v in _stamps(out).items() if k != MANIFEST_NAME} == \
        {k: v for k, v in before.items() if k != MANIFEST_NAME}
    assert read_manifest(out / MANIFEST_NAME)["files"] == files_before

    (out / "small/empty.bin.wcs").unlink()
    report = encrypt_files(root, out, key=MASTER_KEY, client=client, chunk_size=4096)
    assert (report.processed, report.skipped) == (1, len(contents) - 1)
    assert warpcrypt.sealed_info(out / "small/empty.bin.wcs").plaintext_len == 0


def test_rerun_with_another_key_and_bad_arguments_are_refused(client, dataset, sealed):
    root, _ = dataset
    out, _ = sealed
    before = _stamps(out)
    with pytest.raises(ManifestMismatch, match="another master key"):
        encrypt_files(root, out, key=OTHER_KEY, client=client)
    with pytest.raises(ManifestMismatch, match="cipher"):
        encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="chacha20-poly1305")
    with pytest.raises(ManifestMismatch, match="another master key"):
        decrypt_files(out, out.parent / "never-written", key=OTHER_KEY, client=client)
    with pytest.raises(ValueError, match="power of two"):
        encrypt_files(root, out, key=MASTER_KEY, client=client, chunk_size=5000)
    assert _stamps(out) == before
    assert not (out.parent / "never-written").exists()


def test_sealed_output_opens_with_the_cli_and_the_derived_key(cli, dataset, sealed, tmp_path):
    root, contents = dataset
    out, _ = sealed
    for name in ("large/part-1.bin", "small/données/été.bin"):
        key_file = tmp_path / "file.key"
        key_file.write_bytes(derive_file_key(MASTER_KEY, name).key)
        subprocess.run([cli, "open", "-kfile", key_file, "-in", out / f"{name}.wcs", "-out", tmp_path / "plain"],
                       check=True)
        assert (tmp_path / "plain").read_bytes() == contents[name]


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("small")
    return root, _write_files(root, {f"d{i % 3}/f{i}.bin": 1000 * i for i in range(40)}, "small dataset")


def test_plain_cipher_round_trip_interop_and_unique_ivs(client, cli, small_dataset, tmp_path):
    root, contents = small_dataset
    first, second = tmp_path / "first", tmp_path / "second"
    assert encrypt_files(root, first, key=MASTER_KEY, client=client, cipher="aes-256-ctr").ok
    assert encrypt_files(root, second, key=MASTER_KEY, client=client, cipher="aes-256-ctr").ok
    manifests = [read_manifest(folder / MANIFEST_NAME) for folder in (first, second)]
    assert manifests[0]["job_id"] != manifests[1]["job_id"]
    # Unique within a job and across the two jobs, which encrypted the same paths.
    ivs = [entry["iv"] for manifest in manifests for entry in manifest["files"].values()]
    assert len(set(ivs)) == len(ivs) == 2 * len(contents)
    assert {e["authentication"] for e in manifests[0]["files"].values()} == {"none"}

    name = "d1/f7.bin"
    derived = derive_file_key(MASTER_KEY, name, cipher="aes-256-ctr", job_id=bytes.fromhex(manifests[0]["job_id"]))
    assert manifests[0]["files"][name]["iv"] == derived.iv.hex()
    subprocess.run([cli, "enc", "-d", "-aes-256-ctr", "-K", derived.key.hex(), "-iv", derived.iv.hex(),
                    "-in", first / f"{name}.enc", "-out", tmp_path / "plain"], check=True)
    assert (tmp_path / "plain").read_bytes() == contents[name]

    restored = tmp_path / "restored"
    assert decrypt_files(first, restored, key=MASTER_KEY, client=client).ok
    for name, data in contents.items():
        assert (restored / name).read_bytes() == data


def test_plain_cipher_refuses_to_reencrypt_a_changed_input(client, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    _write_files(root, {"a.bin": 5000, "b.bin": 6000}, "changed input")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="chacha20").ok
    (out / "a.bin.enc").unlink()
    (root / "a.bin").write_bytes(b"new contents under the same path")

    report = encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="chacha20")
    assert list(report.failed) == ["a.bin"] and "nonce is spent" in report.failed["a.bin"]
    assert (report.processed, report.skipped) == (0, 1)
    assert not (out / "a.bin.enc").exists()
    assert read_manifest(out / MANIFEST_NAME)["files"]["a.bin"]["status"] == "failed"


# ----------------------------------------------------------------------------
# Failures
# ----------------------------------------------------------------------------


def test_corrupt_inputs_are_reported_and_the_others_decrypt(client, dataset, sealed, tmp_path):
    _, contents = dataset
    out, _ = sealed
    damaged = tmp_path / "damaged"
    shutil.copytree(out / "small" / "3", damaged / "small" / "3")
    shutil.copy(out / MANIFEST_NAME, damaged / MANIFEST_NAME)
    names = sorted(p.relative_to(damaged).as_posix()[: -len(".wcs")] for p in damaged.rglob("*.wcs"))
    flipped, truncated, bogus = names[0], names[1], "small/3/not-sealed.bin"
    data = bytearray((damaged / f"{flipped}.wcs").read_bytes())
    data[HEADER + 5] ^= 1
    (damaged / f"{flipped}.wcs").write_bytes(data)
    with open(damaged / f"{truncated}.wcs", "r+b") as file:
        file.truncate(file.seek(0, os.SEEK_END) - TAG - 1)
    (damaged / f"{bogus}.wcs").write_bytes(b"not a sealed file at all" * 10)

    restored = tmp_path / "restored"
    report = decrypt_files(damaged, restored, key=MASTER_KEY, client=client)
    assert sorted(report.failed) == sorted(f"{name}.wcs" for name in (flipped, truncated, bogus))
    assert "InvalidTag" in report.failed[f"{flipped}.wcs"]
    assert "FormatError" in report.failed[f"{bogus}.wcs"]
    assert report.processed == len(names) + 1
    entries = read_manifest(restored / MANIFEST_NAME)["files"]
    for name in (flipped, truncated, bogus):
        assert entries[f"{name}.wcs"]["status"] == "failed"
        assert entries[f"{name}.wcs"]["authentication"] == "failed"
    good = [name for name in names if name not in (flipped, truncated)]
    assert _tree(restored) == sorted([*good, MANIFEST_NAME])
    for name in good:
        assert (restored / name).read_bytes() == contents[name]


def _slow_down_sealing(seconds: float) -> None:
    """Run on each worker: sealing pauses in its first progress report, which
    the library makes once it has begun writing (after its first window of
    chunks), so that a worker can be killed while its output is part-written."""
    original = warpcrypt.seal_file

    def slow_seal_file(*args, **kwargs):
        reports = []

        def pause_once(done: int, total: int) -> None:
            if not reports:
                time.sleep(seconds)
            reports.append(done)

        return original(*args, progress=pause_once, **kwargs)

    warpcrypt.seal_file = slow_seal_file


def _wait_for(condition, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    return result


def test_worker_killed_mid_file_leaves_no_partial_output(tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    size, chunk = 24 << 20, 64 << 10
    contents = _write_files(root, {f"f{i}.bin": size for i in range(4)}, "killed worker")
    sealed_size = HEADER + (size // chunk) * (chunk + TAG)
    staging = out / STAGING_NAME

    def part_written() -> list[Path]:
        return [p for p in staging.rglob("*") if p.is_file() and 0 < p.stat().st_size < sealed_size]

    with _cluster() as cluster, distributed.Client(cluster) as client, ThreadPoolExecutor(1) as pool:
        client.run(_slow_down_sealing, 1.0)
        job = pool.submit(encrypt_files, root, out, key=MASTER_KEY, client=client, chunk_size=chunk, threads=1)
        # Both workers hold a part-written output: whichever dies, dies mid-file.
        _wait_for(lambda: len(part_written()) >= 2)
        victim = next(address for address, keys in client.processing().items() if keys)
        os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
        report = job.result(timeout=120)

    assert report.ok and report.processed == len(contents)
    assert _tree(out) == sorted([f"{name}.wcs" for name in contents] + [MANIFEST_NAME])
    assert {e["status"] for e in read_manifest(out / MANIFEST_NAME)["files"].values()} == {"done"}
    for name, data in contents.items():
        warpcrypt.open_file(out / f"{name}.wcs", tmp_path / "plain", key=derive_file_key(MASTER_KEY, name).key)
        assert (tmp_path / "plain").read_bytes() == data


# ----------------------------------------------------------------------------
# Arrays
# ----------------------------------------------------------------------------


def _layout_aad(array: np.ndarray, chunks: tuple[tuple[int, ...], ...]) -> bytes:
    """The associated data docs/dask.md specifies for every chunk."""
    description = json.dumps({"shape": list(array.shape), "chunks": [list(c) for c in chunks],
                              "dtype": array.dtype.str}, separators=(",", ":"))
    return b"warpcrypt-dask v1 array layout\0" + hashlib.sha256(description.encode()).digest()


def _block(chunks: tuple[tuple[int, ...], ...], index: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(sum(c[:i]), sum(c[: i + 1])) for c, i in zip(chunks, index))


@pytest.mark.parametrize("cipher", ["aes-256-gcm", "chacha20-poly1305", "aes-256-ctr"])
def test_array_round_trip_with_a_key_per_chunk(client, cipher):
    plain = np.random.default_rng(7).integers(0, 256, size=(300, 170), dtype=np.uint8)
    array = da.from_array(plain, chunks=(64, 50))
    encrypted = encrypt_array(array, MASTER_KEY, cipher=cipher, chunk_bytes=None)
    assert encrypted.ciphertext.chunks == array.chunks and encrypted.ciphertext.dtype == array.dtype
    ciphertext, tags = dask.compute(encrypted.ciphertext, encrypted.tags)
    assert not np.array_equal(ciphertext, plain)

    # Each chunk is the cipher under its own derived key and nonce, with the
    # array's layout as associated data (AEADs).
    aead = {"aes-256-gcm": warpcrypt.aead.AESGCM, "chacha20-poly1305": warpcrypt.aead.ChaCha20Poly1305}.get(cipher)
    keys = set()
    for index in np.ndindex(*array.numblocks):
        derived = derive_chunk_key(MASTER_KEY, encrypted.array_id, index, cipher=cipher)
        keys.add(derived)
        chunk = np.ascontiguousarray(plain[_block(array.chunks, index)])
        if aead is None:
            assert tags is None
            expected = warpcrypt.encrypt(cipher, derived.key, derived.iv, chunk)
        else:
            sealed = aead(derived.key).encrypt(derived.iv, chunk, _layout_aad(plain, array.chunks))
            expected, tag = sealed[:-16], sealed[-16:]
            assert tags[index].tobytes() == tag
        assert ciphertext[_block(array.chunks, index)].tobytes() == expected
    assert len(keys) == np.prod(array.numblocks)

    stored = EncryptedArray(da.from_array(ciphertext, chunks=array.chunks),
                            None if tags is None else da.from_array(tags), encrypted.array_id, cipher)
    assert np.array_equal(decrypt_array(stored, MASTER_KEY).compute(), plain)


def test_tampered_or_rechunked_aead_arrays_do_not_decrypt(client):
    plain = np.arange(40 * 30, dtype=np.int32).reshape(40, 30)
    encrypted = encrypt_array(da.from_array(plain, chunks=(10, 15)), MASTER_KEY, chunk_bytes=None)
    ciphertext, tags = dask.compute(encrypted.ciphertext, encrypted.tags)

    def decrypt(ciphertext, tags, chunks=(10, 15), array_id=encrypted.array_id):
        stored = EncryptedArray(da.from_array(ciphertext, chunks=chunks), da.from_array(tags), array_id,
                                encrypted.cipher)
        return decrypt_array(stored, MASTER_KEY).compute()

    assert np.array_equal(decrypt(ciphertext, tags), plain)
    flipped = ciphertext.copy()
    flipped[25, 20] ^= 1
    with pytest.raises(warpcrypt.InvalidTag, match=r"chunk \(2, 1\)"):
        decrypt(flipped, tags)
    swapped = ciphertext.copy()
    swapped[:10], swapped[10:20] = ciphertext[10:20], ciphertext[:10]
    with pytest.raises(warpcrypt.InvalidTag):
        decrypt(swapped, tags)
    with pytest.raises(warpcrypt.InvalidTag):
        decrypt(ciphertext, tags, array_id=bytes(16))
    # The same chunk grid with the last row of chunks dropped: the layout changed.
    with pytest.raises(warpcrypt.InvalidTag):
        decrypt(ciphertext[:30], tags[:3])
    with pytest.raises(ValueError, match="needs the tags array"):
        decrypt_array(EncryptedArray(encrypted.ciphertext, None, encrypted.array_id, encrypted.cipher), MASTER_KEY)


def test_array_rechunking_ids_and_refusals(client):
    plain = np.arange(1 << 18, dtype=np.float32).reshape(512, 512)
    array = da.from_array(plain, chunks=(16, 512))
    encrypted = encrypt_array(array, MASTER_KEY, chunk_bytes=256 << 10)
    assert encrypted.ciphertext.chunksize == (128, 512) and encrypted.ciphertext.dtype == np.float32
    assert encrypted.tags.shape == (4, 1, 16)
    again = encrypt_array(array, MASTER_KEY, chunk_bytes=256 << 10)
    assert again.array_id != encrypted.array_id
    assert decrypt_array(encrypted, MASTER_KEY).compute().tobytes() == plain.tobytes()
    with pytest.raises(warpcrypt.InvalidArgument, match="keep a chunk's size"):
        encrypt_array(array, MASTER_KEY, cipher="aes-256-cbc")
    with pytest.raises(TypeError, match="objects"):
        encrypt_array(da.from_array(np.array([b"x"], dtype=object), chunks=1), MASTER_KEY)


# ----------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------


def _warpcrypt_dask(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warpcrypt.dask", *map(str, args)], capture_output=True, text=True)


def test_command_line_encrypt_decrypt_and_derive_key(client, cli, small_dataset, tmp_path):
    root, contents = small_dataset
    key_file = tmp_path / "master.key"
    key_file.write_bytes(MASTER_KEY)
    scheduler = client.scheduler.address
    sealed_dir, restored = tmp_path / "sealed", tmp_path / "restored"

    run = _warpcrypt_dask("encrypt", root, "-o", sealed_dir, "--key-file", key_file, "--scheduler", scheduler,
                          "--chunk-size", "4K", "--json", tmp_path / "report.json")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"encrypt: {len(contents)} files")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["processed"] == len(contents) and report["workers"]
    assert all(w["throughput"] > 0 for w in report["workers"])

    run = _warpcrypt_dask("decrypt", sealed_dir, "-o", restored, "--key-file", key_file, "--scheduler", scheduler)
    assert run.returncode == 0, run.stderr
    assert all((restored / name).read_bytes() == data for name, data in contents.items())

    run = _warpcrypt_dask("derive-key", "d2/f5.bin", "--key-file", key_file, "--out", tmp_path / "f5.key")
    assert run.returncode == 0, run.stderr
    subprocess.run([cli, "open", "-kfile", tmp_path / "f5.key", "-in", sealed_dir / "d2/f5.bin.wcs",
                    "-out", tmp_path / "f5"], check=True)
    assert (tmp_path / "f5").read_bytes() == contents["d2/f5.bin"]

    key_file.write_bytes(OTHER_KEY)
    run = _warpcrypt_dask("decrypt", sealed_dir, "-o", tmp_path / "refused", "--key-file", key_file,
                          "--scheduler", scheduler)
    assert run.returncode == 2 and run.stderr.strip().endswith("was encrypted under another master key")
