"""age's own test vectors: C2SP CCTV's age testkit, the files age's
testkit_test.go runs (armor, header and stanza rules, scrypt, X25519, the
post-quantum hybrid, payload chunks, HMAC). Fetched data stays out of the
project: the kit is read from ../shared/testdata/cctv-age beside the
checkout (or $WARPCRYPT_TESTDATA/cctv-age), and these tests skip, saying
so, where it is absent.

Each file is a few "name: value" lines, an empty line, then the age file
(zlib-compressed where it says so). `warpcrypt age -d` with the file's
identities, or its passphrase through -j batchpass (AGE_PASSPHRASE), must
do what `expect` says: "success" writes the payload whose SHA-256 is given;
any failure ("no match", "header failure", "armor failure", "payload
failure", "HMAC failure") exits non-zero with one line and writes nothing,
never a byte of an unauthenticated payload.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from pathlib import Path

import pytest

from conftest import REPO_ROOT

KIT = Path(os.environ.get("WARPCRYPT_TESTDATA", REPO_ROOT.parent / "shared" / "testdata")) / "cctv-age"
VECTORS = sorted(KIT.iterdir()) if KIT.is_dir() else []
FAILURES = {"no match", "header failure", "armor failure", "payload failure", "HMAC failure"}

pytestmark = pytest.mark.skipif(not VECTORS, reason=f"age's testkit is not at {KIT} (fetched data lives in "
                                                    "../shared/testdata, beside the checkout)")


def read_vector(path: Path) -> tuple[dict[str, list[str]], bytes]:
    raw = path.read_bytes()
    head, _, body = raw.partition(b"\n\n")
    fields: dict[str, list[str]] = {}
    for line in head.decode().splitlines():
        name, _, value = line.partition(": ")
        fields.setdefault(name, []).append(value)
    if fields.get("compressed") == ["zlib"]:
        body = zlib.decompress(body)
    return fields, body


def test_the_kit_holds_every_kind_of_vector():
    expects = {read_vector(path)[0]["expect"][0] for path in VECTORS}
    assert expects == FAILURES | {"success"}, expects
    assert sum(1 for path in VECTORS if "hybrid" in path.name) >= 19


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.name)
def test_testkit_vector(warpcrypt_binary, tmp_path, path):
    fields, body = read_vector(path)
    (tmp_path / "file.age").write_bytes(body)
    if "identity" in fields:
        (tmp_path / "identities").write_text("".join(i + "\n" for i in fields["identity"]))
        how = ["-i", tmp_path / "identities"]
        environment = dict(os.environ)
    else:  # the first passphrase where a file lists several; none where it lists none (an empty file)
        how = ["-j", "batchpass"]
        environment = {**os.environ, "AGE_PASSPHRASE": fields.get("passphrase", ["unused"])[0]}
    done = subprocess.run([str(warpcrypt_binary), "age", "-d", *how, "-o", tmp_path / "out", tmp_path / "file.age"],
                          capture_output=True, check=False, env=environment, timeout=120)
    [expect] = fields["expect"]
    if expect == "success":
        assert done.returncode == 0, done.stderr
        [payload] = fields["payload"]
        assert hashlib.sha256((tmp_path / "out").read_bytes()).hexdigest() == payload
        return
    assert expect in FAILURES
    assert done.returncode != 0
    assert not (tmp_path / "out").exists()
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert b"AGE-SECRET-KEY" not in done.stderr
    if expect == "no match":
        assert b"no identity matched" in done.stderr or "passphrase" in fields, done.stderr
    elif expect == "header failure":
        assert b"no identity matched" not in done.stderr, done.stderr
