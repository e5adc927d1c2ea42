"""docs/dask.md runs as written. Its sh and Python blocks, indented ones
included, run in the page's order as one session in a fresh folder: the
Python blocks in one interpreter, one namespace, each sh block in bash (with
-e and pipefail, so that no failing line passes unseen) at its place. Then
the whole session runs again in the same folder, as a reader who comes back
would run it: a block that a second run breaks (a scheduler file, a key or
an output already there) fails here. Every process a session starts, the
page's scheduler and workers in the background included, lives in a process
group that the test kills when the session ends.

The page's object-store block runs against a moto S3 server on localhost
holding the page's bucket, its settings passed in the environment variables
the page names, which the client and the cluster its first block starts
inherit. A block that imports CuPy runs where CuPy imports; a block that
calls the `warpcrypt` command runs where that is built ($WARPCRYPT_CLI, else
<repo>/build/warpcrypt); each is left out elsewhere, with a warning that
says so. The benchmark's short block runs from a folder that holds the
repository's bench/, as a checkout's root does. Blocks that install
packages, and the full benchmark, are never run: NOT_RUN says why.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import re
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
import tomllib
import warnings
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest.importorskip("dask", reason="warpcrypt.dask needs the dask extra")
pytest.importorskip("distributed", reason="warpcrypt.dask needs the dask extra")

from warpcrypt.dask import MANIFEST_SUFFIX, read_manifest  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DOCUMENT = REPO / "docs" / "dask.md"
CONFIGURED_CLI = os.environ.get("WARPCRYPT_CLI")
CLI = Path(CONFIGURED_CLI) if CONFIGURED_CLI else REPO / "build" / "warpcrypt"
BUCKET = "warpcrypt-demo"  # the page's
# Fences the page may use: code that runs, and output or a synopsis, which
# is text.
RUN, TEXT = ("python", "sh"), "text"
OPTIONAL = ("cupy",)
# Blocks never run, found by a line of theirs, and why.
NOT_RUN = {
    'pip install "./python[dask]"':
        "it installs packages: this test runs the checkout's package, whose built wheel scripts/check-wheel.sh "
        "installs into a fresh venv",
    "python bench/dask_bench.py --out bench-results/dask.json":
        "the full benchmark needs 32 GiB of disk and far longer than a test; the block before it runs the script",
}
BLOCK_SECONDS = 60
STOP_SECONDS = 15
# The port of the page's scheduler, Dask's default: its client waits for
# ever on a scheduler that could not start.
SCHEDULER_PORT = 8786


@dataclass(frozen=True)
class Block:
    name: str  # docs/dask.md:<line of its fence>
    language: str
    code: str


def page_blocks() -> list[Block]:
    """Every fenced block of the page, in order, dedented."""
    text = DOCUMENT.read_text(encoding="utf-8")
    return [Block(f"docs/dask.md:{text.count(chr(10), 0, match.start()) + 1}", match[2], textwrap.dedent(match[3]))
            for match in re.finditer(r"^([ ]*)```(\w*)\n(.*?)^\1```$", text, flags=re.S | re.M)]


S3_MISSING = [module for module in ("moto", "s3fs", "boto3") if importlib.util.find_spec(module) is None]


def why_not_run(block: Block) -> str | None:
    """Why a sh or Python block does not run here, or None."""
    for line, reason in NOT_RUN.items():
        if line in block.code:
            return reason
    missing = [module for module in OPTIONAL if re.search(rf"^\s*(import|from) {module}\b", block.code, re.M)
               and importlib.util.find_spec(module) is None]
    if missing:
        return f"it needs {', '.join(missing)}, not installed here"
    if re.search(r"^\s*warpcrypt\s", block.code, re.M) and not CLI.is_file():
        return f"it runs the warpcrypt command, not built at {CLI}"
    if "s3://" in block.code and S3_MISSING:
        return f"its object store is a moto server, and {', '.join(S3_MISSING)} is not installed here"
    return None


# The interpreter of a session's Python blocks: it runs each block it reads
# (one JSON line) in the same namespace, as a script's successive parts, and
# answers on the file descriptor it is given: null, or the traceback.
INTERPRETER = r"""
import json, os, sys, traceback
answers = os.fdopen(int(sys.argv[1]), "w")
namespace = {"__name__": "__main__"}
for line in sys.stdin:
    block = json.loads(line)
    try:
        exec(compile(block["code"], block["name"], "exec"), namespace)
        outcome = None
    except BaseException:
        outcome = traceback.format_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    answers.write(json.dumps(outcome) + "\n")
    answers.flush()
"""


def _group_alive(group: int) -> bool:
    """Whether a process of the group is still running (not a zombie, which
    holds no port or file: an orphan's reaper may be slow to collect it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _, process_group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except OSError:  # it exited while we looked
            continue
        if int(process_group) == group and state != "Z":
            return True
    return False


class Session:
    """One reading of the page in `folder`: the Python interpreter, and bash
    for each sh block, each the leader of a process group of its own, which
    the processes it starts in the background join."""

    def __init__(self, folder: Path, checkout: Path, environment: dict[str, str], log: Path) -> None:
        self.folder, self.checkout, self.environment = folder, checkout, environment
        self.log = log.open("ab")
        answers, answering = os.pipe()
        self.interpreter = subprocess.Popen(
            [sys.executable, "-c", INTERPRETER, str(answering)], pass_fds=(answering,), stdin=subprocess.PIPE,
            stdout=self.log, stderr=subprocess.STDOUT, cwd=folder, env=environment, start_new_session=True)
        os.close(answering)
        self.answers = os.fdopen(answers)
        self.groups = [self.interpreter.pid]

    def run(self, block: Block) -> None:
        self.log.write(f"==== {block.name} ({block.language})\n".encode())
        self.log.flush()
        if block.language == "python":
            self._python(block)
        else:
            self._sh(block)

    def _python(self, block: Block) -> None:
        assert self.interpreter.stdin is not None
        self.interpreter.stdin.write((json.dumps({"name": block.name, "code": block.code}) + "\n").encode())
        self.interpreter.stdin.flush()
        ready, _, _ = select.select([self.answers], [], [], BLOCK_SECONDS)
        assert ready, f"{block.name} did not finish in {BLOCK_SECONDS} s"
        answer = self.answers.readline()
        assert answer, f"{block.name}: the interpreter ended (status {self.interpreter.wait()})"
        failure = json.loads(answer)
        assert failure is None, f"{block.name} failed:\n{failure}"

    def _sh(self, block: Block) -> None:
        # The benchmark is the repository's script, run from a checkout's root.
        folder = self.checkout if "bench/" in block.code else self.folder
        shell = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", block.code], stdin=subprocess.DEVNULL,
                                 stdout=self.log, stderr=subprocess.STDOUT, cwd=folder, env=self.environment,
                                 start_new_session=True)
        self.groups.append(shell.pid)
        try:
            status = shell.wait(timeout=BLOCK_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{block.name} did not finish in {BLOCK_SECONDS} s", pytrace=False)
        assert status == 0, f"{block.name} exited with status {status}"

    def close(self) -> None:
        """Ends every process the session started, the page's cluster included."""
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError):  # every process of the group has ended
                os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while any(_group_alive(group) for group in self.groups) and time.monotonic() < deadline:
            time.sleep(0.1)
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        self.interpreter.wait()
        self.answers.close()
        self.log.close()


def _port_taken(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def s3_environment():
    """A moto S3 server on localhost with the page's bucket, and the
    variables that reach it (empty when moto or s3fs is missing)."""
    if S3_MISSING:
        yield {}
        return
    from moto.server import ThreadedMotoServer

    # The server's log of every request would bury a failure's report.
    requests_log = logging.getLogger("werkzeug")
    level = requests_log.level
    requests_log.setLevel(logging.WARNING)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    settings = {"FSSPEC_S3_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    try:
        _store(settings).create_bucket(Bucket=BUCKET)
        yield settings
    finally:
        server.stop()
        requests_log.setLevel(level)


def _store(settings: dict[str, str]):
    """A boto3 client of the store that `settings` name."""
    import boto3

    return boto3.client("s3", endpoint_url=settings["FSSPEC_S3_ENDPOINT_URL"],
                        region_name=settings["AWS_DEFAULT_REGION"], aws_access_key_id=settings["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=settings["AWS_SECRET_ACCESS_KEY"])


def _commands(folder: Path) -> Path:
    """The commands the page runs beyond the shell's own: `warpcrypt`, and
    the console scripts of the package (its [project.scripts]) and of Dask
    (`dask`, from its installed metadata), written as pip writes them for
    this interpreter. They then run the package under test, and Dask where
    it was installed without its scripts (pip --target, as on the GPU
    machine); a venv's own copies may come from another build."""
    folder.mkdir()
    if CLI.is_file():
        (folder / "warpcrypt").symlink_to(CLI.resolve())
    scripts = tomllib.loads((REPO / "python" / "pyproject.toml").read_text())["project"]["scripts"]
    scripts |= {entry.name: entry.value for entry in entry_points(group="console_scripts", name="dask")}
    for command, target in scripts.items():
        module, function = target.split(":")
        script = folder / command
        # The guard matters: a local cluster's worker processes start by
        # importing the main module, here the script.
        script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
                          f"if __name__ == '__main__':\n    sys.exit({function}())\n")
        script.chmod(0o755)
    return folder


def _files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def _tail(path: Path) -> str:
    return f"---- the end of {path.name}:\n{path.read_text(errors='replace')[-6000:]}\n" if path.exists() else ""


def test_every_block_of_docs_dask_md_runs_as_written_twice_in_a_row(tmp_path, s3_environment):
    blocks = page_blocks()
    assert {block.language for block in blocks} <= {*RUN, TEXT}, \
        "every fence of docs/dask.md is code (python, sh) or marked as text"
    for line in NOT_RUN:
        assert sum(line in block.code for block in blocks) == 1, f"NOT_RUN: no one block of the page holds {line!r}"
    runnable = [block for block in blocks if block.language in RUN]
    left_out = {block.name: why for block in runnable if (why := why_not_run(block))}
    for name, why in left_out.items():
        if why not in NOT_RUN.values():  # this machine lacks what the block needs
            warnings.warn(f"{name} not run: {why}", stacklevel=1)

    folder, checkout = tmp_path / "folder", tmp_path / "checkout"
    folder.mkdir()
    checkout.mkdir()
    (checkout / "bench").symlink_to(REPO / "bench")
    environment = {**os.environ, **s3_environment,
                   "PATH": os.pathsep.join([str(_commands(tmp_path / "commands")), str(Path(sys.executable).parent),
                                            os.environ.get("PATH", "")]),
                   "PYTHONPATH": os.pathsep.join(sys.path)}

    first_run: tuple[dict[str, bytes], bytes] | None = None
    for attempt in ("first", "second"):
        log = tmp_path / f"{attempt}-session.log"
        assert not _port_taken(SCHEDULER_PORT), \
            f"port {SCHEDULER_PORT}, where the page's scheduler listens, is taken (by another Dask scheduler?)"
        session = Session(folder, checkout, environment, log)
        try:
            for block in runnable:
                if block.name not in left_out:
                    session.run(block)
        except BaseException:
            session.close()
            print(_tail(log) + "".join(_tail(path) for path in sorted(folder.glob("*.log"))))
            raise
        session.close()

        key = (folder / "master.key").read_bytes()
        raw = _files(folder / "raw")
        assert sorted(raw) == ["part-1.bin", "part-2.bin", "sub/part-3.bin"], f"{attempt} run"
        assert _files(folder / "restored") == raw, f"{attempt} run: restored/ is not raw/"
        # Each job's manifest, keyed by its inputs: raw/'s files, or sealed/'s.
        jobs = {"sealed": "", "sealed-lazy": "", "sealed-chacha": "", "sealed-by-key-file": "", "restored": ".wcs"}
        for job, suffix in jobs.items():
            manifest = read_manifest(f"{folder / job}{MANIFEST_SUFFIX}", key)
            assert {name: entry["status"] for name, entry in manifest["files"].items()} == \
                {name + suffix: "done" for name in raw}, f"{attempt} run: {job}'s manifest"
        if first_run is None:
            first_run = (_files(folder / "sealed"), key)
        else:
            # The second run found the first's work done: it sealed nothing
            # again (a sealed file's salt is new each time) and kept the key.
            assert (_files(folder / "sealed"), key) == first_run
        if not S3_MISSING:
            assert _files(folder / "restored-from-s3") == raw
        if CLI.is_file():
            assert (folder / "part-3.bin").read_bytes() == raw["sub/part-3.bin"]
        quick = json.loads((checkout / "bench-results" / "quick.json").read_text())
        assert [result["config"] for result in quick["results"]] == ["cpu-1"]

    if not S3_MISSING:
        # The object-store job's outputs and manifest, and nothing else.
        keys = sorted(entry["Key"] for entry in _store(s3_environment).list_objects_v2(Bucket=BUCKET)["Contents"])
        assert keys == ["sealed.warpcrypt-manifest.json", "sealed/part-1.bin.wcs", "sealed/part-2.bin.wcs",
                        "sealed/sub/part-3.bin.wcs"]
