"""Regression tests for the defects an adversarial review found (each test
is named after what it guards and replays the review's reproducer): every
one must now fail cleanly, with one error line, a non-zero exit, no output
and the input untouched.

The mutation suite (tests/attack/sealed_mutations.py) attacks sealed files
far more broadly; these are the exact cases that once got through."""

from __future__ import annotations

import os
import pwd
import resource
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from wc_support import assert_same_bytes, random_bytes

KEY_HEX = "00" * 32
IV_HEX = "00" * 16
CTR = ("enc", "-aes-256-ctr", "-K", KEY_HEX, "-iv", IV_HEX)
HEADER = 48
MIB = 1 << 20
TRUNCATED = r"truncated sealed file"


def seal_sample(run_cli, workdir: Path, size: int = 5 * MIB, *extra: str) -> tuple[Path, Path, bytes]:
    """A key file and a sealed file of `size` random bytes (1 MiB chunks)."""
    key = workdir / "key"
    key.write_bytes(random_bytes(32, "trust-key"))
    plaintext = random_bytes(size, ("trust", size))
    (workdir / "p").write_bytes(plaintext)
    run_cli("seal", "-kfile", key, "-in", workdir / "p", "-out", workdir / "s.wcs", *extra).check()
    (workdir / "p").unlink()
    return key, workdir / "s.wcs", plaintext


def cut_after_chunk(sealed: bytes, chunks: int, appended: bytes = bytes(16), chunk: int = MIB) -> bytes:
    """The review's forgery: the file cut after `chunks` whole chunks, then
    bytes that look like an empty final chunk."""
    return sealed[: HEADER + chunks * (chunk + 16)] + appended


# -- 1. truncation at a chunk boundary ---------------------------------------


@pytest.mark.parametrize("chunks", [1, 2, 4])
def test_truncation_at_a_chunk_boundary_with_a_fake_final_chunk_is_refused(run_cli, workdir, expect_failure, chunks):
    key, sealed, _ = seal_sample(run_cli, workdir)
    (workdir / "t.wcs").write_bytes(cut_after_chunk(sealed.read_bytes(), chunks))
    expect_failure("open", "-kfile", key, "-in", "t.wcs", "-out", "o", cwd=workdir, message=TRUNCATED)


@pytest.mark.parametrize("how", ["stdin-file", "pipe", "range-to-end", "range-past-end"])
def test_truncation_at_a_chunk_boundary_is_refused_on_every_input_path(run_cli, workdir, expect_failure, how):
    key, sealed, _ = seal_sample(run_cli, workdir)
    forged = workdir / "t.wcs"
    forged.write_bytes(cut_after_chunk(sealed.read_bytes(), 1))
    if how == "stdin-file":
        with forged.open("rb") as stdin:
            result = subprocess.run([str(run_cli.argv0[0]), "open", "-kfile", str(key)], stdin=stdin,
                                    capture_output=True, cwd=workdir, timeout=60)
        assert result.returncode == 4 and result.stdout == b"", result
        assert b"truncated sealed file" in result.stderr
    elif how == "pipe":
        # To a file, so that nothing is released; standard output would get
        # the chunks authenticated before the end (docs/format.md).
        expect_failure("open", "-kfile", key, "-out", "o", stdin=forged.read_bytes(), cwd=workdir,
                       message=TRUNCATED)
    else:
        offset = "1000" if how == "range-to-end" else "9999999"
        expect_failure("open", "-kfile", key, "-in", "t.wcs", "--offset", offset, "--length", "100000000",
                       "-out", "o", cwd=workdir, message=TRUNCATED)


@pytest.mark.parametrize("aead", ["aes-128-gcm", "chacha20-poly1305"])
def test_truncation_is_refused_for_every_aead_and_key_source(run_cli, workdir, expect_failure, aead):
    plaintext = random_bytes(3 * 4096 + 5, aead)
    (workdir / "p").write_bytes(plaintext)
    for source in (["-kfile", "k"], ["-pass", "pass:a passphrase"]):
        (workdir / "k").write_bytes(random_bytes(16 if aead == "aes-128-gcm" else 32, "k"))
        run_cli("seal", *source, "-c", aead, "--chunk-size", "4K", "-iter", "1000", "-in", "p", "-out", "s",
                cwd=workdir).check()
        sealed = (workdir / "s").read_bytes()
        (workdir / "t").write_bytes(cut_after_chunk(sealed, 2, chunk=4096))
        expect_failure("open", *source, "-in", "t", "-out", "o", cwd=workdir, message=TRUNCATED)


def test_an_empty_final_chunk_is_authenticated_not_skipped(run_cli, workdir, expect_failure):
    """Two genuine chunks, then 16 bytes that are no tag at all: the reader
    must not stop at the last full chunk as if it were the end."""
    key, sealed, _ = seal_sample(run_cli, workdir, 2 * MIB + 1)
    body = sealed.read_bytes()
    (workdir / "t.wcs").write_bytes(body[: HEADER + 2 * (MIB + 16)] + random_bytes(16, "fake tag"))
    expect_failure("open", "-kfile", key, "-in", "t.wcs", "-out", "o", cwd=workdir, message=TRUNCATED)


def test_an_empty_file_still_seals_and_opens_as_one_empty_chunk(run_cli, workdir):
    (workdir / "empty").write_bytes(b"")
    (workdir / "key").write_bytes(random_bytes(32, "empty"))
    run_cli("seal", "-kfile", "key", "-in", "empty", "-out", "s", cwd=workdir).check()
    assert (workdir / "s").stat().st_size == HEADER + 16
    assert run_cli("open", "-kfile", "key", "-in", "s", cwd=workdir).check().stdout == b""


# -- 2. passphrase sources that give nothing -----------------------------------


@pytest.mark.parametrize("command", ["enc", "seal"])
@pytest.mark.parametrize("source", ["file:.", "file:/dev/null", "fd:5", "stdin"])
def test_a_passphrase_source_that_yields_nothing_is_an_error(run_cli, workdir, expect_failure, command, source):
    (workdir / "p").write_bytes(b"plaintext")
    args = ["enc", "-aes-256-cbc", "-pbkdf2"] if command == "enc" else ["seal"]
    read_end, write_end = os.pipe()
    os.close(write_end)  # a pipe already at its end
    try:
        source = source.replace("fd:5", f"fd:{read_end}")
        expect_failure(*args, "-pass", source, "-in", "p", "-out", "o", cwd=workdir, pass_fds=(read_end,),
                       message=r"passphrase", stdin=b"")
    finally:
        os.close(read_end)


@pytest.mark.parametrize("source", ["pass:", "env:EMPTY_PASSPHRASE", "file:newline-only"])
def test_seal_refuses_an_empty_passphrase_even_when_given_explicitly(run_cli, workdir, expect_failure, source):
    (workdir / "p").write_bytes(b"plaintext")
    (workdir / "newline-only").write_bytes(b"\n")
    expect_failure("seal", "-pass", source, "-in", "p", "-out", "o", cwd=workdir, env={"EMPTY_PASSPHRASE": ""},
                   message=r"empty passphrase")


def test_a_passphrase_file_keeps_openssls_first_line_rule(run_cli, run_openssl, workdir):
    """file: reads the first line without its LF, as openssl does; a CR
    before it stays part of the passphrase, as in openssl."""
    (workdir / "pw").write_bytes(b"line one\r\nline two\n")
    (workdir / "p").write_bytes(b"x" * 100)
    common = ("-aes-256-cbc", "-pbkdf2", "-iter", "1000", "-S", "0011223344556677", "-pass", "file:pw")
    ours = run_cli("enc", *common, "-in", "p", cwd=workdir).check().stdout
    theirs = run_openssl("enc", *common, "-in", "p", cwd=workdir).check().stdout
    assert_same_bytes(ours, theirs, "passphrase from a CRLF file")


def test_a_passphrase_longer_than_the_buffer_is_refused_not_cut(run_cli, workdir, expect_failure):
    (workdir / "p").write_bytes(b"x")
    expect_failure("seal", "-pass", "pass:" + "a" * 5000, "-in", "p", "-out", "o", cwd=workdir,
                   message=r"passphrase longer than 4096 bytes", secrets=["a" * 5000])


# -- 3. inputs whose size is reported as 0 -------------------------------------


def test_enc_reads_a_proc_file_to_its_end(run_cli, run_openssl, workdir):
    """/proc/cpuinfo reports size 0 but holds kilobytes, the same for any
    reader (unlike /proc/self/*)."""
    assert Path("/proc/cpuinfo").stat().st_size == 0  # the premise
    ours = run_cli(*CTR, "-in", "/proc/cpuinfo", cwd=workdir).check().stdout
    expected = run_openssl("enc", "-aes-256-ctr", "-K", KEY_HEX, "-iv", IV_HEX, "-in", "/proc/cpuinfo",
                           cwd=workdir).check().stdout
    assert len(ours) > 0
    assert_same_bytes(ours, expected, "enc of /proc/cpuinfo")


def test_seal_reads_a_proc_file_to_its_end(run_cli, workdir):
    (workdir / "key").write_bytes(random_bytes(32, "proc"))
    run_cli("seal", "-kfile", "key", "-in", "/proc/cpuinfo", "-out", "s", cwd=workdir).check()
    opened = run_cli("open", "-kfile", "key", "-in", "s", cwd=workdir).check().stdout
    assert opened == Path("/proc/cpuinfo").read_bytes()


def test_a_file_that_grows_while_it_is_read_is_an_error(run_cli, workdir):
    """A writer appends while enc reads at offsets up to the size it saw."""
    path = workdir / "growing"
    path.write_bytes(random_bytes(64 * MIB, "grow"))
    proc = subprocess.Popen([str(run_cli.argv0[0]), *CTR, "--threads", "1", "-in", str(path), "-out", "o"],
                            cwd=workdir, stderr=subprocess.PIPE)
    with path.open("ab") as growing:
        while proc.poll() is None:
            growing.write(b"more" * 1024)
            growing.flush()
    _, stderr = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("enc finished before the first append landed; nothing to judge")
    assert b"changed size while it was read" in stderr
    assert not (workdir / "o").exists()


# -- 4. unauthenticated header fields that set the cost of open ---------------


def forged_header_file(workdir: Path, *, chunk_log2: int = 20, key_source: int = 2, iterations: int = 0) -> Path:
    """A 164-byte 'sealed file': a valid-looking header and garbage chunks."""
    header = bytearray(b"WARPSEAL")
    header += bytes([1, 3, chunk_log2, 16, key_source, 1, 0, 0])
    header += struct.pack(">I", iterations) + bytes(16) + bytes(7) + bytes(5)
    path = workdir / "forged.wcs"
    path.write_bytes(bytes(header) + random_bytes(116, "forged body"))
    return path


def peak_child_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


@pytest.mark.parametrize("via", ["file", "pipe"])
def test_a_huge_chunk_size_in_a_tiny_file_does_not_allocate_it(warpcrypt_binary, workdir, via):
    """Exponent 30 once made open allocate 2.1 GB for a 164-byte file. The
    open runs in a fresh child so that its peak RSS is its own."""
    forged = forged_header_file(workdir, chunk_log2=30)
    (workdir / "key").write_bytes(bytes(32))
    script = (
        "import resource, subprocess, sys\n"
        "binary, forged, via = sys.argv[1:]\n"
        "args = [binary, 'open', '-kfile', 'key'] + (['-in', forged] if via == 'file' else [])\n"
        "data = open(forged, 'rb').read() if via == 'pipe' else b''\n"
        "r = subprocess.run(args, input=data, capture_output=True)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    probe = subprocess.run(["python3", "-c", script, str(warpcrypt_binary), str(forged), via], cwd=workdir,
                           capture_output=True, text=True, timeout=60)
    code, peak_kib = map(int, probe.stdout.split())
    assert code == 4, probe
    assert peak_kib < 256 * 1024, f"open peaked at {peak_kib / 1024:.0f} MiB for a 164-byte file"


def test_a_forged_iteration_count_is_refused_before_pbkdf2_runs(run_cli, workdir, expect_failure):
    forged = forged_header_file(workdir, key_source=1, iterations=100_000_000)
    started = time.monotonic()
    expect_failure("open", "-pass", "pass:anything", "-in", forged.name, "-out", "o", cwd=workdir,
                   message=r"more PBKDF2 iterations than this reader's limit")
    assert time.monotonic() - started < 5


def test_seal_warns_when_its_file_will_need_a_raised_limit(run_cli, workdir):
    (workdir / "p").write_bytes(b"")
    result = run_cli("seal", "-pass", "pass:pw", "-iter", "2000001", "-in", "p", "-out", "s", cwd=workdir).check()
    assert result.stderr_lines == [
        "warpcrypt: warning: more than 2000000 PBKDF2 iterations: open this file with --max-iter 2000001"]


def test_the_iteration_limit_can_be_raised_for_a_file_that_needs_it(run_cli, workdir, expect_failure):
    (workdir / "p").write_bytes(b"checkpoint")
    run_cli("seal", "-pass", "pass:pw", "-iter", "3000", "-in", "p", "-out", "s", cwd=workdir).check()
    expect_failure("open", "-pass", "pass:pw", "--max-iter", "2999", "-in", "s", "-out", "o", cwd=workdir,
                   message=r"iterations")
    opened = run_cli("open", "-pass", "pass:pw", "--max-iter", "3000", "-in", "s", cwd=workdir).check().stdout
    assert opened == b"checkpoint"


# -- 5-7. where the output goes, and with which permissions -------------------

NOBODY = pwd.getpwnam("nobody")


def as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY.pw_gid)
    os.setuid(NOBODY.pw_uid)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as a second user")


@pytest.fixture
def sticky_dir() -> Iterator[Path]:
    """A /tmp-like directory that the second user can reach: sticky,
    world-writable, owned by root (pytest's own directories are 0700)."""
    directory = Path(tempfile.mkdtemp(prefix="warpcrypt-sticky-", dir="/tmp"))
    directory.chmod(0o1777)
    yield directory
    shutil.rmtree(directory)


def plant_symlink(directory: Path, name: str, target: Path) -> Path:
    """Another user (nobody) plants `name` -> `target` in `directory`."""
    link = directory / name
    subprocess.run(["ln", "-s", str(target), str(link)], preexec_fn=as_nobody, check=True)
    return link


@needs_root
def test_a_symlink_planted_by_another_user_in_a_sticky_directory_is_not_followed(run_cli, workdir, sticky_dir,
                                                                                 expect_failure):
    private = workdir / "private"
    private.mkdir(mode=0o700)
    victim = private / "victim"
    victim.write_bytes(b"root's file")
    victim.chmod(0o600)
    (workdir / "p").write_bytes(b"attacker chooses nothing")
    link = plant_symlink(sticky_dir, "out", victim)
    expect_failure(*CTR, "-in", "p", "-out", link, cwd=workdir, watch=[private, sticky_dir],
                   message=r"refusing to follow a symlink")
    assert victim.read_bytes() == b"root's file"
    dangling = plant_symlink(sticky_dir, "dangling", private / "created")
    expect_failure("seal", "-kfile", "/dev/null", "-in", "p", "-out", dangling, cwd=workdir,
                   watch=[private, sticky_dir], message=r"symlink|key file")
    assert not (private / "created").exists()


def test_a_symlink_of_ones_own_is_written_through(run_cli, workdir):
    (workdir / "p").write_bytes(b"data")
    (workdir / "real").write_bytes(b"old")
    (workdir / "real").chmod(0o640)
    (workdir / "link").symlink_to("real")
    run_cli(*CTR, "-in", "p", "-out", "link", cwd=workdir).check()
    assert (workdir / "link").is_symlink()
    assert len((workdir / "real").read_bytes()) == 4
    assert (workdir / "real").stat().st_mode & 0o777 == 0o640


def test_a_dangling_symlink_is_refused(run_cli, workdir, expect_failure):
    (workdir / "p").write_bytes(b"data")
    (workdir / "link").symlink_to("nowhere/file")
    expect_failure(*CTR, "-in", "p", "-out", "link", cwd=workdir, message=r"symlink to a file that does not exist")


@needs_root
@pytest.mark.parametrize("mode", [0o444, 0o644])
def test_a_file_the_caller_may_not_write_is_not_replaced(run_cli, workdir, expect_failure, mode):
    shared = workdir / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    target = shared / "target"
    target.write_bytes(b"keep me")
    target.chmod(mode)
    (shared / "p").write_bytes(b"data")
    (shared / "p").chmod(0o644)
    workdir.chmod(0o755)
    before = target.stat()
    result = subprocess.run([str(run_cli.argv0[0]), *CTR, "-in", "p", "-out", "target"], cwd=shared,
                            preexec_fn=as_nobody, capture_output=True, timeout=60)
    assert result.returncode == 3 and b"Permission denied" in result.stderr, result
    after = target.stat()
    assert (after.st_ino, after.st_uid, after.st_mode) == (before.st_ino, before.st_uid, before.st_mode)
    assert target.read_bytes() == b"keep me"
    assert sorted(p.name for p in shared.iterdir()) == ["p", "target"]


def test_a_replaced_file_keeps_its_mode(run_cli, workdir):
    (workdir / "p").write_bytes(b"data")
    (workdir / "o").write_bytes(b"old")
    (workdir / "o").chmod(0o604)
    run_cli(*CTR, "-in", "p", "-out", "o", cwd=workdir).check()
    assert (workdir / "o").stat().st_mode & 0o7777 == 0o604


@pytest.mark.parametrize("command", ["open", "decrypt"])
def test_the_temporary_file_stays_private_until_the_output_is_complete(run_cli, workdir, command):
    """While plaintext is being written, the temporary file is 0600 even
    where the final file will be 0644: a reader who opened it then would keep
    reading later. The final mode may appear only once every byte is in."""
    size = 256 * MIB
    (workdir / "key").write_bytes(bytes(32))
    (workdir / "p").write_bytes(bytes(size))
    if command == "open":
        run_cli("seal", "-kfile", "key", "-in", "p", "-out", "c", cwd=workdir).check()
        argv = ["open", "-kfile", "key", "--threads", "1", "-in", "c", "-out", "o"]
    else:
        run_cli(*CTR, "-in", "p", "-out", "c", cwd=workdir).check()
        argv = ["enc", "-d", "-aes-256-ctr", "-K", KEY_HEX, "-iv", IV_HEX, "--threads", "1", "-in", "c", "-out", "o"]
    (workdir / "p").unlink()
    old_umask = os.umask(0o022)
    try:
        proc = subprocess.Popen([str(run_cli.argv0[0]), *argv], cwd=workdir)
        seen = set()
        while proc.poll() is None:
            for temp in workdir.glob(".o.warpcrypt-*"):
                try:
                    status = temp.stat()
                    seen.add((status.st_mode & 0o777, status.st_size))
                except FileNotFoundError:
                    pass
        assert proc.wait() == 0
    finally:
        os.umask(old_umask)
    assert any(mode == 0o600 and 0 < length < size for mode, length in seen), "never saw the file being written"
    early = {(oct(mode), length) for mode, length in seen if mode != 0o600 and length < size}
    assert not early, f"the temporary file lost mode 0600 before it was complete: {sorted(early)}"
    assert (workdir / "o").stat().st_mode & 0o777 == 0o644


def test_a_file_size_limit_leaves_no_temporary_file(run_cli, workdir):
    """SIGXFSZ once killed the process and left a 1 MB temporary file."""
    (workdir / "p").write_bytes(random_bytes(4 * MIB, "xfsz"))

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (MIB, MIB))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)

    result = subprocess.run([str(run_cli.argv0[0]), *CTR, "-in", "p", "-out", "o"], cwd=workdir,
                            preexec_fn=limit_file_size, capture_output=True, timeout=60)
    assert result.returncode == 3, result
    assert b"File too large" in result.stderr
    assert sorted(p.name for p in workdir.iterdir()) == ["p"]


# -- 8. secrets in memory -------------------------------------------------------


@pytest.fixture(scope="session")
def freed_secret_scanner(tmp_path_factory) -> Path:
    library = tmp_path_factory.mktemp("scanner") / "freed_secret_scanner.so"
    source = Path(__file__).parent / "support" / "freed_secret_scanner.c"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(library), str(source), "-ldl"], check=True)
    return library


@pytest.mark.parametrize("secret", ["Zq7shortPW", "Zq7a-passphrase-longer-than-sso"])
@pytest.mark.parametrize("command", ["enc", "seal", "open"])
def test_a_passphrase_leaves_no_freed_unwiped_copy_on_the_heap(run_cli, workdir, freed_secret_scanner, secret,
                                                                 command):
    """-pass pass:P once left two freed, unwiped copies of P on the heap; a
    short P lives inside the argument vector's own buffer, a long one in its
    own block, so both are checked."""
    (workdir / "p").write_bytes(b"plaintext")
    run_cli("seal", "-pass", f"pass:{secret}", "-iter", "1000", "-in", "p", "-out", "s", cwd=workdir).check()
    argv = {"enc": ["enc", "-aes-256-cbc", "-pbkdf2", "-iter", "1000", "-in", "p", "-out", "e"],
            "seal": ["seal", "-iter", "1000", "-in", "p", "-out", "s2"],
            "open": ["open", "-in", "s", "-out", "o"]}[command]
    for source, env in ((f"pass:{secret}", {}), ("env:WC_TEST_PASSPHRASE", {"WC_TEST_PASSPHRASE": secret})):
        result = run_cli(*argv, "-pass", source, cwd=workdir,
                         env={"LD_PRELOAD": str(freed_secret_scanner), "WARPCRYPT_SCAN_SECRET": secret, **env})
        result.check()
        assert b"freed-secret-scanner" not in result.stderr, result.describe()


def test_a_hex_key_leaves_no_freed_unwiped_copy_on_the_heap(run_cli, workdir, freed_secret_scanner):
    key_hex = random_bytes(32, "hex key").hex()
    (workdir / "p").write_bytes(b"plaintext")
    result = run_cli("enc", "-aes-256-ctr", "-K", key_hex, "-iv", IV_HEX, "-in", "p", "-out", "e", cwd=workdir,
                     env={"LD_PRELOAD": str(freed_secret_scanner), "WARPCRYPT_SCAN_SECRET": key_hex})
    result.check()
    assert b"freed-secret-scanner" not in result.stderr, result.describe()


SPELLED_PASSPHRASE = "Zq7a-passphrase-longer-than-sso"
SPELLED_KEY = random_bytes(32, "spelled key").hex()


@pytest.mark.parametrize("args, secret", [
    (["-aes-256-cbc", "-pbkdf2", "-iter", "1000", "--pass=pass:" + SPELLED_PASSPHRASE], SPELLED_PASSPHRASE),
    (["-aes-256-cbc", "-pbkdf2", "-iter", "1000", "--pass", "pass:" + SPELLED_PASSPHRASE], SPELLED_PASSPHRASE),
    (["-aes-256-ctr", "--K=" + SPELLED_KEY, "-iv", IV_HEX], SPELLED_KEY),
    (["-aes-256-ctr", "--K", SPELLED_KEY, "-iv", IV_HEX], SPELLED_KEY),
], ids=["pass-attached", "pass-two-dashes", "K-attached", "K-two-dashes"])
def test_a_secret_in_the_parsers_own_spelling_leaves_no_freed_unwiped_copy(run_cli, workdir, freed_secret_scanner,
                                                                             args, secret):
    """The argument parser (CLI11) copies what it parses into memory it frees
    unwiped, and takes two dashes and attached values (--pass=...) as well:
    it gets a stand-in for a secret however the option is spelled."""
    (workdir / "p").write_bytes(b"plaintext")
    result = run_cli("enc", *args, "-in", "p", "-out", "e", cwd=workdir,
                     env={"LD_PRELOAD": str(freed_secret_scanner), "WARPCRYPT_SCAN_SECRET": secret})
    result.check()
    assert b"freed-secret-scanner" not in result.stderr, result.describe()


# -- 10. invalid values never become defaults ----------------------------------


def test_an_empty_output_path_fails_before_reading_the_input(run_cli, workdir, expect_failure):
    # /dev/zero never ends: only a check made before reading can fail.
    expect_failure(*CTR, "-in", "/dev/zero", "-out", "", cwd=workdir, message=r"cannot write output ''")


@pytest.mark.parametrize("source", ["fd:", "fd: 3", "fd:+3", "fd:-1", "fd:3x"])
def test_a_descriptor_source_takes_digits_only(run_cli, workdir, expect_failure, source):
    """strtol once took " 3" and "+3" for descriptor 3 (found by the
    passphrase_source fuzz target)."""
    (workdir / "p").write_bytes(b"data")
    expect_failure("seal", "-pass", source, "-in", "p", "-out", "o", cwd=workdir,
                   message=r"-pass fd: expects a descriptor number")


# -- 11. the first failure is the one reported ----------------------------------


@pytest.mark.parametrize("key_args", [["-pass", "pass:x", "-pbkdf2"], ["-K", KEY_HEX, "-iv", IV_HEX]])
def test_text_that_is_not_base64_says_so_whatever_the_key(run_cli, workdir, expect_failure, key_args):
    # With a passphrase the salt header is read through the base64 decoder:
    # its short read must not be reported as a missing 'Salted__' header.
    (workdir / "bad.b64").write_bytes(b"!!!not base64###\n")
    expect_failure("enc", "-d", "-a", "-aes-256-cbc", *key_args, "-in", "bad.b64", "-out", "o", cwd=workdir,
                   message=r"not base64")
