"""A program run at a real pseudo-terminal (Python's pty), for the CLI
tests that type passphrases or watch what a terminal shows."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time

TIMEOUT_S = 30


class Terminal:
    """A program whose controlling terminal is a pty of `columns` columns;
    the streams in `on_tty` ("stdin", "stdout", "stderr") are that terminal,
    the others /dev/null or, for stdout, `stdout_path`."""

    def __init__(self, argv, *, columns=80, on_tty=("stdin", "stdout", "stderr"), cwd=None, stdout_path=None):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        devnull = os.open(os.devnull, os.O_RDWR)
        out = open(stdout_path, "wb") if stdout_path else None
        streams = {name: (slave if name in on_tty else devnull) for name in ("stdin", "stdout", "stderr")}
        if out is not None:
            streams["stdout"] = out.fileno()

        def controlling_terminal():
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=streams["stdin"], stdout=streams["stdout"],
                                     stderr=streams["stderr"], cwd=cwd, start_new_session=True,
                                     preexec_fn=controlling_terminal)
        os.close(slave)
        os.close(devnull)
        if out is not None:
            out.close()
        self.transcript = b""

    def read_until(self, pattern: bytes, count: int = 1) -> None:
        """Until `pattern` has come `count` times."""
        self._wait(lambda: len(re.findall(pattern, self.transcript)) >= count,
                   lambda: f"no {pattern!r} in {self.transcript!r}", lambda: self._read(0.1))

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def type_hidden(self, text: str) -> None:
        """Types once the program has turned echo off, as a person would:
        the prompt comes a moment before echo goes off."""
        self._wait(lambda: not termios.tcgetattr(self.master)[3] & termios.ECHO, lambda: "echo never turned off",
                   lambda: time.sleep(0.01))
        self.type(text)

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the program closed the terminal
            return False
        self.transcript += chunk
        return bool(chunk)

    def finish(self) -> int:
        """The program's exit status. What it writes meanwhile is read as it
        comes, so that a program with much to say never blocks on a full
        terminal, and the rest once it has exited."""
        self._wait(lambda: self.proc.poll() is not None,
                   lambda: f"still running after {TIMEOUT_S} s: {self.transcript!r}", lambda: self._read(0.05))
        while select.select([self.master], [], [], 0)[0] and self._read(0):
            pass
        os.close(self.master)
        return self.proc.returncode

    def _wait(self, done, failure, step) -> None:
        """Runs `step` until `done()`, for at most TIMEOUT_S; then fails the
        test with `failure()`."""
        deadline = time.monotonic() + TIMEOUT_S
        while not done():
            if time.monotonic() >= deadline:
                self._fail(failure())
            step()

    def _fail(self, message: str) -> None:
        """Kills the program, its whole session, before failing the test, so
        that nothing it started outlives the test."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)
        raise AssertionError(message)


PROMPT = rb"[^\r\n]*pass(word|phrase)[^\r\n]*:"


def prompts(transcript: bytes) -> list[bytes]:
    return [match.group(0) for match in re.finditer(PROMPT, transcript)]


def ask(argv, answers, **kwargs) -> tuple[int, bytes]:
    """Runs `argv` at a terminal, typing each answer after the next prompt."""
    terminal = Terminal(argv, **kwargs)
    for count, answer in enumerate(answers, 1):
        terminal.read_until(PROMPT, count)
        terminal.type_hidden(answer + "\n")
    return terminal.finish(), terminal.transcript
