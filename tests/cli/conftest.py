"""Fixtures for the `warpcrypt` CLI tests.

The binary is taken from $WARPCRYPT_CLI, else <repo>/build/warpcrypt; the
reference is `openssl` from $PATH (or $OPENSSL_BIN). A missing binary fails
every test with one clear message rather than skipping, so CI cannot pass
without having run them.

Run from the repository root:  python -m pytest tests/cli -q
"""

from __future__ import annotations

import os
import sys
import re
import shutil
from pathlib import Path
from typing import Callable, Iterable

import pytest

pytest.register_assert_rewrite("wc_support")

import wc_support  # noqa: E402  (after register_assert_rewrite, on purpose)
from wc_support import Run, Sodium, Tool, snapshot  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]

# The test plugin (tests/cli/plugins/age-plugin-wctest) gets only the
# environment an age plugin gets, without PYTHONPATH: it finds pyca/cryptography
# where this interpreter does, through a variable of its own.
os.environ.setdefault("WCTEST_PYTHONPATH", os.pathsep.join(sys.path))
DEFAULT_CLI = REPO_ROOT / "build" / "warpcrypt"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@pytest.fixture(scope="session")
def warpcrypt_binary() -> Path:
    configured = os.environ.get("WARPCRYPT_CLI")
    path = Path(configured).resolve() if configured else DEFAULT_CLI
    if not _executable(path):
        source = "$WARPCRYPT_CLI" if configured else "the default location"
        pytest.fail(
            f"warpcrypt CLI not found or not executable at {path} ({source}); "
            "build it (cmake -B build && cmake --build build) or point "
            "WARPCRYPT_CLI at the binary",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def build_tool(warpcrypt_binary) -> Callable[[str], Path]:
    """`build_tool(name)`: a test-only program the build makes beside the CLI
    under test (<build>/tests/NAME, with the warpcrypt_unit_tests target),
    so the tests reach the library's internals of the same build."""

    def find(name: str) -> Path:
        path = warpcrypt_binary.parent / "tests" / name
        if not _executable(path):
            pytest.fail(f"{path} is missing: build the warpcrypt_unit_tests target", pytrace=False)
        return path

    return find


@pytest.fixture(scope="session")
def openssl_binary() -> Path:
    found = os.environ.get("OPENSSL_BIN") or shutil.which("openssl")
    if not found or not _executable(Path(found)):
        pytest.fail("the reference `openssl` binary is not on PATH (or set OPENSSL_BIN)",
                    pytrace=False)
    return Path(found)


@pytest.fixture(scope="session")
def run_cli(warpcrypt_binary, tmp_path_factory) -> Tool:
    """`run_cli(*args)` -> Run; `run_cli.enc(data, *args)` -> output bytes."""
    return Tool((str(warpcrypt_binary),), tmp_path_factory.mktemp("warpcrypt-io"))


@pytest.fixture(scope="session")
def run_openssl(openssl_binary, tmp_path_factory) -> Tool:
    """Same interface as run_cli, for the reference `openssl`."""
    return Tool((str(openssl_binary),), tmp_path_factory.mktemp("openssl-io"))


@pytest.fixture(scope="session")
def random_bytes() -> Callable[[int, object], bytes]:
    """`random_bytes(n, seed)`: deterministic bytes, so failures reproduce."""
    return wc_support.random_bytes


@pytest.fixture(scope="session")
def assert_no_stray_files() -> Callable[[Path, dict], None]:
    """`assert_no_stray_files(dir, snapshot_before)`: no entry added, removed
    or modified (content, mode or mtime) under `dir`."""
    return wc_support.assert_no_stray_files


@pytest.fixture
def workdir(tmp_path) -> Path:
    """An empty directory of the test's own, for tests that watch a folder."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def sodium() -> Sodium:
    try:
        return Sodium()
    except RuntimeError as exc:
        pytest.fail(f"Salsa20 reference unavailable: {exc}", pytrace=False)


# Output of `warpcrypt devices` that means "no device". Anything else counts
# as a device being present, which only ever makes tests skip, never pass.
_NO_DEVICE = re.compile(
    r"\bno\b[^\n]*\b(cuda|gpu|device)|\bnone\b|not (found|present|available)|"
    r"without cuda|0 (cuda )?devices?",
    re.IGNORECASE,
)


@pytest.fixture(scope="session")
def cuda_device_present(run_cli) -> bool:
    result = run_cli("devices").check()
    text = (result.stdout + result.stderr).decode("utf-8", "replace")
    return not _NO_DEVICE.search(text)


@pytest.fixture(scope="session")
def cuda_device_count(run_cli) -> int:
    """How many devices `warpcrypt devices` lists, a line each ("0: NAME, ...")."""
    listed = run_cli("devices").check().stdout.decode("utf-8", "replace")
    return len(re.findall(r"^\d+: ", listed, re.MULTILINE))


@pytest.fixture
def backend_args(cuda_device_present) -> Callable[[str], list[str]]:
    """`backend_args(name)`: the warpcrypt flags for backend `name`
    ("default" adds none); skips the test for "gpu" without a CUDA device."""

    def args(name: str) -> list[str]:
        if name == "gpu" and not cuda_device_present:
            pytest.skip("no CUDA device (--backend gpu is covered by a failure test)")
        return [] if name == "default" else ["--backend", name]

    return args


def _fragments(secret: str) -> set[str]:
    """The secret and its ends: an error that echoes part of a key leaks too."""
    secret = secret.lower()
    return {secret, secret[:12], secret[-12:]} if len(secret) >= 12 else {secret}


@pytest.fixture
def expect_failure(run_cli) -> Callable[..., Run]:
    """Runs warpcrypt in `cwd` and asserts a clean failure.

    `expect_failure(*args, cwd=dir, message=regex, secrets=[...])` checks: a
    non-zero exit that is not a crash; exactly one line on stderr, matching
    `message` (case-insensitive); nothing on stdout; no secret (key hex,
    passphrase) in either stream; and `cwd` plus any `watch` directories
    exactly as before (no output, no temp file, input and pre-existing
    output untouched).
    """

    def run(
        *args: str,
        cwd: Path,
        message: str,
        secrets: Iterable[str] = (),
        watch: Iterable[Path] = (),
        **kwargs,
    ) -> Run:
        watched = [cwd, *watch]
        before = [snapshot(d) for d in watched]
        result = run_cli(*args, cwd=cwd, **kwargs)
        info = result.describe()
        assert 0 < result.returncode < 126, f"expected a clean non-zero exit:\n{info}"
        lines = result.stderr_lines
        assert len(lines) == 1, f"expected exactly one line on stderr:\n{info}"
        assert re.search(message, lines[0], re.IGNORECASE), (
            f"error message does not match /{message}/:\n{info}"
        )
        assert result.stdout == b"", f"expected no stdout on failure:\n{info}"
        streams = (result.stdout + result.stderr).decode("utf-8", "replace").lower()
        for secret in secrets:
            for fragment in _fragments(secret):
                assert fragment not in streams, f"secret {fragment!r} leaked:\n{info}"
        for directory, snap in zip(watched, before):
            wc_support.assert_no_stray_files(directory, snap)
        return result

    return run
