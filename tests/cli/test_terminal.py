"""What warpcrypt does at a terminal, run in a real pseudo-terminal (Python's
pty): passphrases asked without echo, twice when encrypting, as openssl asks
them; `-pass stdin` without echo; progress lines that fit a 60-column
window, redrawn in place; and `seal` refusing to write binary to it."""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import pytest

import terminal_support
from terminal_support import TIMEOUT_S, Terminal, ask, prompts
from wc_support import assert_same_bytes, random_bytes

PASSPHRASE = "s3cret-typed-phrase"


def test_enc_asks_twice_without_echo_as_openssl_does(warpcrypt_binary, openssl_binary, tmp_path):
    (tmp_path / "p").write_bytes(random_bytes(5000, "prompted"))
    transcripts = {}
    for name, binary in (("warpcrypt", warpcrypt_binary), ("openssl", openssl_binary)):
        code, transcripts[name] = ask([str(binary), "enc", "-aes-256-cbc", "-pbkdf2", "-in", "p", "-out", f"c-{name}"],
                                      [PASSPHRASE, PASSPHRASE], cwd=tmp_path)
        assert code == 0, transcripts[name]
        assert PASSPHRASE.encode() not in transcripts[name], f"{name} echoed the passphrase"
    assert prompts(transcripts["warpcrypt"]) == prompts(transcripts["openssl"])
    assert len(prompts(transcripts["warpcrypt"])) == 2
    opened = subprocess.run([str(openssl_binary), "enc", "-d", "-aes-256-cbc", "-pbkdf2", "-pass",
                             f"pass:{PASSPHRASE}", "-in", tmp_path / "c-warpcrypt"], capture_output=True, check=True)
    assert_same_bytes(opened.stdout, (tmp_path / "p").read_bytes(), "openssl opens what the prompt encrypted")


def test_decryption_asks_once(warpcrypt_binary, openssl_binary, tmp_path):
    data = random_bytes(999, "asked-once")
    (tmp_path / "c").write_bytes(subprocess.run(
        [str(openssl_binary), "enc", "-aes-128-ctr", "-pbkdf2", "-pass", f"pass:{PASSPHRASE}"], input=data,
        capture_output=True, check=True).stdout)
    code, transcript = ask([str(warpcrypt_binary), "enc", "-d", "-aes-128-ctr", "-pbkdf2", "-in", "c", "-out", "p"],
                           [PASSPHRASE], cwd=tmp_path)
    assert code == 0 and len(prompts(transcript)) == 1, transcript
    assert_same_bytes((tmp_path / "p").read_bytes(), data, "decrypted with the typed passphrase")


def test_passphrases_that_differ_are_refused(warpcrypt_binary, tmp_path):
    (tmp_path / "p").write_bytes(b"data")
    code, transcript = ask([str(warpcrypt_binary), "enc", "-aes-128-cbc", "-in", "p", "-out", "c"],
                           [PASSPHRASE, PASSPHRASE + "x"], cwd=tmp_path)
    assert code == 2 and b"the passphrases didn't match" in transcript, transcript
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("how", ["^C typed", "SIGTERM sent", "SIGHUP sent"])
def test_a_signal_at_the_prompt_leaves_a_terminal_that_echoes(how, warpcrypt_binary, tmp_path):
    """The prompt turns echo off; a program ended by a signal while it waits
    must not leave the shell a terminal that hides what is typed. It dies by
    the signal, after putting echo back, and writes no output file."""
    import termios

    (tmp_path / "p").write_bytes(b"data")
    terminal = Terminal([str(warpcrypt_binary), "enc", "-aes-128-cbc", "-in", "p", "-out", "c"], cwd=tmp_path)
    terminal.read_until(terminal_support.PROMPT)
    terminal.type_hidden("half a passphr")  # echo is off now
    signal_number = {"^C typed": signal.SIGINT, "SIGTERM sent": signal.SIGTERM, "SIGHUP sent": signal.SIGHUP}[how]
    if how == "^C typed":
        terminal.type("\x03")
    else:
        terminal.proc.send_signal(signal_number)
    terminal.proc.wait(timeout=TIMEOUT_S)
    echoing = bool(termios.tcgetattr(terminal.master)[3] & termios.ECHO)
    assert terminal.finish() == -signal_number, terminal.transcript
    assert echoing, "the terminal was left without echo"
    assert b"half a passphr" not in terminal.transcript
    assert not (tmp_path / "c").exists()


def test_no_terminal_no_prompt(run_cli, workdir):
    """Without a terminal, enc fails at once rather than read the data as a passphrase."""
    result = subprocess.run([*run_cli.argv0, "enc", "-aes-128-cbc"], input=b"data", capture_output=True,
                            start_new_session=True, timeout=TIMEOUT_S)
    assert result.returncode == 2 and b"no terminal" in result.stderr, result


def test_pass_stdin_at_a_terminal_is_not_echoed(warpcrypt_binary, openssl_binary, tmp_path):
    data = random_bytes(300, "stdin-pass")
    (tmp_path / "p").write_bytes(data)
    terminal = Terminal([str(warpcrypt_binary), "enc", "-aes-128-cbc", "-pbkdf2", "-pass", "stdin", "-in", "p",
                         "-out", "c"], cwd=tmp_path)
    terminal.read_until(rb"passphrase:")
    terminal.type_hidden(PASSPHRASE + "\n")
    assert terminal.finish() == 0, terminal.transcript
    assert PASSPHRASE.encode() not in terminal.transcript
    opened = subprocess.run([str(openssl_binary), "enc", "-d", "-aes-128-cbc", "-pbkdf2", "-pass",
                             f"pass:{PASSPHRASE}", "-in", tmp_path / "c"], capture_output=True, check=True)
    assert_same_bytes(opened.stdout, data, "the passphrase read from the terminal")


def assert_fits(transcript: bytes, columns: int) -> list[bytes]:
    """The progress redraws of `transcript`: each one line, within the width."""
    draws = [piece for line in transcript.split(b"\n") for piece in line.split(b"\r") if piece.strip()]
    assert draws, transcript
    for draw in draws:
        assert len(draw) < columns, f"{len(draw)} columns: {draw!r}"
    return draws


@pytest.mark.parametrize("columns", [60, 40])
def test_enc_progress_fits_the_terminal(columns, warpcrypt_binary, tmp_path):
    (tmp_path / "p").write_bytes(random_bytes(8 << 20, "progress"))
    terminal = Terminal([str(warpcrypt_binary), "enc", "-aes-128-ctr", "-K", "00" * 16, "-iv", "00" * 16,
                         "-in", "p", "-out", "c"], columns=columns, on_tty=("stderr",), cwd=tmp_path)
    assert terminal.finish() == 0, terminal.transcript
    draws = assert_fits(terminal.transcript, columns)
    assert b"\r" in terminal.transcript, "redrawn in place"
    assert re.search(rb"100%.*[kMGT]?B/s", draws[-1]), draws[-1]


def test_a_small_file_s_progress_counts_in_its_own_unit(warpcrypt_binary, tmp_path):
    """3 MB reads "3.00/3.00 MB", not "0.00/0.00 GB"."""
    (tmp_path / "p").write_bytes(random_bytes(3_000_000, "small progress"))
    terminal = Terminal([str(warpcrypt_binary), "enc", "-aes-128-ctr", "-K", "00" * 16, "-iv", "00" * 16,
                         "-in", "p", "-out", "c"], columns=100, on_tty=("stderr",), cwd=tmp_path)
    assert terminal.finish() == 0, terminal.transcript
    last = assert_fits(terminal.transcript, 100)[-1]
    assert re.search(rb"100%  3\.00/3\.00 MB  [0-9.]+ [kMGT]?B/s", last), last


@pytest.mark.parametrize("command", ["seal", "open"])
def test_seal_and_open_show_progress(command, warpcrypt_binary, tmp_path):
    (tmp_path / "p").write_bytes(random_bytes(1 << 20, "seal-progress"))
    subprocess.run([str(warpcrypt_binary), "seal", "-pass", "pass:x", "-iter", "1", "-in", "p", "-out", "s"],
                   cwd=tmp_path, check=True)
    args = ["seal", "-pass", "pass:x", "-iter", "1", "-in", "p", "-out", "s2"] if command == "seal" else \
        ["open", "-pass", "pass:x", "-in", "s", "-out", "o"]
    terminal = Terminal([str(warpcrypt_binary), *args], columns=60, on_tty=("stderr",), cwd=tmp_path)
    assert terminal.finish() == 0, terminal.transcript
    assert re.search(rb"100%", assert_fits(terminal.transcript, 60)[-1]), terminal.transcript


def test_speed_sweep_shows_progress(warpcrypt_binary, tmp_path):
    terminal = Terminal([str(warpcrypt_binary), "speed", "-evp", "aes-128-ctr", "-bytes", "16", "-bytes", "64",
                         "-seconds", "0.05", "--threads", "1"], columns=60, on_tty=("stderr",), cwd=tmp_path)
    assert terminal.finish() == 0, terminal.transcript
    draws = assert_fits(terminal.transcript, 60)
    assert re.search(rb"2/2", draws[-1]), draws


def test_quiet_when_stderr_is_no_terminal(run_cli):
    result = run_cli("enc", "-aes-128-ctr", "-K", "00" * 16, "-iv", "00" * 16, stdin=b"x" * (4 << 20)).check()
    assert result.stderr == b""


def test_seal_refuses_binary_to_a_terminal(warpcrypt_binary, tmp_path):
    (tmp_path / "p").write_bytes(b"secret data")
    terminal = Terminal([str(warpcrypt_binary), "seal", "-pass", "pass:x", "-in", "p"], cwd=tmp_path)
    assert terminal.finish() == 2
    assert b"refusing to write sealed binary data to a terminal" in terminal.transcript
    # -f writes it all the same; -out and a pipe are never refused.
    forced = Terminal([str(warpcrypt_binary), "seal", "-f", "-pass", "pass:x", "-iter", "1", "-in", "p"],
                      cwd=tmp_path)
    assert forced.finish() == 0, forced.transcript
    to_file = Terminal([str(warpcrypt_binary), "seal", "-pass", "pass:x", "-iter", "1", "-in", "p", "-out", "s"],
                       cwd=tmp_path)
    assert to_file.finish() == 0 and (tmp_path / "s").stat().st_size > 0


def test_seal_asks_twice_and_open_once(warpcrypt_binary, tmp_path):
    data = random_bytes(10000, "seal-prompt")
    (tmp_path / "p").write_bytes(data)
    code, transcript = ask([str(warpcrypt_binary), "seal", "-iter", "1", "-in", "p", "-out", "s"],
                           [PASSPHRASE, PASSPHRASE], cwd=tmp_path)
    assert code == 0 and len(prompts(transcript)) == 2 and PASSPHRASE.encode() not in transcript, transcript
    code, transcript = ask([str(warpcrypt_binary), "open", "-in", "s", "-out", "o"], [PASSPHRASE], cwd=tmp_path)
    assert code == 0, transcript
    assert_same_bytes((tmp_path / "o").read_bytes(), data, "opened with the typed passphrase")


# The harness itself.


def test_a_program_that_never_ends_fails_the_test_and_is_killed(monkeypatch):
    monkeypatch.setattr(terminal_support, "TIMEOUT_S", 0.5)
    terminal = Terminal(["sleep", "60"])
    with pytest.raises(AssertionError, match="still running"):
        terminal.finish()
    assert terminal.proc.returncode == -signal.SIGKILL


def test_a_program_with_much_to_say_never_blocks_on_the_terminal():
    """A megabyte is far more than a pty buffers: finish reads while it waits."""
    terminal = Terminal(["head", "-c", "1000000", "/dev/zero"])
    assert terminal.finish() == 0
    assert terminal.transcript == bytes(1000000)
