"""warpcrypt.dask under the mistakes and attacks of issue 34, item 5: inputs
changed during a job, a second job writing into another job's output folder,
strays and deletions in a sealed folder, the counts of a report, derive-key
with an identifier the manifest lacks, key files that others may read, a
manifest that is not one or whose staging name was edited. Object stores are
in tests/python/test_dask_s3.py, a worker killed mid-job in
tests/python/test_dask_deployment.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

dask = pytest.importorskip("dask", reason="warpcrypt.dask needs the dask extra")
import distributed  # noqa: E402

import warpcrypt  # noqa: E402
from dask_support import MASTER_KEY, OTHER_KEY, tree, write_files  # noqa: E402
from warpcrypt.dask import (  # noqa: E402
    MANIFEST_SUFFIX,
    KeyFile,
    ManifestMismatch,
    decrypt_files,
    encrypt_files,
    install_key,
    read_manifest,
)

# Longer than the tick of the kernel's file timestamps (a jiffy, up to 10 ms),
# so that a write after it shows in the file's times.
TIMESTAMP_TICK = 0.05


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as dask_client:
        yield dask_client


def _manifest_path(out: Path) -> Path:
    return Path(f"{out}{MANIFEST_SUFFIX}")


def _key_file(path: Path, key: bytes = MASTER_KEY, mode: int = 0o600) -> Path:
    path.write_bytes(key)
    path.chmod(mode)
    return path


def _overwrite_in_place(path: Path, keep_mtime: bool) -> None:
    """New bytes of the same length in the same inode; with `keep_mtime`,
    the modification time set back as `cp -p` or `touch -d` would."""
    before = path.stat()
    with open(path, "r+b") as file:
        file.write(bytes(255 - b for b in path.read_bytes()))
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _main(capsys, *args) -> tuple[int, str, str]:
    from warpcrypt.dask._cli import main

    status = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# ----------------------------------------------------------------------------
# Inputs changed during a job
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["new mtime", "mtime set back"])
def test_an_input_overwritten_after_listing_fails_that_file(client, tmp_path, keep_mtime):
    root, out = tmp_path / "in", tmp_path / "out"
    contents = write_files(root, {"a.bin": 5000, "b.bin": 7000}, "changed after listing")
    time.sleep(TIMESTAMP_TICK)
    with install_key(MASTER_KEY, client) as key:
        job = encrypt_files(root, out, key=key, chunk_size=4096, compute=False)
        _overwrite_in_place(root / "a.bin", keep_mtime)
        report = job.compute()
    assert list(report.failed) == ["a.bin"], report.summary()
    assert "changed since the job listed it" in report.failed["a.bin"] and str(root / "a.bin") in report.failed["a.bin"]
    assert report.processed == 1 and tree(out) == ["b.bin.wcs"]
    assert read_manifest(report.manifest)["files"]["a.bin"]["status"] == "failed"
    # The other file went on, and decrypts to what was listed.
    restored = tmp_path / "restored"
    assert decrypt_files(out, restored, key=MASTER_KEY, client=client).ok
    assert (restored / "b.bin").read_bytes() == contents["b.bin"]


def test_an_input_overwritten_while_it_is_read_fails_that_file(client, tmp_path, monkeypatch):
    """The library reads the input while another process rewrites it in
    place, its modification time set back: the worker sees the change in
    the open file's status and commits nothing."""
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 9000}, "changed while read")
    time.sleep(TIMESTAMP_TICK)
    original = warpcrypt.seal_file

    def rewritten_during_the_read(*args, **kwargs):
        _overwrite_in_place(root / "a.bin", keep_mtime=True)
        return original(*args, **kwargs)

    monkeypatch.setattr(warpcrypt, "seal_file", rewritten_during_the_read)
    with install_key(MASTER_KEY, local_only=True) as key:
        # In this process, where the patched function runs.
        report = encrypt_files(root, out, key=key, chunk_size=4096, compute=False).compute(scheduler="sync")
    assert list(report.failed) == ["a.bin"] and "changed while it was read" in report.failed["a.bin"]
    assert tree(out) == []


# ----------------------------------------------------------------------------
# An output folder belongs to one job
# ----------------------------------------------------------------------------


def test_a_second_job_cannot_write_into_another_jobs_folder(client, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 3000, "sub/b.bin": 100}, "one job per folder")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    before = {name: (out / name).read_bytes() for name in tree(out)}
    elsewhere = tmp_path / "second.json"
    for key in (OTHER_KEY, MASTER_KEY):
        with pytest.raises(ManifestMismatch, match="belongs to one job") as refused:
            encrypt_files(root, out, key=key, client=client, manifest=elsewhere)
        assert str(out) in str(refused.value) and str(_manifest_path(out)) in str(refused.value)
    # A manifest continued into another folder is refused too.
    with pytest.raises(ManifestMismatch, match="records the output folder"):
        encrypt_files(root, tmp_path / "out2", key=MASTER_KEY, client=client, manifest=_manifest_path(out))
    assert not elsewhere.exists() and not (tmp_path / "out2").exists()
    assert {name: (out / name).read_bytes() for name in tree(out)} == before


def test_decryption_follows_the_manifest_not_the_folder(client, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    contents = write_files(root, {"a.bin": 3000, "sub/b.bin": 100, "c.bin": 0}, "follow the manifest")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    # Strays: another job's sealed file, under another key, and a file of no job.
    assert encrypt_files(root, tmp_path / "other", key=OTHER_KEY, client=client).ok
    shutil.copy(tmp_path / "other" / "a.bin.wcs", out / "planted.bin.wcs")
    (out / "notes.txt").write_text("not sealed")

    report = decrypt_files(out, tmp_path / "restored", key=MASTER_KEY, client=client)
    assert report.ok, report.summary()
    assert report.strays == ["notes.txt", "planted.bin.wcs"]
    assert "not in the encryption's manifest" in report.summary() and "planted.bin.wcs" in report.summary()
    assert tree(tmp_path / "restored") == sorted(contents)

    # An output the manifest lists, deleted: that file fails, saying so.
    (out / "sub" / "b.bin.wcs").unlink()
    report = decrypt_files(out, tmp_path / "restored-2", key=MASTER_KEY, client=client)
    assert list(report.failed) == ["sub/b.bin.wcs"] and "missing" in report.failed["sub/b.bin.wcs"]
    assert tree(tmp_path / "restored-2") == ["a.bin", "c.bin"]

    # A folder none of whose files the manifest lists: refused, nothing written.
    loose = tmp_path / "loose"
    write_files(loose, {"x.bin.wcs": 10, "y.bin.wcs": 20}, "loose files")
    with pytest.raises(ValueError, match="none of the 2 files"):
        decrypt_files(loose, tmp_path / "never", key=MASTER_KEY, client=client, source_manifest=_manifest_path(out))
    assert not (tmp_path / "never").exists() and not _manifest_path(tmp_path / "never").exists()


# ----------------------------------------------------------------------------
# Counts
# ----------------------------------------------------------------------------


def test_processed_counts_the_files_done_not_the_failed(client, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 3000, "b.bin": 5000, "c.bin": 7000}, "counts")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    damaged = bytearray((out / "b.bin.wcs").read_bytes())
    damaged[60] ^= 1
    (out / "b.bin.wcs").write_bytes(damaged)
    report = decrypt_files(out, tmp_path / "restored", key=MASTER_KEY, client=client)
    assert list(report.failed) == ["b.bin.wcs"]
    assert report.processed == 2 and sum(w.files for w in report.workers) == 2
    assert report.summary().startswith("decrypt: 2 files") and "1 failed" in report.summary().splitlines()[0]
    assert read_manifest(report.manifest)["last_run"]["processed"] == 2


# ----------------------------------------------------------------------------
# derive-key, key files
# ----------------------------------------------------------------------------


def test_derive_key_refuses_an_identifier_not_in_the_manifest(client, tmp_path, capsys):
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"d/a.bin": 3000}, "derive-key")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    key_file = _key_file(tmp_path / "master.key")
    manifest = _manifest_path(out)
    for identifier, expected in (("d/nothing.bin", "d/nothing.bin is not in"),
                                 ("d/a.bin.wcs", "without the suffix: d/a.bin")):
        status, printed, err = _main(capsys, "derive-key", identifier, "--key-file", key_file, "--manifest", manifest)
        assert status == 2 and printed == "", err
        assert err.count("\n") == 1 and expected in err and str(manifest) in err, err
    status, printed, err = _main(capsys, "derive-key", "d/a.bin", "--key-file", key_file, "--manifest", manifest)
    assert status == 0 and len(printed.strip()) == 64, err


def test_key_files_that_others_may_read_are_refused(client, tmp_path, capsys):
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 3000}, "key file mode")
    key_file = _key_file(tmp_path / "master.key", mode=0o644)
    fix = f"chmod 600 {key_file}"
    with pytest.raises(warpcrypt.InvalidKey, match=re.escape(fix)):
        encrypt_files(root, out, key=KeyFile(str(key_file)), client=client)
    for command in (["encrypt", root, "-o", out], ["encrypt", root, "-o", out, "--workers-read-key"],
                    ["derive-key", "a.bin", "--manifest", tmp_path / "any.json"]):
        status, printed, err = _main(capsys, *command, "--key-file", key_file, "--scheduler", client.scheduler.address) \
            if command[0] == "encrypt" else _main(capsys, *command, "--key-file", key_file)
        assert status == 2 and err.count("\n") == 1 and "mode 0644" in err and fix in err, err
    assert not out.exists() and not _manifest_path(out).exists()
    for mode in (0o640, 0o604, 0o620):
        key_file.chmod(mode)
        with pytest.raises(warpcrypt.InvalidKey, match=f"mode 0{mode:o}"):
            KeyFile(str(key_file)).ref()
    key_file.chmod(0o400)
    assert encrypt_files(root, out, key=KeyFile(str(key_file)), client=client).ok


# ----------------------------------------------------------------------------
# The manifest
# ----------------------------------------------------------------------------


def test_a_manifest_that_is_not_json_is_one_error_and_nothing_is_created(client, tmp_path, capsys):
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 3000}, "bad manifest")
    manifest = _manifest_path(out)
    for text in ("not json at all", "[1, 2]", json.dumps({"manifest": "warpcrypt-dask manifest", "version": 2})):
        manifest.write_text(text)
        with pytest.raises(ValueError, match=re.escape(str(manifest))):
            encrypt_files(root, out, key=MASTER_KEY, client=client)
        assert not out.exists()
    key_file = _key_file(tmp_path / "master.key")
    status, printed, err = _main(capsys, "encrypt", root, "-o", out, "--key-file", key_file,
                                 "--scheduler", client.scheduler.address)
    assert status == 2 and err.count("\n") == 1 and str(manifest) in err, err
    assert not out.exists()
    # Another job's manifest named for a new folder: refused, the folder not created.
    other_out = tmp_path / "other"
    assert encrypt_files(root, other_out, key=OTHER_KEY, client=client).ok
    with pytest.raises(ManifestMismatch):
        encrypt_files(root, tmp_path / "new", key=MASTER_KEY, client=client, manifest=_manifest_path(other_out))
    assert not (tmp_path / "new").exists()


def test_an_edited_staging_name_removes_nothing_outside_the_output_folder(client, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 3000}, "staging name")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    manifest = _manifest_path(out)
    content = json.loads(manifest.read_text())
    content["staging"] = "../victim"
    manifest.write_text(json.dumps(content))
    with pytest.raises(ValueError, match="staging"):
        encrypt_files(root, out, key=MASTER_KEY, client=client)
    assert (victim / "keep.txt").read_text() == "precious"


def test_a_link_planted_in_the_output_tree_is_not_followed(client, tmp_path):
    """Someone who may write in the output folder replaces one of its
    folders by a link to a folder of theirs before a rerun: the file that
    would go there fails, and nothing is written through the link."""
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"a.bin": 3000, "sub/b.bin": 100}, "planted link")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    shutil.rmtree(out / "sub")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "sub").symlink_to(elsewhere)
    report = encrypt_files(root, out, key=MASTER_KEY, client=client)
    assert list(report.failed) == ["sub/b.bin"] and "is a link or not a folder" in report.failed["sub/b.bin"]
    assert str(out / "sub") in report.failed["sub/b.bin"]
    assert list(elsewhere.iterdir()) == []
