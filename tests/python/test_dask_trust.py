"""warpcrypt.dask under the mistakes and attacks of issue 34, item 5: inputs
changed during a job, a second job writing into another job's output folder,
strays and deletions in a sealed folder, the counts of a report, derive-key
with an identifier the manifest lacks, key files that others may read, a
manifest that is not one or whose staging name was edited; and those of issue
48, item 5: reruns that would encrypt new contents of a plain-cipher file
under the IV its old contents had. Object stores are in
tests/python/test_dask_s3.py, a worker killed mid-job in
tests/python/test_dask_deployment.py."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
from pathlib import Path

import pytest

dask = pytest.importorskip("dask", reason="warpcrypt.dask needs the dask extra")
import distributed  # noqa: E402
import fsspec  # noqa: E402

import warpcrypt  # noqa: E402
from dask_support import MASTER_KEY, OTHER_KEY, tree, write_files  # noqa: E402
from warpcrypt.dask import (  # noqa: E402
    MANIFEST_SUFFIX,
    KeyFile,
    ManifestMismatch,
    ManifestNotAuthentic,
    decrypt_files,
    encrypt_files,
    install_key,
    read_manifest,
)
from warpcrypt.dask._manifest import MANIFEST_VERSION  # noqa: E402

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
    assert read_manifest(report.manifest, MASTER_KEY)["files"]["a.bin"]["status"] == "failed"
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
# A plain cipher's IV across reruns (issue 48, item 5)
# ----------------------------------------------------------------------------

PLAIN_CIPHER = "aes-256-ctr"


def _one_key_stream(first: tuple[bytes, bytes], second: tuple[bytes, bytes]) -> bool:
    """Whether two (plaintext, ciphertext) pairs of one length were
    encrypted with one key stream, that is under one key and IV: then
    c1 ^ c2 == p1 ^ p2, which gives whoever holds both ciphertexts the XOR
    of the two plaintexts."""
    (plain_1, cipher_1), (plain_2, cipher_2) = first, second
    assert len(plain_1) == len(plain_2) == len(cipher_1) == len(cipher_2)
    return bytes(a ^ b for a, b in zip(cipher_1, cipher_2)) == bytes(a ^ b for a, b in zip(plain_1, plain_2))


@pytest.mark.parametrize("damage", ["deleted", "cut short"])
def test_a_rerun_never_encrypts_new_contents_under_a_spent_iv(client, tmp_path, damage):
    """An input rewritten in place with its modification time set back
    (cp -p, rsync -t --inplace, touch -d), its output deleted or cut short:
    the rerun encrypts it again, and must not do so under the IV its old
    contents were encrypted under."""
    root, out = tmp_path / "in", tmp_path / "out"
    old = write_files(root, {"a.bin": 5000, "b.bin": 3000}, "spent iv")["a.bin"]
    assert encrypt_files(root, out, key=MASTER_KEY, client=client, cipher=PLAIN_CIPHER).ok
    old_output = (out / "a.bin.enc").read_bytes()
    old_iv = read_manifest(_manifest_path(out), MASTER_KEY)["files"]["a.bin"]["iv"]
    time.sleep(TIMESTAMP_TICK)
    _overwrite_in_place(root / "a.bin", keep_mtime=True)
    new = (root / "a.bin").read_bytes()
    if damage == "deleted":
        (out / "a.bin.enc").unlink()
    else:
        (out / "a.bin.enc").write_bytes(old_output[:100])

    report = encrypt_files(root, out, key=MASTER_KEY, client=client, cipher=PLAIN_CIPHER)
    assert report.ok and (report.processed, report.skipped) == (1, 1), report.summary()
    assert not _one_key_stream((old, old_output), (new, (out / "a.bin.enc").read_bytes()))
    assert read_manifest(report.manifest, MASTER_KEY)["files"]["a.bin"]["iv"] != old_iv
    restored = tmp_path / "restored"
    assert decrypt_files(out, restored, key=MASTER_KEY, client=client).ok
    assert (restored / "a.bin").read_bytes() == new


def test_a_manifest_rolled_back_brings_no_spent_iv_back(client, tmp_path):
    """An older manifest of the same job authenticates (docs/security.md).
    Put back one from before a file was listed, with that file's output
    removed and its contents changed: the rerun takes the file for a new
    one, and must still not encrypt it under the IV it had."""
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"b.bin": 3000}, "rollback, first run")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client, cipher=PLAIN_CIPHER).ok
    before_a = _manifest_path(out).read_bytes()
    old = write_files(root, {"a.bin": 5000}, "rollback, old contents")["a.bin"]
    assert encrypt_files(root, out, key=MASTER_KEY, client=client, cipher=PLAIN_CIPHER).processed == 1
    old_output = (out / "a.bin.enc").read_bytes()
    new = write_files(root, {"a.bin": 5000}, "rollback, new contents")["a.bin"]
    (out / "a.bin.enc").unlink()
    _manifest_path(out).write_bytes(before_a)

    report = encrypt_files(root, out, key=MASTER_KEY, client=client, cipher=PLAIN_CIPHER)
    assert report.ok and report.processed == 1, report.summary()
    assert not _one_key_stream((old, old_output), (new, (out / "a.bin.enc").read_bytes()))


def test_a_store_that_cannot_tell_a_rewrite_brings_no_spent_iv_back(tmp_path):
    """fsspec's memory file system lists neither a modification time nor an
    ETag, as some stores do not: nothing in its listing tells a rewrite of
    the same size from the file the job encrypted. A rerun after such a
    rewrite, the output deleted, must still not reuse the IV."""
    fs = fsspec.filesystem("memory")
    base = f"/warpcrypt-trust-{tmp_path.name}"
    generator = random.Random("a store that cannot tell a rewrite")
    old, new = generator.randbytes(5000), generator.randbytes(5000)
    fs.pipe_file(f"{base}/in/a.bin", old)
    try:
        with install_key(MASTER_KEY, local_only=True) as key:
            def run():
                # In this process, where the memory file system lives.
                return encrypt_files(f"memory://{base}/in", f"memory://{base}/out", key=key, cipher=PLAIN_CIPHER,
                                     compute=False).compute(scheduler="sync")

            assert run().ok
            old_output = fs.cat_file(f"{base}/out/a.bin.enc")
            fs.pipe_file(f"{base}/in/a.bin", new)
            fs.rm_file(f"{base}/out/a.bin.enc")
            report = run()
        assert report.ok and report.processed == 1, report.summary()
        assert not _one_key_stream((old, old_output), (new, fs.cat_file(f"{base}/out/a.bin.enc")))
    finally:
        fs.rm(base, recursive=True)


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
    assert read_manifest(report.manifest, MASTER_KEY)["last_run"]["processed"] == 2


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


def test_derive_key_never_writes_over_the_master_key_or_the_manifest(client, tmp_path, capsys):
    """`derive-key --out` once replaced whatever file it named, the master
    key file included (every job's key lost). It refuses any file it read,
    through a link too, and writes the derived key 0600 over a readable
    file."""
    root, out = tmp_path / "in", tmp_path / "out"
    write_files(root, {"d/a.bin": 3000}, "derive-key out")
    assert encrypt_files(root, out, key=MASTER_KEY, client=client).ok
    key_file = _key_file(tmp_path / "master.key")
    manifest = _manifest_path(out)
    (tmp_path / "key-link").symlink_to(key_file)
    kept = {path: path.read_bytes() for path in (key_file, manifest)}
    for target in (key_file, manifest, tmp_path / "key-link"):
        status, printed, err = _main(capsys, "derive-key", "d/a.bin", "--key-file", key_file, "--manifest", manifest,
                                     "--out", target)
        assert status != 0 and printed == "" and err.count("\n") == 1, err
        assert "a file this command reads" in err, err
    assert {path: path.read_bytes() for path in kept} == kept
    readable = tmp_path / "derived.key"
    readable.write_bytes(b"old")
    readable.chmod(0o644)
    status, _, err = _main(capsys, "derive-key", "d/a.bin", "--key-file", key_file, "--manifest", manifest,
                           "--out", readable)
    assert status == 0, err
    assert len(readable.read_bytes()) == 32 and readable.stat().st_mode & 0o777 == 0o600


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
    # Refused by the MAC now, before the name is looked at.
    with pytest.raises(ManifestNotAuthentic, match="does not authenticate"):
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


# ----------------------------------------------------------------------------
# The manifest is authenticated as a whole (its MAC)
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sealed_job(client, tmp_path_factory):
    """A finished encryption under MASTER_KEY, and another one of the same
    inputs (another job id): each attack edits a copy of the first's
    manifest."""
    base = tmp_path_factory.mktemp("mac")
    root = base / "in"
    write_files(root, {"a.bin": 3000, "sub/b.bin": 5000, "c.bin": 100}, "manifest mac")
    assert encrypt_files(root, base / "out", key=MASTER_KEY, client=client).ok
    assert encrypt_files(root, base / "second", key=MASTER_KEY, client=client).ok
    return root, base / "out", base / "second"


def _copy_job(out: Path, to: Path) -> tuple[Path, dict]:
    """A copy of the output folder and its manifest under `to`; the copied
    manifest's path, and its JSON to edit."""
    shutil.copytree(out, to / "out")
    manifest = _manifest_path(to / "out")
    shutil.copy(_manifest_path(out), manifest)
    return manifest, json.loads(manifest.read_text())


def _edit_entries(content: dict, change: str) -> None:
    if change == "entry removed":
        del content["files"]["sub/b.bin"]
    else:
        content["files"]["planted.bin"] = {**content["files"]["c.bin"], "input": "planted.bin",
                                           "output": "planted.bin.wcs"}


EDITS = {
    "entry removed": lambda content: _edit_entries(content, "entry removed"),
    "entry added": lambda content: _edit_entries(content, "entry added"),
    "job_id": lambda content: content.update(job_id="0" * 32),
    "cipher": lambda content: content.update(cipher="chacha20-poly1305"),
    "suffix": lambda content: content.update(suffix=".wcz"),
    "entry marked failed": lambda content: content["files"]["a.bin"].update(status="failed", error="x"),
    "output folder": lambda content: content.update(output_root=content["output_root"] + "-elsewhere"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_manifest_is_refused_before_anything_is_decrypted(client, sealed_job, tmp_path, capsys, edit):
    _, out, _ = sealed_job
    manifest, content = _copy_job(out, tmp_path)
    EDITS[edit](content)
    manifest.write_text(json.dumps(content, indent=1))
    restored = tmp_path / "restored"
    with pytest.raises(ManifestNotAuthentic, match="does not authenticate") as refused:
        decrypt_files(tmp_path / "out", restored, key=MASTER_KEY, client=client)
    assert str(manifest) in str(refused.value)
    assert not restored.exists() and not _manifest_path(restored).exists()
    with pytest.raises(ManifestNotAuthentic):
        read_manifest(manifest, MASTER_KEY)
    # A rerun of the encryption, and derive-key, refuse it too.
    with pytest.raises(ManifestNotAuthentic):
        encrypt_files(sealed_job[0], tmp_path / "out", key=MASTER_KEY, client=client, manifest=manifest)
    key_file = _key_file(tmp_path / "master.key")
    status, printed, err = _main(capsys, "derive-key", "a.bin", "--key-file", key_file, "--manifest", manifest)
    assert status == 2 and printed == "" and err.count("\n") == 1 and "does not authenticate" in err, err


def test_a_stripped_or_borrowed_mac_is_refused(client, sealed_job, tmp_path):
    _, out, second = sealed_job
    manifest, content = _copy_job(out, tmp_path)
    del content["mac"]
    manifest.write_text(json.dumps(content))
    with pytest.raises(ManifestNotAuthentic, match='no "mac"'):
        decrypt_files(tmp_path / "out", tmp_path / "r1", key=MASTER_KEY, client=client)
    # The MAC of another job's manifest, under the same master key.
    content["mac"] = json.loads(_manifest_path(second).read_text())["mac"]
    manifest.write_text(json.dumps(content))
    with pytest.raises(ManifestNotAuthentic, match="does not authenticate"):
        decrypt_files(tmp_path / "out", tmp_path / "r2", key=MASTER_KEY, client=client)
    # Another job's whole manifest put in place of this one's.
    shutil.copy(_manifest_path(second), manifest)
    report = decrypt_files(tmp_path / "out", tmp_path / "r3", key=MASTER_KEY, client=client)
    # It authenticates as the other job's, whose keys open none of these files.
    assert not report.ok and report.processed == 0 and tree(tmp_path / "r3") == []


def test_a_manifest_of_another_master_key_is_refused(client, sealed_job, tmp_path):
    root, _, _ = sealed_job
    assert encrypt_files(root, tmp_path / "other", key=OTHER_KEY, client=client).ok
    manifest = _manifest_path(tmp_path / "other")
    with pytest.raises(ManifestMismatch, match="another master key"):
        read_manifest(manifest, MASTER_KEY)
    # Its key check replaced by this key's: the MAC, under the other key, fails.
    content = json.loads(manifest.read_text())
    content["key_check"] = read_manifest(_manifest_path(sealed_job[1]), MASTER_KEY)["key_check"]
    manifest.write_text(json.dumps(content))
    with pytest.raises(ManifestNotAuthentic, match="does not authenticate"):
        decrypt_files(tmp_path / "other", tmp_path / "restored", key=MASTER_KEY, client=client)
    assert not (tmp_path / "restored").exists()


def test_a_reformatted_manifest_still_verifies(client, sealed_job, tmp_path):
    root, out, _ = sealed_job
    manifest, content = _copy_job(out, tmp_path)
    # Other indentation, key order reversed: the same content.
    manifest.write_text(json.dumps(dict(reversed(list(content.items()))), indent=4))
    assert read_manifest(manifest, MASTER_KEY)["files"] == content["files"]
    report = decrypt_files(tmp_path / "out", tmp_path / "restored", key=MASTER_KEY, client=client)
    assert report.ok and report.processed == 3
    assert (tmp_path / "restored" / "sub" / "b.bin").read_bytes() == (root / "sub" / "b.bin").read_bytes()


def test_every_save_re_macs_and_the_summary_shows_the_mac(client, sealed_job, tmp_path):
    root, _, _ = sealed_job
    first = encrypt_files(root, tmp_path / "out", key=MASTER_KEY, client=client)
    manifest = _manifest_path(tmp_path / "out")
    assert first.manifest_mac == json.loads(manifest.read_text())["mac"]
    time.sleep(1.1)  # a second later: the rerun's `updated` differs
    report = encrypt_files(root, tmp_path / "out", key=MASTER_KEY, client=client)
    assert report.ok and report.skipped == 3
    saved = read_manifest(manifest, MASTER_KEY)
    assert saved["mac"] == report.manifest_mac != first.manifest_mac
    assert f"MAC {report.manifest_mac}" in report.summary()


def _as_version_2(manifest: Path) -> dict:
    """The manifest as the previous version wrote it: no MAC."""
    content = json.loads(manifest.read_text())
    del content["mac"]
    content["version"] = 2
    manifest.write_text(json.dumps(content, indent=1))
    return content


def test_an_old_manifest_is_refused_unless_trusted_explicitly(client, sealed_job, tmp_path, capsys):
    root, out, _ = sealed_job
    manifest, _ = _copy_job(out, tmp_path)
    _as_version_2(manifest)
    restored = tmp_path / "restored"
    key_file = _key_file(tmp_path / "master.key")
    with pytest.raises(ManifestNotAuthentic, match="version-2 manifest") as refused:
        decrypt_files(tmp_path / "out", restored, key=MASTER_KEY, client=client)
    message = str(refused.value)
    assert str(manifest) in message and "re-encrypt" in message and "trust_unauthenticated_manifest" in message
    with pytest.raises(ManifestNotAuthentic, match="version-2 manifest"):
        encrypt_files(root, tmp_path / "out", key=MASTER_KEY, client=client, manifest=manifest)
    for command in (["decrypt", tmp_path / "out", "-o", restored, "--scheduler", client.scheduler.address],
                    ["derive-key", "a.bin", "--manifest", manifest]):
        status, printed, err = _main(capsys, *command, "--key-file", key_file)
        assert status == 2 and err.count("\n") == 1 and "--trust-unauthenticated-manifest" in err, err
    assert not restored.exists()
    # Explicitly trusted: its files decrypt, and its key check still guards against another key.
    report = decrypt_files(tmp_path / "out", restored, key=MASTER_KEY, client=client,
                           trust_unauthenticated_manifest=True)
    assert report.ok and report.processed == 3
    assert read_manifest(report.manifest, MASTER_KEY)["version"] == MANIFEST_VERSION
    with pytest.raises(ManifestMismatch, match="another master key"):
        decrypt_files(tmp_path / "out", tmp_path / "r2", key=OTHER_KEY, client=client,
                      trust_unauthenticated_manifest=True)
    status, printed, err = _main(capsys, "decrypt", tmp_path / "out", "-o", tmp_path / "r3", "--key-file", key_file,
                                 "--scheduler", client.scheduler.address, "--trust-unauthenticated-manifest")
    assert status == 0 and tree(tmp_path / "r3") == tree(restored), err
    status, printed, err = _main(capsys, "derive-key", "a.bin", "--key-file", key_file, "--manifest", manifest,
                                 "--trust-unauthenticated-manifest")
    assert status == 0 and len(printed.strip()) == 64, err


def test_a_manifest_written_part_way_never_verifies(client, sealed_job, tmp_path):
    """What a crash mid-write could leave if the write were not atomic: a
    prefix of the new contents, or the old contents with some entries
    gone. Neither verifies."""
    _, out, _ = sealed_job
    manifest, content = _copy_job(out, tmp_path)
    text = manifest.read_text()
    manifest.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="not JSON"):
        read_manifest(manifest, MASTER_KEY)
    del content["files"]["c.bin"]
    manifest.write_text(json.dumps(content))
    with pytest.raises(ManifestNotAuthentic):
        read_manifest(manifest, MASTER_KEY)
