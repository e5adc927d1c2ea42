"""age's own test vectors for the post-quantum hybrid (C2SP CCTV's age
testkit, the files age 1.3's testkit_test.go runs; copied unchanged into
tests/cli/data/age_testkit/).

Each file is a few "name: value" lines, an empty line, then the age file
(zlib-compressed where it says so). `warpcrypt age -d` with the file's
identities must do what `expect` says: "success" writes the payload whose
SHA-256 is given; "no match" fails with no identity matching; "header
failure" fails on a malformed header or stanza. A failure writes nothing.
"""

from __future__ import annotations

import hashlib
import subprocess
import zlib
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "age_testkit"
VECTORS = sorted(p for p in DATA.iterdir() if p.name != "README.md")


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


def test_every_hybrid_vector_is_here():
    assert len(VECTORS) == 19


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.name)
def test_testkit_vector(warpcrypt_binary, tmp_path, path):
    fields, body = read_vector(path)
    (tmp_path / "file.age").write_bytes(body)
    (tmp_path / "identities").write_text("".join(i + "\n" for i in fields["identity"]))
    done = subprocess.run(
        [str(warpcrypt_binary), "age", "-d", "-i", tmp_path / "identities", "-o", tmp_path / "out", tmp_path / "file.age"],
        capture_output=True,
        check=False,
    )
    [expect] = fields["expect"]
    if expect == "success":
        assert done.returncode == 0, done.stderr
        [payload] = fields["payload"]
        assert hashlib.sha256((tmp_path / "out").read_bytes()).hexdigest() == payload
        return
    assert done.returncode != 0
    assert not (tmp_path / "out").exists()
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert b"AGE-SECRET-KEY" not in done.stderr
    if expect == "no match":
        assert b"no identity matched" in done.stderr, done.stderr
    else:
        assert expect == "header failure"
        assert b"no identity matched" not in done.stderr, done.stderr
