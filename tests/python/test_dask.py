"""warpcrypt.dask on a Dask LocalCluster of two worker processes: files
encrypted and decrypted across workers, keys bound to the job and derived on
the workers, the manifest beside the tree and reruns, a re-run task that
keeps what it committed, corrupt inputs, interop with the `warpcrypt` CLI,
the lazy forms, dask arrays, what the graph and the reprs show, thread
counts, and the command line. tests/python/test_dask_s3.py covers object
stores, tests/python/test_dask_deployment.py a scheduler and workers started
as commands.

The CLI comes from $WARPCRYPT_CLI, else <repo>/build/warpcrypt, as in
tests/cli; its absence fails the interop tests rather than skipping them.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

dask = pytest.importorskip("dask", reason="warpcrypt.dask needs the dask extra")
import dask.array as da  # noqa: E402
import distributed  # noqa: E402
import numpy as np  # noqa: E402

import warpcrypt  # noqa: E402
import warpcrypt.aead  # noqa: E402
from dask_support import HEADER, MASTER_KEY, OTHER_KEY, TAG, sealed_headers, tree, write_files  # noqa: E402
from warpcrypt import _native  # noqa: E402
from warpcrypt.dask import (  # noqa: E402
    MANIFEST_SUFFIX,
    DerivedKey,
    EncryptedArray,
    JobReport,
    KeyFile,
    ManifestMismatch,
    decrypt_array,
    decrypt_files,
    derive_chunk_key,
    derive_file_key,
    encrypt_array,
    encrypt_files,
    hkdf_sha256,
    install_key,
    read_manifest,
)
from fsspec.implementations.local import LocalFileSystem  # noqa: E402
from warpcrypt.dask._inputs import listed  # noqa: E402
from warpcrypt.dask._keyring import KeyNotHeld  # noqa: E402
from warpcrypt.dask._kdf import new_plain_iv  # noqa: E402
from warpcrypt.dask._manifest import MANIFEST_VERSION, PLAIN, SEALED, manifest_mac  # noqa: E402
from warpcrypt.dask._worker import ENCRYPT, FileTask, Settings, process_batch, resolve_backend  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
SMALL_FILES = 120
LARGE_FILES = 2
LARGE_SIZE = 6 << 20


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


def _manifest_of(tree_root: Path) -> dict:
    return read_manifest(f"{tree_root}{MANIFEST_SUFFIX}", MASTER_KEY)


def _small_file_sizes(count: int) -> dict[str, int]:
    """Names in nested folders, one not ASCII, sizes 0 to 64 KiB, some on
    the sealed format's 4 KiB chunk boundaries, and a file at the root named
    as manifests used to be, which is data like any other."""
    import random

    generator = random.Random("small file sizes")
    sizes = {f"small/{i % 7}/file-{i:03d}.bin": generator.randrange(0, 64 << 10) for i in range(count - 5)}
    sizes.update({"small/empty.bin": 0, "small/one-chunk.bin": 4096, "small/two-chunks.bin": 8192,
                  "small/données/été.bin": 1234, "warpcrypt-manifest.json": 777})
    return sizes


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("dataset") / "raw"
    sizes = _small_file_sizes(SMALL_FILES)
    sizes.update({f"large/part-{i}.bin": LARGE_SIZE + i * 1000 for i in range(LARGE_FILES)})
    return root, write_files(root, sizes, "dataset")


@pytest.fixture(scope="module")
def sealed(client, dataset, tmp_path_factory) -> tuple[Path, JobReport]:
    """The dataset sealed with aes-256-gcm in 4 KiB chunks, once for the
    module; tests that damage it work on a copy."""
    root, _ = dataset
    out = tmp_path_factory.mktemp("sealed") / "sealed"
    report = encrypt_files(root, out, key=MASTER_KEY, client=client, chunk_size=4096)
    return out, report


def _stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {name: ((root / name).stat().st_ino, (root / name).stat().st_mtime_ns) for name in tree(root)}


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


def test_file_keys_bind_the_job_the_path_and_the_cipher():
    job_a, job_b = bytes(16), bytes([1] * 16)
    sealed_keys = {derive_file_key(MASTER_KEY, f"f{i}", job_id=job_a).key for i in range(100)}
    assert len(sealed_keys) == 100
    # The same path in another job: another key, sealed or plain. A file's
    # IV is not derived (a plain cipher's is drawn for each run).
    assert derive_file_key(MASTER_KEY, "f0", job_id=job_b).key not in sealed_keys
    ctr = derive_file_key(MASTER_KEY, "f0", cipher="aes-256-ctr", job_id=job_a)
    assert len(ctr.key) == 32 and ctr.iv is None
    assert derive_file_key(MASTER_KEY, "f0", cipher="aes-256-ctr", job_id=job_b).key != ctr.key
    assert derive_file_key(MASTER_KEY, "f0", cipher="aes-128-ctr", job_id=job_a).key != ctr.key[:16]
    # A sealed file's key is the prefix of the 32-byte derivation, whatever its AEAD.
    assert derive_file_key(MASTER_KEY, "f0", cipher="aes-128-gcm", job_id=job_a).key == \
        derive_file_key(MASTER_KEY, "f0", job_id=job_a).key[:16]
    # The rule docs/dask.md states, computed from its parts.
    assert derive_file_key(MASTER_KEY, "a/b.bin", job_id=job_b).key == hkdf_sha256(
        MASTER_KEY, b"", b"warpcrypt-dask v2 sealed file key\0" + job_b + b"a/b.bin", 32)
    assert derive_file_key(MASTER_KEY, "a/b.bin", cipher="aes-256-ctr", job_id=job_b) == DerivedKey(hkdf_sha256(
        MASTER_KEY, b"", b"warpcrypt-dask v2 plain file key and iv\0" + job_b + b"aes-256-ctr\0a/b.bin", 32), None)


def test_short_keys_ecb_and_jobless_derivations_are_refused():
    with pytest.raises(warpcrypt.InvalidKey, match="at least 16"):
        derive_file_key(b"short", "f", job_id=bytes(16))
    with pytest.raises(warpcrypt.InvalidArgument, match="takes no IV"):
        derive_file_key(MASTER_KEY, "f", cipher="aes-256-ecb", job_id=bytes(16))
    with pytest.raises(warpcrypt.InvalidArgument, match="job_id"):
        derive_file_key(MASTER_KEY, "f", job_id=b"short")


def test_reprs_show_no_key_bytes():
    from warpcrypt.dask._keyring import _KeyPlugin

    derived = derive_chunk_key(MASTER_KEY, bytes(16), (0,), cipher="aes-256-ctr")
    with install_key(MASTER_KEY, local_only=True) as installed:
        plugin = _KeyPlugin(MASTER_KEY, installed.ref.key_id)
        shown = [repr(derived), str(derived), repr(installed), str(installed), repr(installed.ref), repr(plugin),
                 str(plugin)]
    for text in shown:
        for secret in (MASTER_KEY, derived.key):
            assert secret.hex() not in text and repr(secret) not in text and str(list(secret)) not in text
    assert "32 secret bytes" in repr(derived) and derived.iv.hex() in repr(derived)


# ----------------------------------------------------------------------------
# Files: round trips, nonces, manifest, reruns
# ----------------------------------------------------------------------------


def test_progress_counts_bytes_within_a_large_file(tmp_path, monkeypatch, capsys):
    """A job of one large file, one task: the progress line counts the bytes
    its worker reports done, before the file ends. The library reports every
    50 ms, which a test-sized file outruns, so seal_file here reports each
    quarter and waits for the report to reach the client; the worker runs in
    this process (processes=False) for the patch to reach it."""
    import warpcrypt.dask._worker as worker_side

    root = tmp_path / "raw"
    size = 8 << 20
    write_files(root, {"large.bin": size}, "progress")
    seal_file = warpcrypt.seal_file

    def seal_in_quarters(source, target, *, progress, **options):
        for quarter in (1, 2, 3):
            progress(size * quarter // 4, size)
            time.sleep(0.5)
        return seal_file(source, target, **options)

    monkeypatch.setattr(warpcrypt, "seal_file", seal_in_quarters)
    monkeypatch.setattr(worker_side, "PROGRESS_INTERVAL", 0.0)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") \
            as cluster, distributed.Client(cluster) as in_process:
        report = encrypt_files(root, tmp_path / "sealed", key=MASTER_KEY, client=in_process, progress=True)
    assert report.processed == 1 and report.ok
    # One line, rewritten in place: each drawing starts with a carriage return.
    drawn = [line.rstrip() for line in capsys.readouterr().err.split("\r") if line.strip()]
    assert drawn == ["encrypting: 2.0 MiB of 8.0 MiB (25 %), 0 of 1 files",
                     "encrypting: 4.0 MiB of 8.0 MiB (50 %), 0 of 1 files",
                     "encrypting: 6.0 MiB of 8.0 MiB (75 %), 0 of 1 files",
                     "encrypting: 8.0 MiB of 8.0 MiB (100 %), 1 of 1 files"]


def test_sealed_round_trip_restores_the_tree_exactly(client, dataset, sealed, tmp_path):
    root, contents = dataset
    out, report = sealed
    assert report.ok and report.processed == len(contents) and report.skipped == 0
    assert report.bytes == sum(map(len, contents.values()))
    assert sum(w.files for w in report.workers) == len(contents)
    # The output tree holds the outputs alone; the manifest lies beside it.
    assert tree(out) == sorted(f"{name}.wcs" for name in contents)
    assert report.manifest == f"{out}{MANIFEST_SUFFIX}"

    manifest = _manifest_of(out)
    assert manifest["operation"] == "encrypt" and manifest["cipher"] == "aes-256-gcm"
    assert len(bytes.fromhex(manifest["job_id"])) == 16
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
    # The restored tree equals the original, its warpcrypt-manifest.json included.
    assert tree(restored) == tree(root)
    assert subprocess.run(["diff", "-r", root, restored]).returncode == 0
    assert {e["authentication"] for e in _manifest_of(restored)["files"].values()} == {"verified"}


def test_every_sealed_file_has_its_own_salt_and_nonce_prefix(sealed):
    out, _ = sealed
    manifest = _manifest_of(out)
    outputs = [entry["output"] for entry in manifest["files"].values()]
    headers = sealed_headers(out, outputs)
    assert len({salt for salt, _ in headers.values()}) == len({prefix for _, prefix in headers.values()}) == \
        len(outputs)
    for entry in manifest["files"].values():
        assert (entry["salt"], entry["nonce_prefix"]) == headers[entry["output"]]


def test_rerun_is_a_no_op_and_redoes_only_missing_outputs(client, dataset, sealed):
    root, contents = dataset
    out, _ = sealed
    before = _stamps(out)
    files_before = _manifest_of(out)["files"]

    report = encrypt_files(root, out, key=MASTER_KEY, client=client, chunk_size=4096)
    assert report.ok and (report.processed, report.skipped) == (0, len(contents))
    assert _stamps(out) == before
    assert _manifest_of(out)["files"] == files_before

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
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        encrypt_files(root / "missing", out.parent / "never-written", key=MASTER_KEY, client=client)
    assert _stamps(out) == before
    assert not (out.parent / "never-written").exists()
    assert not Path(f"{out.parent / 'never-written'}{MANIFEST_SUFFIX}").exists()


def test_an_output_tree_inside_the_input_tree_is_left_out_of_the_inputs(client, tmp_path):
    root = tmp_path / "data"
    contents = write_files(root, {"a.bin": 3000, "b/c.bin": 40}, "nested output")
    assert encrypt_files(root, root / "sealed", key=MASTER_KEY, client=client).ok
    # The outputs and the manifest beside them lie in the input tree now.
    report = encrypt_files(root, root / "sealed", key=MASTER_KEY, client=client)
    assert (report.processed, report.skipped) == (0, len(contents))
    assert sorted(_manifest_of(root / "sealed")["files"]) == sorted(contents)
    with pytest.raises(ValueError, match="lies in the output folder"):
        encrypt_files(root / "b", root, key=MASTER_KEY, client=client)


def test_a_derived_key_opens_its_file_of_its_job_alone(cli, dataset, sealed, tmp_path):
    root, contents = dataset
    out, _ = sealed
    job_id = bytes.fromhex(_manifest_of(out)["job_id"])
    for name in ("large/part-1.bin", "small/données/été.bin"):
        key_file = tmp_path / "file.key"
        key_file.write_bytes(derive_file_key(MASTER_KEY, name, job_id=job_id).key)
        subprocess.run([cli, "open", "-kfile", key_file, "-in", out / f"{name}.wcs", "-out", tmp_path / "plain"],
                       check=True)
        assert (tmp_path / "plain").read_bytes() == contents[name]
    # The same path under another job's id, and another file: refused.
    for name, job in (("small/empty.bin", bytes(16)), ("small/one-chunk.bin", job_id)):
        (tmp_path / "file.key").write_bytes(derive_file_key(MASTER_KEY, "small/two-chunks.bin" if job == job_id
                                                            else name, job_id=job).key)
        run = subprocess.run([cli, "open", "-kfile", tmp_path / "file.key", "-in", out / f"{name}.wcs",
                              "-out", tmp_path / "refused"], capture_output=True)
        assert run.returncode != 0 and not (tmp_path / "refused").exists()


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("small") / "in"
    return root, write_files(root, {f"d{i % 3}/f{i}.bin": 1000 * i for i in range(40)}, "small dataset")


def test_plain_cipher_round_trip_interop_and_unique_ivs(client, cli, small_dataset, tmp_path, capsys):
    root, contents = small_dataset
    first, second = tmp_path / "first", tmp_path / "second"
    assert encrypt_files(root, first, key=MASTER_KEY, client=client, cipher="aes-256-ctr").ok
    assert encrypt_files(root, second, key=MASTER_KEY, client=client, cipher="aes-256-ctr").ok
    manifests = [_manifest_of(folder) for folder in (first, second)]
    assert manifests[0]["job_id"] != manifests[1]["job_id"]
    # Unique within a job and across the two jobs, which encrypted the same paths.
    ivs = [entry["iv"] for manifest in manifests for entry in manifest["files"].values()]
    assert len(set(ivs)) == len(ivs) == 2 * len(contents)
    assert {e["authentication"] for e in manifests[0]["files"].values()} == {"none"}

    # derive-key prints the derived key and the IV the manifest records.
    name = "d1/f7.bin"
    key_file = tmp_path / "master.key"
    key_file.write_bytes(MASTER_KEY)
    key_file.chmod(0o600)
    status, printed, err = _main(capsys, "derive-key", name, "--key-file", key_file,
                                 "--manifest", f"{first}{MANIFEST_SUFFIX}")
    assert status == 0, err
    key = derive_file_key(MASTER_KEY, name, cipher="aes-256-ctr", job_id=bytes.fromhex(manifests[0]["job_id"])).key
    assert printed.split() == ["-K", key.hex(), "-iv", manifests[0]["files"][name]["iv"]]
    subprocess.run([cli, "enc", "-d", "-aes-256-ctr", *printed.split(), "-in", first / f"{name}.enc",
                    "-out", tmp_path / "plain"], check=True)
    assert (tmp_path / "plain").read_bytes() == contents[name]

    restored = tmp_path / "restored"
    assert decrypt_files(first, restored, key=MASTER_KEY, client=client).ok
    assert subprocess.run(["diff", "-r", root, restored]).returncode == 0


def test_plain_cipher_reencrypts_a_changed_input_under_a_fresh_iv(client, tmp_path):
    """As with sealed files, a rerun encrypts a changed input again; its key
    is the job's for that path, its IV one drawn for this run."""
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 5000, "b.bin": 6000}, "changed input")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="chacha20").ok
    before = _manifest_of(out)["files"]
    (root / "a.bin").write_bytes(b"new contents under the same path")

    report = encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="chacha20")
    assert report.ok and (report.processed, report.skipped) == (1, 1)
    after = _manifest_of(out)["files"]
    assert after["a.bin"]["status"] == "done" and after["a.bin"]["iv"] != before["a.bin"]["iv"]
    assert after["b.bin"] == before["b.bin"]
    assert decrypt_files(out, tmp_path / "restored", key=MASTER_KEY, client=client).ok
    assert (tmp_path / "restored" / "a.bin").read_bytes() == b"new contents under the same path"


def test_a_version_3_plain_job_decrypts_and_its_rerun_saves_version_4(client, tmp_path):
    """Up to version 3 a plain-cipher file's IV came from its key's
    derivation, after the key. Such a job, written here as version 3 wrote
    it, decrypts (its keys are those derived now, its IVs those its entries
    record), and a rerun that encrypts a file again, under a drawn IV, saves
    the manifest as version 4, which a reader of version 3 refuses."""
    root, out = tmp_path / "in", tmp_path / "out"
    contents = write_files(root, {"a.bin": 5000, "b.bin": 3000}, "version 3")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="aes-256-ctr").ok
    manifest = Path(f"{out}{MANIFEST_SUFFIX}")
    content = json.loads(manifest.read_text())
    job_id = bytes.fromhex(content["job_id"])
    for name, entry in content["files"].items():
        material = hkdf_sha256(MASTER_KEY, b"", b"warpcrypt-dask v2 plain file key and iv\0" + job_id
                               + b"aes-256-ctr\0" + name.encode(), 48)
        warpcrypt.encrypt_file("aes-256-ctr", material[:32], material[32:], root / name, out / entry["output"])
        entry["iv"] = material[32:].hex()
    content["version"] = 3
    content["mac"] = manifest_mac(content, MASTER_KEY)
    manifest.write_text(json.dumps(content))
    assert decrypt_files(out, tmp_path / "restored", key=MASTER_KEY, client=client).ok
    assert subprocess.run(["diff", "-r", root, tmp_path / "restored"]).returncode == 0

    (out / "a.bin.enc").unlink()
    report = encrypt_files(root, out, key=MASTER_KEY, client=client, cipher="aes-256-ctr")
    assert report.ok and (report.processed, report.skipped) == (1, 1)
    rerun = _manifest_of(out)
    assert rerun["version"] == MANIFEST_VERSION > 3
    assert rerun["files"]["a.bin"]["iv"] != content["files"]["a.bin"]["iv"]
    assert rerun["files"]["b.bin"]["iv"] == content["files"]["b.bin"]["iv"]
    assert decrypt_files(out, tmp_path / "restored-2", key=MASTER_KEY, client=client).ok
    assert {name: (tmp_path / "restored-2" / name).read_bytes() for name in contents} == contents


@pytest.mark.parametrize("data_format, cipher, fields", [
    (SEALED, "aes-256-gcm", ("salt", "nonce_prefix", "aead")),
    (PLAIN, "aes-256-ctr", ("iv",)),
])
def test_a_task_run_again_keeps_what_it_committed(tmp_path, data_format, cipher, fields):
    """Dask runs a task again when the worker holding its result dies before
    the client has it: the second run must not encrypt the file anew, and
    records what the first wrote (a sealed file's header, the IV the run
    drew for a plain-cipher file)."""
    root, out = tmp_path / "in", tmp_path / "out"
    contents = write_files(root, {"a.bin": 10000, "b.bin": 0}, "run again")
    with install_key(MASTER_KEY, local_only=True) as installed:
        settings = Settings(ENCRYPT, data_format, cipher, 4096, "cpu", 1, bytes(16), installed.ref, "file", "file",
                            str(out / ".staging"), "run")
        batch = [FileTask(name, name, str(root / name), str(out / f"{name}.out"), len(data),
                          listed(LocalFileSystem().info(str(root / name))).stamp, None,
                          new_plain_iv(cipher) if data_format == PLAIN else None)
                 for name, data in contents.items()]
        first = process_batch(settings, batch)
        stamps = _stamps(out)
        again = process_batch(settings, batch)
    assert _stamps(out) == stamps
    for name in contents:
        assert again[name]["reused"] and not first[name].get("reused")
        for field in ("status", "output_size", "authentication", *fields):
            assert again[name][field] == first[name][field], field


def test_futures_are_released_and_nothing_keyed_stays_with_the_scheduler(client, small_dataset, tmp_path):
    from secret_search import live_objects_holding, masked

    root, contents = small_dataset
    report = encrypt_files(root, tmp_path / "out", key=MASTER_KEY, client=client)
    assert report.ok
    job_id = bytes.fromhex(_manifest_of(tmp_path / "out")["job_id"])
    # The client releases each future as its result is recorded; the
    # scheduler forgets the task once that message arrives.
    deadline = time.monotonic() + 10
    while (left := client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks
                                                                   if "warpcrypt" in str(k)])) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == []
    assert client.run_on_scheduler(lambda dask_scheduler: [name for name in dask_scheduler.worker_plugins
                                                           if "warpcrypt" in name]) == []
    # (This LocalCluster's scheduler shares the test's process, which holds
    # the keys; test_dask_deployment.py searches a scheduler of its own.)
    secrets = [MASTER_KEY] + [derive_file_key(MASTER_KEY, name, job_id=job_id).key for name in contents]
    hidden, mask = masked(secrets)
    assert all(found == [] for found in client.run(live_objects_holding, hidden, mask).values())


# ----------------------------------------------------------------------------
# Failures
# ----------------------------------------------------------------------------


def test_corrupt_inputs_are_reported_and_the_others_decrypt(client, dataset, sealed, tmp_path):
    _, contents = dataset
    out, _ = sealed
    damaged = tmp_path / "damaged"
    shutil.copytree(out / "small" / "3", damaged / "small" / "3")
    names = sorted(p.relative_to(damaged).as_posix()[: -len(".wcs")] for p in damaged.rglob("*.wcs"))
    flipped, truncated, bogus = names[0], names[1], names[2]
    data = bytearray((damaged / f"{flipped}.wcs").read_bytes())
    data[HEADER + 5] ^= 1
    (damaged / f"{flipped}.wcs").write_bytes(data)
    with open(damaged / f"{truncated}.wcs", "r+b") as file:
        file.truncate(file.seek(0, os.SEEK_END) - TAG - 1)
    (damaged / f"{bogus}.wcs").write_bytes(b"not a sealed file at all" * 10)

    restored = tmp_path / "restored"
    # A glob: a part of the job's folder, whose other outputs are not missing.
    report = decrypt_files(f"{damaged}/**", restored, key=MASTER_KEY, client=client, root=damaged,
                           source_manifest=f"{out}{MANIFEST_SUFFIX}")
    assert sorted(report.failed) == sorted(f"{name}.wcs" for name in (flipped, truncated, bogus))
    assert "InvalidTag" in report.failed[f"{flipped}.wcs"] and str(damaged / f"{flipped}.wcs") in \
        report.failed[f"{flipped}.wcs"]
    # Its key comes from a key file, never a passphrase: the sentence says so.
    assert "wrong key, or the file was modified" in report.failed[f"{flipped}.wcs"]
    assert "passphrase" not in report.failed[f"{flipped}.wcs"]
    assert "FormatError" in report.failed[f"{bogus}.wcs"]
    assert report.processed == len(names) - 3
    entries = _manifest_of(restored)["files"]
    for name in (flipped, truncated, bogus):
        assert entries[f"{name}.wcs"]["status"] == "failed"
        assert entries[f"{name}.wcs"]["authentication"] == "failed"
    good = [name for name in names if name not in (flipped, truncated, bogus)]
    assert tree(restored) == sorted(good)
    for name in good:
        assert (restored / name).read_bytes() == contents[name]

    # A file put at a failing file's target meanwhile stays as it was.
    (restored / flipped).write_bytes(b"precious")
    report = decrypt_files(f"{damaged}/**", restored, key=MASTER_KEY, client=client, root=damaged,
                           source_manifest=f"{out}{MANIFEST_SUFFIX}")
    assert sorted(report.failed) == sorted(f"{name}.wcs" for name in (flipped, truncated, bogus))
    assert (restored / flipped).read_bytes() == b"precious"


def test_decrypting_without_the_encryption_manifest_is_refused(client, sealed, tmp_path):
    out, _ = sealed
    shutil.copytree(out / "small" / "0", tmp_path / "moved")
    with pytest.raises(FileNotFoundError, match="no encryption manifest"):
        decrypt_files(tmp_path / "moved", tmp_path / "restored", key=MASTER_KEY, client=client)
    assert not (tmp_path / "restored").exists()


# ----------------------------------------------------------------------------
# The lazy form
# ----------------------------------------------------------------------------


def test_lazy_jobs_go_into_a_larger_graph_and_carry_no_key(client, small_dataset, tmp_path):
    root, contents = small_dataset
    with pytest.raises(TypeError, match="a key the workers hold"):
        encrypt_files(root, tmp_path / "never", key=MASTER_KEY, client=client, compute=False)
    assert not (tmp_path / "never").exists()

    with install_key(MASTER_KEY, client) as key:
        job = encrypt_files(root, tmp_path / "sealed", key=key, compute=False)
        job_id = bytes.fromhex(_manifest_of(tmp_path / "sealed")["job_id"])
        graph = pickle.dumps(dict(job.__dask_graph__()))
        secrets = [MASTER_KEY] + [derive_file_key(MASTER_KEY, name, job_id=job_id).key for name in contents]
        assert not any(secret in graph for secret in secrets)
        assert not any(secret.hex().encode() in graph for secret in secrets)
        assert tree(tmp_path / "sealed") == []  # planned, not run

        # Both jobs in one compute: the decryption reads what the encryption wrote.
        processed = dask.delayed(lambda report: report.processed)(job)
        report, count = dask.compute(job, processed)
        assert report.ok and report.processed == count == len(contents)
        restored = decrypt_files(tmp_path / "sealed", tmp_path / "restored", key=key, compute=False).compute()
    assert restored.ok
    assert subprocess.run(["diff", "-r", root, tmp_path / "restored"]).returncode == 0


def test_key_files_and_workers_without_the_key(client, small_dataset, tmp_path, monkeypatch):
    root, _ = small_dataset
    key_file = tmp_path / "master.key"
    key_file.write_bytes(MASTER_KEY)
    key_file.chmod(0o600)
    # A KeyFile: each worker reads it itself; the key reaches no scheduler.
    report = encrypt_files(root, tmp_path / "sealed", key=KeyFile(str(key_file)), compute=False).compute()
    assert report.ok
    # A relative one is the client's: the workers are sent it made absolute.
    monkeypatch.chdir(tmp_path)
    assert KeyFile("master.key").ref().file == str(key_file)
    assert decrypt_files(tmp_path / "sealed", tmp_path / "restored", key=KeyFile(str(key_file))).ok
    # A key held by the client's process alone: the workers say what to do.
    with install_key(OTHER_KEY, local_only=True) as here_only:
        job = encrypt_files(root, tmp_path / "other", key=here_only, compute=False)
        with pytest.raises(KeyNotHeld, match="install_key"):
            job.compute()


# ----------------------------------------------------------------------------
# Arrays
# ----------------------------------------------------------------------------


def _layout_aad(array: np.ndarray, chunks: tuple[tuple[int, ...], ...]) -> bytes:
    """The associated data docs/dask.md specifies for every chunk."""
    import hashlib

    description = json.dumps({"shape": list(array.shape), "chunks": [list(c) for c in chunks],
                              "dtype": array.dtype.str}, separators=(",", ":"))
    return b"warpcrypt-dask v1 array layout\0" + hashlib.sha256(description.encode()).digest()


def _block(chunks: tuple[tuple[int, ...], ...], index: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(sum(c[:i]), sum(c[: i + 1])) for c, i in zip(chunks, index))


@pytest.fixture(scope="module")
def cluster_key(client):
    with install_key(MASTER_KEY, client) as key:
        yield key


@pytest.mark.parametrize("cipher", ["aes-256-gcm", "chacha20-poly1305", "aes-256-ctr"])
def test_array_round_trip_with_a_key_per_chunk(cluster_key, cipher):
    plain = np.random.default_rng(7).integers(0, 256, size=(300, 170), dtype=np.uint8)
    array = da.from_array(plain, chunks=(64, 50))
    encrypted = encrypt_array(array, cluster_key, cipher=cipher, chunk_bytes=None)
    assert encrypted.ciphertext.chunks == array.chunks and encrypted.ciphertext.dtype == array.dtype
    graph = pickle.dumps(dict(encrypted.ciphertext.__dask_graph__()))
    ciphertext, tags = dask.compute(encrypted.ciphertext, encrypted.tags)
    assert not np.array_equal(ciphertext, plain)

    # Each chunk is the cipher under its own derived key and nonce, with the
    # array's layout as associated data (AEADs); no key is in the graph.
    aead = {"aes-256-gcm": warpcrypt.aead.AESGCM, "chacha20-poly1305": warpcrypt.aead.ChaCha20Poly1305}.get(cipher)
    keys = set()
    for index in np.ndindex(*array.numblocks):
        derived = derive_chunk_key(MASTER_KEY, encrypted.array_id, index, cipher=cipher)
        assert derived.key not in graph and MASTER_KEY not in graph
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
    assert np.array_equal(decrypt_array(stored, cluster_key).compute(), plain)


def test_tampered_or_rechunked_aead_arrays_do_not_decrypt(cluster_key):
    plain = np.arange(40 * 30, dtype=np.int32).reshape(40, 30)
    encrypted = encrypt_array(da.from_array(plain, chunks=(10, 15)), cluster_key, chunk_bytes=None)
    ciphertext, tags = dask.compute(encrypted.ciphertext, encrypted.tags)

    def decrypt(ciphertext, tags, chunks=(10, 15), array_id=encrypted.array_id):
        stored = EncryptedArray(da.from_array(ciphertext, chunks=chunks), da.from_array(tags), array_id,
                                encrypted.cipher)
        return decrypt_array(stored, cluster_key).compute()

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
        decrypt_array(EncryptedArray(encrypted.ciphertext, None, encrypted.array_id, encrypted.cipher), cluster_key)


def test_array_rechunking_ids_and_refusals(cluster_key):
    plain = np.arange(1 << 18, dtype=np.float32).reshape(512, 512)
    array = da.from_array(plain, chunks=(16, 512))
    encrypted = encrypt_array(array, cluster_key, chunk_bytes=256 << 10)
    assert encrypted.ciphertext.chunksize == (128, 512) and encrypted.ciphertext.dtype == np.float32
    assert encrypted.tags.shape == (4, 1, 16)
    again = encrypt_array(array, cluster_key, chunk_bytes=256 << 10)
    assert again.array_id != encrypted.array_id
    assert decrypt_array(encrypted, cluster_key).compute().tobytes() == plain.tobytes()
    with pytest.raises(warpcrypt.InvalidArgument, match="keep a chunk's size"):
        encrypt_array(array, cluster_key, cipher="aes-256-cbc")
    with pytest.raises(TypeError, match="objects"):
        encrypt_array(da.from_array(np.array([b"x"], dtype=object), chunks=1), cluster_key)
    with pytest.raises(TypeError, match="a key the workers hold"):
        encrypt_array(array, MASTER_KEY)


def test_cupy_chunks_are_encrypted_on_their_device(require_device):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    plain = cupy.arange(1 << 16, dtype=cupy.uint32).reshape(256, 256)
    array = da.from_array(plain, chunks=(64, 256), asarray=False)
    with install_key(MASTER_KEY, local_only=True) as key, dask.config.set(scheduler="threads"):
        encrypted = encrypt_array(array, key, chunk_bytes=None)
        ciphertext, tags = dask.compute(encrypted.ciphertext, encrypted.tags)
        assert isinstance(ciphertext, cupy.ndarray) and isinstance(tags, cupy.ndarray)
        derived = derive_chunk_key(MASTER_KEY, encrypted.array_id, (1, 0))
        expected = warpcrypt.aead.AESGCM(derived.key).encrypt(
            derived.iv, cupy.asnumpy(plain[64:128]), _layout_aad(cupy.asnumpy(plain), array.chunks))
        assert cupy.asnumpy(ciphertext[64:128]).tobytes() + cupy.asnumpy(tags[1, 0]).tobytes() == expected
        assert bool((decrypt_array(encrypted, key).compute() == plain).all())


# ----------------------------------------------------------------------------
# Thread counts
# ----------------------------------------------------------------------------


def _taskset() -> str:
    path = shutil.which("taskset")
    if path is None:
        pytest.skip("taskset (util-linux) is not installed")
    return path


@pytest.mark.parametrize("cipher, data", [("aes-256-gcm", "stream"), ("aes-256-ctr", "stream"),
                                          ("chacha20", "pageable"), ("aes-256-gcm", "pageable")])
def test_auto_runs_where_the_librarys_plan_says(cipher, data):
    """A task under auto runs the backend of the library's plan for its work
    (files stay on the CPU, a GPU or not); a backend asked for is kept."""
    chosen = resolve_backend("auto", cipher, data=data, size=1 << 30, decrypt=False, threads=0)
    assert chosen == warpcrypt.describe_plan(cipher, data=data, size=1 << 30).backend == "cpu"
    assert resolve_backend("hybrid", cipher, data=data, size=1 << 30, decrypt=False, threads=0) == "hybrid"


def test_threads_follow_the_cpu_affinity():
    """Under `taskset -c 0` every core means one: the library's default, and
    the threads it actually starts for a job on every core (threads=0): the
    caller alone, no pool thread (they are named warpcrypt-pool; the CUDA
    driver may start threads of its own)."""
    script = (
        "import os, numpy as np, warpcrypt\n"
        "from warpcrypt import _native\n"
        "def pool_threads():\n"
        "    names = (open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task'))\n"
        "    return sum(name == 'warpcrypt-pool' for name in names)\n"
        "data = np.zeros(64 << 20, np.uint8)\n"
        "warpcrypt.encrypt('aes-256-ctr', bytes(32), bytes(16), data, out=data, backend='cpu', threads=0)\n"
        "confined = pool_threads()\n"
        "warpcrypt.encrypt('aes-256-ctr', bytes(32), bytes(16), data, out=data, backend='cpu', threads=2)\n"
        "print(_native.default_threads(), confined, pool_threads())\n")
    run = subprocess.run([_taskset(), "-c", "0", sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    default, confined, two_lanes = map(int, run.stdout.split())
    assert default == 1 and confined == 0
    assert two_lanes == 1  # the names are right: a second lane is a pool thread
    assert 1 <= _native.default_threads() <= len(os.sched_getaffinity(0))


# ----------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------


def _warpcrypt_dask(*args) -> subprocess.CompletedProcess:
    """The command as a user runs it, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "warpcrypt.dask", *map(str, args)], capture_output=True, text=True)


def _main(capsys, *args) -> tuple[int, str, str]:
    """The command run in this process (which spares a Dask import):
    (status, stdout, stderr)."""
    from warpcrypt.dask._cli import main

    status = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_command_line_encrypt_decrypt_and_derive_key(client, cli, small_dataset, tmp_path, capsys):
    root, contents = small_dataset
    key_file = tmp_path / "master.key"
    key_file.write_bytes(MASTER_KEY)
    key_file.chmod(0o600)
    scheduler = client.scheduler.address
    sealed_dir, restored = tmp_path / "sealed", tmp_path / "restored"

    run = _warpcrypt_dask("encrypt", root, "-o", sealed_dir, "--key-file", key_file, "--scheduler", scheduler,
                          "--chunk-size", "4K", "--json", tmp_path / "report.json")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"encrypt: {len(contents)} files")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["processed"] == len(contents) and report["workers"]
    assert all(w["throughput"] > 0 for w in report["workers"])

    status, out, err = _main(capsys, "decrypt", sealed_dir, "-o", restored, "--key-file", key_file,
                             "--scheduler", scheduler, "--workers-read-key")
    assert status == 0 and out.startswith(f"decrypt: {len(contents)} files"), err
    assert subprocess.run(["diff", "-r", root, restored]).returncode == 0

    manifest = f"{sealed_dir}{MANIFEST_SUFFIX}"
    status, _, err = _main(capsys, "derive-key", "d2/f5.bin", "--key-file", key_file, "--manifest", manifest,
                           "--out", tmp_path / "f5.key")
    assert status == 0, err
    subprocess.run([cli, "open", "-kfile", tmp_path / "f5.key", "-in", sealed_dir / "d2/f5.bin.wcs",
                    "-out", tmp_path / "f5"], check=True)
    assert (tmp_path / "f5").read_bytes() == contents["d2/f5.bin"]


def test_command_line_finds_the_scheduler_through_a_scheduler_file(client, small_dataset, tmp_path, capsys):
    root, contents = small_dataset
    key_file = tmp_path / "master.key"
    key_file.write_bytes(MASTER_KEY)
    key_file.chmod(0o600)
    # Of what `dask scheduler --scheduler-file` writes, the field a client reads.
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text(json.dumps({"address": client.scheduler.address}))
    status, out, err = _main(capsys, "encrypt", root, "-o", tmp_path / "sealed", "--key-file", key_file,
                             "--scheduler-file", scheduler_file)
    assert status == 0 and out.startswith(f"encrypt: {len(contents)} files"), err
    # The cluster's workers did the job: the command started no cluster of its own.
    workers = set(client.scheduler_info()["workers"])
    assert {entry["worker"] for entry in _manifest_of(tmp_path / "sealed")["files"].values()} <= workers


@pytest.mark.parametrize("case", ["wrong key", "missing input", "usage", "tls without its settings",
                                  "missing scheduler file", "two schedulers"])
def test_command_line_failures_are_one_line_with_exit_status_2(client, small_dataset, tmp_path, capsys, case):
    root, _ = small_dataset
    key_file = tmp_path / "master.key"
    key_file.write_bytes(MASTER_KEY)
    key_file.chmod(0o600)
    scheduler = client.scheduler.address
    sealed_dir = tmp_path / "sealed"
    if case == "wrong key":
        assert encrypt_files(root, sealed_dir, key=MASTER_KEY, client=client).ok
        key_file.write_bytes(OTHER_KEY)
        args, expected = ["decrypt", sealed_dir, "-o", tmp_path / "r", "--key-file", key_file,
                          "--scheduler", scheduler], "under another master key"
    elif case == "missing input":
        args, expected = ["encrypt", root / "nothing", "-o", tmp_path / "r", "--key-file", key_file,
                          "--scheduler", scheduler], "no such file or folder"
    elif case == "usage":
        args, expected = ["encrypt", root, "--key-file", key_file], "the following arguments are required: -o/--out"
    elif case == "tls without its settings":
        # A tls:// scheduler, but no certificates in Dask's configuration.
        args, expected = ["encrypt", root, "-o", tmp_path / "r", "--key-file", key_file,
                          "--scheduler", scheduler.replace("tcp://", "tls://")], "TLS expects"
    elif case == "missing scheduler file":
        # Dask's client would wait for the file for ever.
        args, expected = ["encrypt", root, "-o", tmp_path / "r", "--key-file", key_file,
                          "--scheduler-file", tmp_path / "scheduler.json"], "no scheduler file"
    else:
        args, expected = ["encrypt", root, "-o", tmp_path / "r", "--key-file", key_file, "--scheduler", scheduler,
                          "--scheduler-file", tmp_path / "scheduler.json"], "not allowed with argument --scheduler"
    try:
        status, out, err = _main(capsys, *args)
    except SystemExit as exit_:  # argparse's way out
        status, out, err = exit_.code, *capsys.readouterr()
    assert status == 2 and out == "", err
    assert err.count("\n") == 1 and err.startswith("warpcrypt-dask: error: ") and expected in err, err
    assert not (tmp_path / "r").exists() and not Path(f"{tmp_path / 'r'}{MANIFEST_SUFFIX}").exists()


def test_command_line_without_dask_says_how_to_install_it(small_dataset, tmp_path):
    root, _ = small_dataset
    # Dask blocked from importing, as where the extra is not installed.
    script = ("import sys; sys.modules.update(dask=None, distributed=None)\n"
              "from warpcrypt.dask._cli import main; sys.exit(main(sys.argv[1:]))")
    run = subprocess.run([sys.executable, "-c", script, "encrypt", root, "-o", tmp_path / "out", "--key-file",
                          tmp_path / "master.key"], capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert run.stderr == ('warpcrypt-dask: error: warpcrypt.dask needs the "dask" extra: '
                          'pip install "warpcrypt[dask]" (dask, distributed, bokeh)\n')
    assert not (tmp_path / "out").exists()
