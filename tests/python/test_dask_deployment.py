"""warpcrypt.dask on a deployment as docs/dask.md describes it: a `dask
scheduler` and two `dask worker` processes (with their nannies) started as
commands on localhost. One worker is killed with SIGKILL mid-job; its nanny
starts a new one, which gets the master key from the scheduler's plugin.
Afterwards no committed file was written twice, the manifest matches every
file's header, and neither the scheduler nor the workers hold the key or a
derived key in any live object."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("dask", reason="warpcrypt.dask needs the dask extra")
import cloudpickle  # noqa: E402
import distributed  # noqa: E402

import secret_search  # noqa: E402
import warpcrypt  # noqa: E402
from dask_support import MASTER_KEY, sealed_headers, tree, write_files  # noqa: E402
from secret_search import live_objects_holding, masked  # noqa: E402
from warpcrypt.dask import MANIFEST_SUFFIX, derive_file_key, encrypt_files, read_manifest  # noqa: E402

FILES = 40
SECONDS_PER_FILE = 0.08

# The functions this module runs on the workers and the scheduler travel by
# value: those processes cannot import the tests, and must not, since the
# tests' modules hold the key.
cloudpickle.register_pickle_by_value(sys.modules[__name__])
cloudpickle.register_pickle_by_value(secret_search)


def _start(*module_and_args: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "DASK_LOGGING__DISTRIBUTED": "warning"}
    return subprocess.Popen([sys.executable, "-m", *module_and_args], stdout=subprocess.DEVNULL,
                            stderr=log.open("wb"), env=env, start_new_session=True)


@pytest.fixture
def deployment(tmp_path):
    """(client, processes): a scheduler and two workers, as commands."""
    scheduler_file = tmp_path / "scheduler.json"
    processes = [_start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                        "--scheduler-file", str(scheduler_file), log=tmp_path / "scheduler.log")]
    try:
        for i in range(2):
            processes.append(_start("distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
                                    "--nthreads", "1", "--name", f"worker-{i}", "--no-dashboard",
                                    log=tmp_path / f"worker-{i}.log"))
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.05)
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
            yield client
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        # pytest shows this only for a failed test: what the scheduler and
        # the workers (their nannies included) said, such as a worker's crash.
        for log in sorted(tmp_path.glob("*.log")):
            print(f"---- the end of {log.name}:\n{log.read_text(errors='replace')[-4000:]}")


def _slow_down_sealing(seconds: float) -> None:
    """Run on each worker: sealing a file takes `seconds` longer, so that the
    job is still running when a worker is killed."""
    original = warpcrypt.seal_file

    def slow_seal_file(*args, **kwargs):
        time.sleep(seconds)
        return original(*args, **kwargs)

    warpcrypt.seal_file = slow_seal_file


class _FirstSeen:
    """Watches the output folder and keeps the header of each output as it
    first appears there: a file sealed again would show another salt."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.headers: dict[str, tuple[str, str]] = {}
        self._failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _look(self) -> None:
        if self.root.exists():
            new = [name for name in tree(self.root) if name.endswith(".wcs") and name not in self.headers]
            self.headers.update(sealed_headers(self.root, new))

    def _watch(self) -> None:
        try:
            while not self._stop.wait(0.01):
                self._look()
        except BaseException as failure:  # reported by stop(): a watcher that died saw nothing more
            self._failure = failure

    def stop(self) -> dict[str, tuple[str, str]]:
        self._stop.set()
        self._thread.join()
        if self._failure is not None:
            raise AssertionError("the output watcher stopped early") from self._failure
        self._look()
        return self.headers


def test_a_worker_killed_mid_job_redoes_no_finished_file(deployment, tmp_path):
    client = deployment
    root, out = tmp_path / "in", tmp_path / "out"
    contents = write_files(root, {f"part-{i:02d}.bin": 20000 + i for i in range(FILES)}, "deployment")
    client.run(_slow_down_sealing, SECONDS_PER_FILE)

    watcher = _FirstSeen(out)
    with ThreadPoolExecutor(1) as pool:
        job = pool.submit(encrypt_files, root, out, key=MASTER_KEY, client=client, chunk_size=4096)
        deadline = time.monotonic() + 60
        while len(watcher.headers) < FILES // 4:
            assert time.monotonic() < deadline and not job.done(), job.exception() if job.done() else "timed out"
            time.sleep(0.01)
        victim = next(address for address, keys in client.processing().items() if keys)
        os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
        report = job.result(timeout=120)
    first_seen = watcher.stop()

    assert report.ok and report.processed == len(contents)
    # The killed worker is in the report, marked lost; a file it committed
    # whose task ran again elsewhere stays credited to it (to nobody where
    # it died before its word of the commit left it).
    assert [w.worker for w in report.workers if w.lost] == [victim], report.summary()
    outputs = sorted(f"{name}.wcs" for name in contents)
    assert tree(out) == outputs  # no staging folder or temporary file left
    headers = sealed_headers(out, outputs)
    assert headers == first_seen  # no committed file was sealed a second time
    manifest = read_manifest(f"{out}{MANIFEST_SUFFIX}", MASTER_KEY)
    for name in contents:
        entry = manifest["files"][name]
        assert entry["status"] == "done"
        assert (entry["salt"], entry["nonce_prefix"]) == headers[f"{name}.wcs"]
        if entry.get("reused"):
            assert entry["worker"] in (victim, None), entry
    job_id = bytes.fromhex(manifest["job_id"])
    for name in list(contents)[:3]:
        warpcrypt.open_file(out / f"{name}.wcs", tmp_path / "plain", key=derive_file_key(MASTER_KEY, name,
                                                                                        job_id=job_id).key)
        assert (tmp_path / "plain").read_bytes() == contents[name]

    # The job is over: its tasks and its key plugin are gone from the
    # scheduler, and no live object anywhere holds a key.
    assert client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks]) == []
    assert client.run_on_scheduler(lambda dask_scheduler: [name for name in dask_scheduler.worker_plugins
                                                           if "warpcrypt" in name]) == []
    hidden, mask = masked([MASTER_KEY] + [derive_file_key(MASTER_KEY, name, job_id=job_id).key for name in contents])
    assert client.run_on_scheduler(live_objects_holding, hidden, mask) == []
    assert all(found == [] for found in client.run(live_objects_holding, hidden, mask).values())
