"""warpcrypt.dask on an object store: a real S3-compatible server (moto's
server mode) on localhost, reached through s3fs by the client and by the
worker processes of a LocalCluster. Inputs and outputs as s3:// URLs, the
manifest beside the output prefix, commits through a temporary key, nothing
left behind on failure, and nothing written for an invalid input."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("dask", reason="warpcrypt.dask needs the dask extra")
pytest.importorskip("s3fs", reason="the S3 tests need s3fs (tests/requirements.txt)")
moto_server = pytest.importorskip("moto.server", reason="the S3 tests need moto[server] (tests/requirements.txt)")

import distributed  # noqa: E402
import fsspec  # noqa: E402

import warpcrypt  # noqa: E402
from dask_support import MASTER_KEY, write_files  # noqa: E402
from warpcrypt.dask import MANIFEST_SUFFIX, decrypt_files, encrypt_files, install_key, read_manifest  # noqa: E402

BUCKET = "warpcrypt-tests"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint():
    """A moto S3 server on localhost, and the environment that points s3fs at
    it: set before the cluster starts, so its worker processes inherit it."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{server._port}"
    settings = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                "FSSPEC_S3_ENDPOINT_URL": endpoint}
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    fsspec.config.conf.setdefault("s3", {})["endpoint_url"] = endpoint
    try:
        yield endpoint
    finally:
        fsspec.config.conf["s3"].pop("endpoint_url", None)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.stop()


@pytest.fixture(scope="module")
def s3(s3_endpoint):
    fs = fsspec.filesystem("s3", skip_instance_cache=True)
    fs.mkdir(BUCKET)
    return fs


@pytest.fixture(scope="module")
def client(s3_endpoint):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as dask_client:
        yield dask_client


@pytest.fixture(scope="module")
def raw(s3, tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    """A small tree, local and uploaded under s3://<bucket>/raw."""
    local = tmp_path_factory.mktemp("raw") / "raw"
    contents = write_files(local, {"a.bin": 70000, "sub/b.bin": 0, "sub/deep/c.bin": 5000,
                                   "warpcrypt-manifest.json": 300}, "s3 data")
    s3.put(f"{local}/", f"{BUCKET}/raw/", recursive=True)
    s3.invalidate_cache()
    return local, contents


def _objects(s3, prefix: str) -> list[str]:
    s3.invalidate_cache()
    return sorted(path[len(prefix) + 1:] for path in s3.find(prefix))


def test_s3_round_trip_and_the_manifest_beside_the_prefix(client, s3, raw, tmp_path):
    local, contents = raw
    report = encrypt_files(f"s3://{BUCKET}/raw", f"s3://{BUCKET}/sealed", key=MASTER_KEY, client=client,
                           chunk_size=4096)
    assert report.ok and report.processed == len(contents)
    assert report.manifest == f"s3://{BUCKET}/sealed{MANIFEST_SUFFIX}"
    # Exactly the outputs under the prefix: no staging keys left, no manifest.
    assert _objects(s3, f"{BUCKET}/sealed") == sorted(f"{name}.wcs" for name in contents)
    manifest = read_manifest(report.manifest, MASTER_KEY)
    for name in contents:
        sealed = tmp_path / "copy.wcs"
        s3.get_file(f"{BUCKET}/sealed/{name}.wcs", str(sealed))
        info = warpcrypt.sealed_info(sealed)
        entry = manifest["files"][name]
        assert (entry["salt"], entry["nonce_prefix"]) == (info.salt.hex(), info.nonce_prefix.hex())
        assert entry["output_size"] == sealed.stat().st_size

    # Back to the object store, and to a local folder, which equals the original.
    assert decrypt_files(f"s3://{BUCKET}/sealed", f"s3://{BUCKET}/restored", key=MASTER_KEY, client=client).ok
    assert _objects(s3, f"{BUCKET}/restored") == sorted(contents)
    assert all(s3.cat_file(f"{BUCKET}/restored/{name}") == data for name, data in contents.items())
    restored = tmp_path / "restored"
    assert decrypt_files(f"s3://{BUCKET}/sealed", restored, key=MASTER_KEY, client=client).ok
    assert subprocess.run(["diff", "-r", local, restored]).returncode == 0
    assert Path(f"{restored}{MANIFEST_SUFFIX}").is_file()

    rerun = encrypt_files(f"s3://{BUCKET}/raw", f"s3://{BUCKET}/sealed", key=MASTER_KEY, client=client,
                          chunk_size=4096)
    assert (rerun.processed, rerun.skipped) == (0, len(contents))


def test_local_files_to_s3_and_a_glob(client, s3, raw):
    local, contents = raw
    report = encrypt_files(f"{local}/sub/**", f"s3://{BUCKET}/from-local", key=MASTER_KEY, client=client)
    assert report.ok and sorted(read_manifest(report.manifest, MASTER_KEY)["files"]) == ["b.bin", "deep/c.bin"]
    assert _objects(s3, f"{BUCKET}/from-local") == ["b.bin.wcs", "deep/c.bin.wcs"]


def test_an_invalid_input_writes_nothing(client, s3, raw):
    for missing in (f"s3://{BUCKET}/no-such-prefix", f"s3://{BUCKET}/raw/no-such-file.bin"):
        with pytest.raises(FileNotFoundError, match="no such file or folder"):
            encrypt_files(missing, f"s3://{BUCKET}/never", key=MASTER_KEY, client=client)
    assert not s3.exists(f"{BUCKET}/never") and not s3.exists(f"{BUCKET}/never{MANIFEST_SUFFIX}")


def test_a_failed_file_leaves_no_object_behind(client, s3, raw):
    """A sealed object that does not authenticate: its decryption fails, and
    neither its output nor a temporary key remains."""
    _, contents = raw
    assert encrypt_files(f"s3://{BUCKET}/raw", f"s3://{BUCKET}/to-damage", key=MASTER_KEY, client=client).ok
    damaged = bytearray(s3.cat_file(f"{BUCKET}/to-damage/a.bin.wcs"))
    damaged[60] ^= 1
    s3.pipe_file(f"{BUCKET}/to-damage/a.bin.wcs", bytes(damaged))
    report = decrypt_files(f"s3://{BUCKET}/to-damage", f"s3://{BUCKET}/partly", key=MASTER_KEY, client=client)
    assert list(report.failed) == ["a.bin.wcs"] and "InvalidTag" in report.failed["a.bin.wcs"]
    assert _objects(s3, f"{BUCKET}/partly") == sorted(name for name in contents if name != "a.bin")


def test_an_object_overwritten_after_listing_fails_that_file(client, s3, tmp_path):
    s3.pipe_file(f"{BUCKET}/changing/a.bin", b"a" * 4000)
    s3.pipe_file(f"{BUCKET}/changing/b.bin", b"b" * 5000)
    with install_key(MASTER_KEY, client) as key:
        job = encrypt_files(f"s3://{BUCKET}/changing", f"s3://{BUCKET}/changing-sealed", key=key, compute=False)
        s3.pipe_file(f"{BUCKET}/changing/a.bin", b"A" * 4000)  # same size, another ETag
        report = job.compute()
    assert list(report.failed) == ["a.bin"], report.summary()
    assert "changed since the job listed it" in report.failed["a.bin"]
    assert f"s3://{BUCKET}/changing/a.bin" in report.failed["a.bin"]
    assert _objects(s3, f"{BUCKET}/changing-sealed") == ["b.bin.wcs"]


def test_a_missing_output_bucket_is_refused_naming_the_url(client, s3, raw, tmp_path):
    with pytest.raises(FileNotFoundError, match="s3://no-such-bucket/out.*bucket no-such-bucket does not exist"):
        encrypt_files(f"s3://{BUCKET}/raw", "s3://no-such-bucket/out", key=MASTER_KEY, client=client,
                      manifest=tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


def test_a_bucket_gone_during_the_job_fails_each_file_naming_it(client, s3, raw, tmp_path):
    s3.mkdir("warpcrypt-gone")
    with install_key(MASTER_KEY, client) as key:
        job = encrypt_files(f"s3://{BUCKET}/raw", "s3://warpcrypt-gone/out", key=key, manifest=tmp_path / "m.json",
                            compute=False)
        s3.rmdir("warpcrypt-gone")
        report = job.compute()
    assert len(report.failed) == len(raw[1]) and report.processed == 0
    for name, reason in report.failed.items():
        assert f"s3://warpcrypt-gone/out/{name}.wcs" in reason and "bucket does not exist" in reason, reason
        assert "worker" in reason and "check the URL" in reason, reason


def test_wrong_credentials_on_the_workers_name_the_url_and_what_to_check(client, s3, raw, tmp_path):
    """moto checks signatures once IAM authentication is on, and knows no
    access key "testing": every request is refused with 403, as with wrong
    credentials. The client plans the job first; the workers then read."""
    from moto.core.authorization import enable_iam_authentication

    with install_key(MASTER_KEY, client) as key:
        job = encrypt_files(f"s3://{BUCKET}/raw", tmp_path / "out", key=key, compute=False)
        with enable_iam_authentication():
            report = job.compute()
    assert len(report.failed) == len(raw[1]) and report.processed == 0
    for name, reason in report.failed.items():
        assert f"s3://{BUCKET}/raw/{name}" in reason and "access denied" in reason, reason
        assert "credentials in the environment of worker tcp://" in reason, reason


def test_workers_without_credentials_say_it_is_their_environment(s3_endpoint, s3, raw, tmp_path):
    """Workers started without the store's credentials (no variables, no
    files, no instance metadata), the client with them."""
    bare = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_CONFIG_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env=bare) as cluster, distributed.Client(cluster) as bare_client:
        report = encrypt_files(f"s3://{BUCKET}/raw", tmp_path / "out", key=MASTER_KEY, client=bare_client)
    assert len(report.failed) == len(raw[1]) and report.processed == 0
    for name, reason in report.failed.items():
        assert f"s3://{BUCKET}/raw/{name}" in reason and "no credentials" in reason, reason
        assert "the environment of worker tcp://" in reason and "AWS_ACCESS_KEY_ID" in reason, reason
