"""Where bytes come from and go to: pipes and files, special files, existing
outputs, and the warpcrypt-only switches (--backend, --threads, -v, -q)."""

from __future__ import annotations

import os
import re
import stat
import threading

import pytest

from wc_support import (
    GPU_CAPABLE_CIPHERS,
    MIB,
    Sodium,
    assert_same_bytes,
    cipher,
    raw_key_args,
    size_id,
)


def keyed(name: str, random_bytes) -> list[str]:
    c = cipher(name)
    return [c.flag, *raw_key_args(c, random_bytes(c.key_len, f"io-key-{name}"),
                                  random_bytes(c.iv_len, f"io-iv-{name}"))]


@pytest.mark.parametrize("name", ("aes-128-cbc", "chacha20"))
@pytest.mark.parametrize("direction", ("-e", "-d"))
@pytest.mark.parametrize("source", ("stdin", "file"))
@pytest.mark.parametrize("sink", ("stdout", "file"))
def test_pipes_and_files_agree(name, direction, source, sink, run_cli, run_openssl,
                               random_bytes, tmp_path):
    args = keyed(name, random_bytes)
    plaintext = random_bytes(MIB + 3, "pipes")
    ciphertext = run_openssl.enc(plaintext, *args)
    data, expected = (plaintext, ciphertext) if direction == "-e" else (ciphertext, plaintext)

    cmd, kwargs = ["enc", direction, *args], {}
    if source == "stdin":
        kwargs["stdin"] = data
    else:
        (tmp_path / "in").write_bytes(data)
        cmd += ["-in", tmp_path / "in"]
    if sink == "file":
        cmd += ["-out", tmp_path / "out"]
    result = run_cli(*cmd, **kwargs).check()
    got = result.stdout if sink == "stdout" else (tmp_path / "out").read_bytes()
    assert_same_bytes(got, expected, f"{source} -> {sink}")
    if sink == "file":
        assert result.stdout == b""


def test_success_leaves_only_the_output(run_cli, random_bytes, workdir):
    (workdir / "plain").write_bytes(random_bytes(5000, "only-output"))
    run_cli("enc", *keyed("aes-256-ctr", random_bytes), "-in", "plain", "-out", "enc",
            cwd=workdir).check()
    assert sorted(p.name for p in workdir.iterdir()) == ["enc", "plain"]
    assert (workdir / "enc").stat().st_size == 5000


def test_existing_output_is_fully_replaced(run_cli, run_openssl, random_bytes, tmp_path):
    """A longer old file must not leave a tail behind the new content."""
    args = keyed("aes-128-ctr", random_bytes)
    plaintext = random_bytes(100, "replace")
    (tmp_path / "in").write_bytes(plaintext)
    out = tmp_path / "out"
    out.write_bytes(b"old content " * 1000)
    run_cli("enc", *args, "-in", tmp_path / "in", "-out", out).check()
    assert_same_bytes(out.read_bytes(), run_openssl.enc(plaintext, *args), "replaced output")


def test_output_through_symlink_writes_the_target(run_cli, run_openssl, random_bytes, tmp_path):
    """Like openssl: -out LINK writes into LINK's target; the link survives."""
    args = keyed("aes-128-ctr", random_bytes)
    plaintext = random_bytes(100, "symlink-out")
    (tmp_path / "in").write_bytes(plaintext)
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_bytes(b"old")
    link.symlink_to(target)
    run_cli("enc", *args, "-in", tmp_path / "in", "-out", link).check()
    assert link.is_symlink(), "the symlink was replaced by a regular file"
    assert_same_bytes(target.read_bytes(), run_openssl.enc(plaintext, *args), "symlink target")


@pytest.mark.parametrize("size", (0, MIB + 3), ids=size_id)
def test_out_dev_null(size, run_cli, random_bytes, tmp_path):
    (tmp_path / "in").write_bytes(random_bytes(size, "devnull"))
    result = run_cli("enc", *keyed("aes-256-cbc", random_bytes),
                     "-in", tmp_path / "in", "-out", "/dev/null").check()
    assert result.stdout == b""
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null was replaced!"
    assert list(tmp_path.iterdir()) == [tmp_path / "in"]


def test_dev_null_as_both_input_and_output(run_cli, random_bytes):
    """Two special files that happen to be the same device are not "the same
    file" in the sense of overwriting the input; openssl accepts this."""
    result = run_cli("enc", *keyed("aes-128-ctr", random_bytes),
                     "-in", "/dev/null", "-out", "/dev/null").check()
    assert result.stdout == b""


def test_input_from_a_pipe_path(run_cli, run_openssl, random_bytes):
    """-in /dev/fd/N, as the shell's <(...) passes it: not seekable, no size."""
    args = keyed("aes-256-cbc", random_bytes)
    plaintext = random_bytes(200000, "pipe-path")
    read_end, write_end = os.pipe()
    feeder = threading.Thread(target=lambda: (os.write(write_end, plaintext),
                                              os.close(write_end)), daemon=True)
    feeder.start()
    try:
        result = run_cli("enc", *args, "-in", f"/dev/fd/{read_end}", pass_fds=(read_end,))
    finally:
        os.close(read_end)
        feeder.join(10)
    assert_same_bytes(result.check().stdout, run_openssl.enc(plaintext, *args), "-in /dev/fd/N")


def test_output_file_modes(run_cli, run_openssl, random_bytes, tmp_path):
    """A new output gets the mode openssl would give it (0666 & ~umask, not a
    temp file's 0600); an existing output keeps its mode."""
    args = keyed("aes-128-ctr", random_bytes)
    (tmp_path / "in").write_bytes(b"mode test")
    run_cli("enc", *args, "-in", tmp_path / "in", "-out", tmp_path / "ours").check()
    run_openssl("enc", *args, "-in", tmp_path / "in", "-out", tmp_path / "theirs").check()
    mode = lambda name: stat.S_IMODE((tmp_path / name).stat().st_mode)  # noqa: E731
    assert mode("ours") == mode("theirs")
    existing = tmp_path / "existing"
    existing.write_bytes(b"old")
    existing.chmod(0o640)
    run_cli("enc", *args, "-in", tmp_path / "in", "-out", existing).check()
    assert mode("existing") == 0o640


def test_in_dev_null_is_empty_input(run_cli, run_openssl, random_bytes, tmp_path):
    args = keyed("aes-128-cbc", random_bytes)
    ours = run_cli("enc", *args, "-in", "/dev/null").check().stdout
    assert_same_bytes(ours, run_openssl.enc(b"", *args), "encryption of /dev/null")
    assert len(ours) == 16


def test_out_dev_stdout(run_cli, run_openssl, random_bytes, tmp_path):
    args = keyed("chacha20", random_bytes)
    plaintext = random_bytes(70000, "dev-stdout")
    (tmp_path / "in").write_bytes(plaintext)
    result = run_cli("enc", *args, "-in", tmp_path / "in", "-out", "/dev/stdout").check()
    assert_same_bytes(result.stdout, run_openssl.enc(plaintext, *args), "-out /dev/stdout")


def test_out_fifo_is_written_not_replaced(run_cli, run_openssl, random_bytes, tmp_path):
    args = keyed("aes-192-ctr", random_bytes)
    plaintext = random_bytes(300000, "fifo")
    (tmp_path / "in").write_bytes(plaintext)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        result = run_cli("enc", *args, "-in", tmp_path / "in", "-out", fifo)
    finally:
        if reader.is_alive():  # unblock the reader if warpcrypt never opened the fifo
            with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
        reader.join(10)
    result.check()
    assert stat.S_ISFIFO(fifo.lstat().st_mode), "the fifo was replaced"
    assert_same_bytes(received[0], run_openssl.enc(plaintext, *args), "bytes read from the fifo")


@pytest.mark.parametrize("threads", ("1", "2", "7"))
@pytest.mark.parametrize("name", ("aes-256-ctr", "aes-128-cbc", "chacha20"))
def test_threads_do_not_change_output(threads, name, run_cli, run_openssl, random_bytes):
    args = keyed(name, random_bytes)
    plaintext = random_bytes(4 * MIB + 7, "threads")
    expected = run_openssl.enc(plaintext, *args)
    assert_same_bytes(run_cli.enc(plaintext, "--threads", threads, *args), expected,
                      f"--threads {threads}")
    assert_same_bytes(run_cli.enc(expected, "-d", "--threads", threads, *args), plaintext,
                      f"--threads {threads} decrypt")


# ----------------------------------------------------------------- backends

def reference_encrypt(c, key: bytes, iv: bytes, plaintext: bytes, run_openssl,
                      sodium: Sodium) -> bytes:
    if c.in_openssl:
        return run_openssl.enc(plaintext, c.flag, *raw_key_args(c, key, iv))
    return sodium.xor(key, iv, plaintext)


@pytest.mark.parametrize("backend", ("cpu", "auto", "gpu"))
@pytest.mark.parametrize("c", GPU_CAPABLE_CIPHERS, ids=str)
@pytest.mark.parametrize("size", (0, 17, 8 * MIB + 5), ids=size_id)
def test_backends_agree_with_reference(backend, c, size, run_cli, run_openssl, sodium,
                                       random_bytes, backend_args):
    flags = backend_args(backend)
    key, iv = random_bytes(c.key_len, f"be-key-{c}"), random_bytes(c.iv_len, f"be-iv-{c}")
    plaintext = random_bytes(size, "backend")
    expected = reference_encrypt(c, key, iv, plaintext, run_openssl, sodium)
    args = (*flags, c.flag, *raw_key_args(c, key, iv))
    assert_same_bytes(run_cli.enc(plaintext, *args), expected, f"--backend {backend} encrypt")
    assert_same_bytes(run_cli.enc(expected, "-d", *args), plaintext, f"--backend {backend} decrypt")


@pytest.mark.parametrize("backend, ran, not_ran", [("cpu", r"\bcpu\b", r"\b(gpu|cuda)\b"),
                                                  ("gpu", r"\b(gpu|cuda)\b", r"\bcpu\b")])
def test_verbose_names_the_backend_that_ran(backend, ran, not_ran, run_cli, random_bytes,
                                            backend_args):
    result = run_cli("enc", "-v", *backend_args(backend), *keyed("aes-128-ctr", random_bytes),
                     stdin=random_bytes(MIB, "verbose-backend")).check()
    assert re.search(ran, result.stderr_text, re.I), result.describe()
    assert not re.search(not_ran, result.stderr_text, re.I), result.describe()


def test_auto_without_device_says_cpu_when_verbose(run_cli, random_bytes, cuda_device_present):
    if cuda_device_present:
        pytest.skip("a CUDA device is present")
    result = run_cli("enc", "-v", "--backend", "auto", *keyed("aes-128-ctr", random_bytes),
                     stdin=b"x" * 1000).check()
    assert re.search(r"cpu", result.stderr_text, re.I), result.describe()
    assert len(result.stdout) == 1000


# ------------------------------------------------------------ verbosity

@pytest.mark.parametrize("key_source", ("raw", "pbkdf2"))
def test_success_is_silent_on_stderr(key_source, run_cli, random_bytes):
    """Scripts rely on openssl's quiet stderr; no progress bar off a terminal."""
    args = (keyed("aes-128-cbc", random_bytes) if key_source == "raw"
            else ["-aes-128-cbc", "-pass", "pass:quiet please", "-pbkdf2"])
    result = run_cli("enc", *args, stdin=random_bytes(3 * MIB, "silent")).check()
    assert result.stderr == b"", result.describe()


def test_q_is_silent_and_v_does_not_change_output(run_cli, random_bytes):
    args = keyed("aes-256-ctr", random_bytes)
    data = random_bytes(100000, "verbosity")
    quiet = run_cli("enc", "-q", *args, stdin=data).check()
    verbose = run_cli("enc", "-v", *args, stdin=data).check()
    assert quiet.stderr == b""
    assert quiet.stdout == verbose.stdout
    assert len(quiet.stdout) == len(data)
