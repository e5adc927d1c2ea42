"""`warpcrypt enc` on the streaming engine: its tuning flags change nothing
in the output, --progress and --stats report, random-access decryption
(--offset/--length) equals the slice of a full decryption, and a full disk,
a write limit or SIGINT leave no partial output behind."""

import os
import re
import resource
import signal
import subprocess
import time

import pytest

from wc_support import MIB, assert_same_bytes, cipher, raw_key_args

KIB = 1024


def keyed(name: str, random_bytes) -> list[str]:
    c = cipher(name)
    return [c.flag, *raw_key_args(c, random_bytes(c.key_len, f"k-{name}"), random_bytes(c.iv_len, f"i-{name}"))]


def openssl_enc(run_openssl, data: bytes, args: list[str]) -> bytes:
    return run_openssl.enc(data, *args)


# ------------------------------------------------------------ tuning flags

ENGINE_FLAGS = [
    ["--chunk-size", "4K"],
    ["--chunk-size", "64K", "--threads", "1"],
    ["--chunk-size", "1M", "--threads", "2"],
    ["--backend", "hybrid", "--chunk-size", "8K", "--streams", "3"],
    ["--backend", "cpu", "--chunk-size", "12K", "--devices", "all"],
]


@pytest.mark.parametrize("flags", ENGINE_FLAGS, ids=lambda f: "_".join(a.strip("-") for a in f))
@pytest.mark.parametrize("name", ["aes-256-ctr", "aes-128-cbc", "aes-192-ecb", "aes-128-cfb", "chacha20"])
@pytest.mark.parametrize("direction", ["-e", "-d"])
def test_flags_leave_the_output_unchanged(flags, name, direction, run_cli, run_openssl, random_bytes,
                                          cuda_device_present):
    if "hybrid" in flags and not cuda_device_present:
        pytest.skip("no CUDA device: hybrid is an error there (tests/cli/test_exit_codes.py)")
    args = keyed(name, random_bytes)
    plaintext = random_bytes(5 * 12 * KIB + 17, f"flags-{name}")
    data = plaintext if direction == "-e" else openssl_enc(run_openssl, plaintext, args)
    expected = openssl_enc(run_openssl, data, [direction, *args])
    # Files, then pipes on both sides.
    assert_same_bytes(run_cli.enc(data, direction, *flags, *args), expected, f"files with {flags}")
    piped = run_cli("enc", direction, *flags, *args, stdin=data).check()
    assert_same_bytes(piped.stdout, expected, f"pipes with {flags}")


@pytest.mark.parametrize("args, message", [
    (["--chunk-size", "1000"], r"chunk size must be a multiple of 4 KiB"),
    (["--chunk-size", "2G"], r"chunk size must be a multiple of 4 KiB, at most 1 GiB"),
    (["--chunk-size", "lots"], r"invalid number"),
    (["--streams", "0"], r"--streams must be at least 1"),
    (["--streams", "65"], r"invalid number '65' for --streams"),
    (["--devices", "0,x"], r"invalid number 'x' for --devices"),
    (["--devices", ""], r"invalid number '' for --devices"),
    (["--backend", "fastest"], r"unknown backend 'fastest'"),
])
def test_bad_engine_flag(args, message, run_cli, random_bytes, workdir):
    (workdir / "in").write_bytes(b"x" * 100)
    result = run_cli("enc", *keyed("aes-128-ctr", random_bytes), *args, "-in", "in", "-out", "out", cwd=workdir)
    assert result.returncode == 2, result.describe()
    assert re.search(message, result.stderr_text), result.describe()
    assert sorted(p.name for p in workdir.iterdir()) == ["in"]


# ------------------------------------------------------------ progress and stats

def test_progress_bar_reaches_the_total(run_cli, random_bytes):
    data = random_bytes(8 * MIB, "progress")
    result = run_cli("enc", "--progress", "--chunk-size", "64K", *keyed("aes-128-ctr", random_bytes),
                     stdin=data).check()
    assert len(result.stdout) == len(data)
    # Bytes, rate, and an ETA once the size is known: a pipe's is not.
    assert re.search(r"8\.39 MB\s+[\d.]+ [kMGT]?B/s", result.stderr_text), result.describe()
    assert result.stderr_text.endswith("\n")


def test_progress_bar_on_a_file_shows_percent_and_eta(run_cli, random_bytes, workdir):
    (workdir / "in").write_bytes(random_bytes(8 * MIB, "progress-file"))
    result = run_cli("enc", "--progress", *keyed("aes-128-ctr", random_bytes), "-in", "in", "-out", "out",
                     cwd=workdir).check()
    assert re.search(r"100%\s+8\.39/8\.39 MB\s+[\d.]+ [kMGT]?B/s\s+0:00 left", result.stderr_text), result.describe()


def test_quiet_suppresses_the_progress_bar(run_cli, random_bytes):
    result = run_cli("enc", "--progress", "-q", *keyed("aes-128-ctr", random_bytes), stdin=b"y" * MIB).check()
    assert result.stderr == b"", result.describe()


@pytest.mark.parametrize("name", ["aes-128-ctr", "aes-256-cbc"])
def test_stats_line(name, run_cli, random_bytes):
    size = 3 * MIB + 5
    result = run_cli("enc", "--stats", "--backend", "cpu", *keyed(name, random_bytes),
                     stdin=random_bytes(size, "stats")).check()
    lines = result.stderr_lines
    assert len(lines) == 1, result.describe()
    out_len = cipher(name).ciphertext_len(size)
    assert re.fullmatch(rf"warpcrypt: {name} encryption: {size} bytes in, {out_len} bytes out, "
                        r"[\d.]+ s, [\d.]+ GB/s, cpu 100 %", lines[0]), result.describe()


# ------------------------------------------------------------ random access

RANGE_CIPHERS = ["aes-128-ctr", "aes-256-cbc", "aes-192-ecb", "aes-128-cfb", "aes-256-cfb8", "chacha20",
                 "salsa20"]


@pytest.mark.parametrize("name", RANGE_CIPHERS)
@pytest.mark.parametrize("key_source", ["raw", "pbkdf2"])
def test_range_equals_slice_of_full_decryption(name, key_source, run_cli, random_bytes, workdir):
    plaintext = random_bytes(300 * KIB + 13, f"range-{name}")
    args = keyed(name, random_bytes) if key_source == "raw" else [cipher(name).flag, "-pass", "pass:range",
                                                                  "-pbkdf2"]
    (workdir / "plain").write_bytes(plaintext)
    run_cli("enc", *args, "-in", "plain", "-out", "ct", cwd=workdir).check()
    size = len(plaintext)
    ranges = [(0, 1), (0, size), (1, 16), (15, 17), (4095, 4097), (size - 1, 1), (size - 40, 1000),
              (size, 10), (size + 100, 5), (123_457, 65_536), (7, 0)]
    for offset, length in ranges:
        result = run_cli("enc", "-d", *args, "--offset", offset, "--length", length, "-in", "ct", "-out", "part",
                         cwd=workdir).check()
        assert_same_bytes((workdir / "part").read_bytes(), plaintext[offset:offset + length],
                          f"{name} range [{offset}, +{length})")
    # --offset alone runs to the end.
    run_cli("enc", "-d", *args, "--offset", 1000, "-in", "ct", "-out", "tail", cwd=workdir).check()
    assert_same_bytes((workdir / "tail").read_bytes(), plaintext[1000:], f"{name} --offset 1000")


@pytest.mark.parametrize("args, message", [
    (["-e", "--offset", "16"], r"only when decrypting"),
    (["-d", "--offset", "16", "-aes-128-ofb"], r"aes-128-ofb has no random access"),
])
def test_range_refusals(args, message, run_cli, random_bytes, workdir):
    (workdir / "ct").write_bytes(b"z" * 64)
    result = run_cli("enc", *keyed("aes-128-ctr", random_bytes), *args, "-in", "ct", "-out", "part", cwd=workdir)
    assert result.returncode == 2 and re.search(message, result.stderr_text), result.describe()
    assert not (workdir / "part").exists()


def test_range_needs_a_regular_input(run_cli, random_bytes):
    result = run_cli("enc", "-d", *keyed("aes-128-ctr", random_bytes), "--offset", "16", stdin=b"z" * 64)
    assert result.returncode == 2 and re.search(r"regular input file", result.stderr_text), result.describe()


# ------------------------------------------------------------ failures leave nothing

def test_full_device_is_a_clean_error(run_cli, random_bytes):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    result = run_cli("enc", *keyed("aes-128-ctr", random_bytes), "-out", "/dev/full", stdin=b"q" * MIB)
    assert result.returncode == 3, result.describe()
    assert re.fullmatch(r"warpcrypt: encryption failed: No space left on device\s*", result.stderr_text), \
        result.describe()


def _limit_file_size(limit: int):
    def apply():
        # Past the limit a write fails with EFBIG instead of killing the
        # process, as a full small filesystem would fail it with ENOSPC.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.parametrize("size", [MIB, 40 * MIB])
def test_write_limit_leaves_no_partial_output(size, warpcrypt_binary, random_bytes, workdir):
    (workdir / "in").write_bytes(random_bytes(size, "limit"))
    (workdir / "existing").write_bytes(b"keep me")
    for out in ("fresh", "existing"):
        proc = subprocess.run([str(warpcrypt_binary), "enc", *keyed("aes-256-ctr", random_bytes),
                               "--chunk-size", "256K", "-in", "in", "-out", out],
                              cwd=workdir, capture_output=True, preexec_fn=_limit_file_size(size // 2), timeout=120)
        assert proc.returncode == 3, proc
        assert b"File too large" in proc.stderr, proc
        assert sorted(p.name for p in workdir.iterdir()) == ["existing", "in"]
        assert (workdir / "existing").read_bytes() == b"keep me"


def test_sigint_leaves_no_partial_output(warpcrypt_binary, random_bytes, workdir):
    proc = subprocess.Popen([str(warpcrypt_binary), "enc", *keyed("aes-128-ctr", random_bytes), "-out", "out"],
                            cwd=workdir, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    # Some output is on its way, the input still open: the run is mid-stream.
    proc.stdin.write(random_bytes(4 * MIB, "sigint"))
    proc.stdin.flush()
    deadline = time.monotonic() + 30
    while not any(p.name.startswith(".out.warpcrypt-") for p in workdir.iterdir()):
        assert time.monotonic() < deadline, "no temporary output appeared"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    proc.stdin.close()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGINT
    assert list(workdir.iterdir()) == []


# ------------------------------------------------------------ start-up cost

def _loads_the_cuda_driver(run) -> bool:
    # The dynamic loader names every library it loads (LD_DEBUG=files);
    # the CUDA runtime opens the driver, libcuda, when CUDA is first used.
    return "file=libcuda.so" in run.stderr_text


def test_jobs_that_stay_on_the_cpu_never_start_cuda(run_cli, tmp_path, random_bytes):
    """Starting the CUDA driver costs a tenth of a second or more on a GPU
    machine: `enc`, `seal` and `age` on a file with the default backend
    (which keeps files on the CPU) and with --backend cpu must not pay it."""
    debug = {"LD_DEBUG": "files"}
    if not _loads_the_cuda_driver(run_cli("devices", env=debug)):
        pytest.skip("no CUDA driver on this machine: nothing to start")
    source = tmp_path / "plain"
    source.write_bytes(random_bytes(3 * MIB, "startup"))
    (tmp_path / "key").write_bytes(random_bytes(32, "startup-key"))
    run_cli("age-keygen", "-o", tmp_path / "identity").check()
    recipient = run_cli("age-keygen", "-y", tmp_path / "identity").check().stdout.decode().strip()
    for backend in ([], ["--backend", "cpu"]):
        commands = [
            ["enc", "-aes-256-ctr", "-K", "00" * 32, "-iv", "11" * 16, "-in", source, "-out", tmp_path / "enc"],
            ["seal", "-keyfile", tmp_path / "key", "-in", source, "-out", tmp_path / "sealed"],
            ["open", "-keyfile", tmp_path / "key", "-in", tmp_path / "sealed", "-out", tmp_path / "opened"],
            ["age", "-r", recipient, "-o", tmp_path / "age", source],
            ["age", "-d", "-i", tmp_path / "identity", "-o", tmp_path / "aged", tmp_path / "age"],
        ]
        for command in commands:
            run = run_cli(*command[:1], *backend, *command[1:], env=debug).check()
            assert not _loads_the_cuda_driver(run), f"{command[0]} {backend} started CUDA"


def test_the_device_count_honours_cuda_visible_devices(run_cli, cuda_device_present, expect_failure, workdir):
    """The library counts devices from the kernel driver's list of GPUs
    where that list must be CUDA's (it does not start the driver);
    CUDA_VISIBLE_DEVICES, which the list does not follow, hands the count
    back to CUDA. Hiding every device must
    leave hybrid refusing, never running on the CPU alone, and showing one
    must show one."""
    if not cuda_device_present:
        pytest.skip("no CUDA device: the count is CUDA's own zero")
    shown = run_cli("devices", env={"CUDA_VISIBLE_DEVICES": "0"}).check().stdout.decode().splitlines()
    assert len(shown) == 1 and shown[0].startswith("0: "), shown
    (workdir / "plain").write_bytes(b"data" * 1000)
    expect_failure("seal", "-pass", "pass:x", "--backend", "hybrid", "-in", "plain", "-out", "sealed", cwd=workdir,
                   env={"CUDA_VISIBLE_DEVICES": ""}, message="run on the CPU with backend cpu")
