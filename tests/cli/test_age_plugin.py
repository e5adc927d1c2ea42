"""`warpcrypt age` with age plugins: recipients age1wctest1... and identities
AGE-PLUGIN-WCTEST-1... run tests/cli/plugins/age-plugin-wctest, a plugin
that speaks both sides of the protocol and wraps the file key with X25519.
Files go both ways with the real `age`, which runs the same plugin, so the
protocol is checked against age's own client. Then the plugin misbehaves
($WCTEST_MODE) and every failure must be one clear line, a non-zero exit, no
output file and no plugin process left behind; names that could reach past
the PATH lookup are refused before anything runs."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from terminal_support import Terminal
from wc_support import reference_age

PLUGINS = Path(__file__).parent / "plugins"
AGE, AGE_KEYGEN = reference_age()
PIN = "4711-wctest-pin"

# The plugin's own Bech32, to spell keys with names a real plugin would not
# have.
_loader = importlib.machinery.SourceFileLoader("wctest", str(PLUGINS / "age-plugin-wctest"))
wctest = importlib.util.module_from_spec(importlib.util.spec_from_loader("wctest", _loader))
_loader.exec_module(wctest)


def search_path(with_plugins: bool = True) -> str:
    """The plugin's directory, then this Python (which has `cryptography`)
    and the system's programs."""
    folders = [str(Path(sys.executable).parent), "/usr/bin", "/bin"]
    return os.pathsep.join(([str(PLUGINS)] if with_plugins else []) + folders)


@pytest.fixture
def env(tmp_path_factory):
    # Beside the test's directory, which failures must leave unchanged.
    return {"PATH": search_path(), "WCTEST_PIDFILE": str(tmp_path_factory.mktemp("pids") / "plugin.pids")}


def plugin_pids(env) -> list[int]:
    path = Path(env["WCTEST_PIDFILE"])
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def assert_no_plugin_left(env) -> None:
    """Every plugin run has exited (and, its parent gone, been reaped)."""
    for pid in plugin_pids(env):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0]
        except FileNotFoundError:
            continue
        pytest.fail(f"plugin process {pid} is still there, state {state}")


def generate(env) -> tuple[str, str]:
    """A fresh (identity, recipient) pair from the plugin (a run not counted
    in its pid file)."""
    made = subprocess.run(["age-plugin-wctest", "--generate"], env={**os.environ, "PATH": env["PATH"]},
                          capture_output=True, check=True, text=True)
    identity, recipient = made.stdout.split()
    return identity, recipient


@pytest.fixture
def keys(env, tmp_path):
    identity, recipient = generate(env)
    (tmp_path / "plugin.key").write_text(f"# a wctest plugin identity\n{identity}\n")
    return {"identity": identity, "recipient": recipient, "file": tmp_path / "plugin.key"}


@pytest.fixture
def plain(tmp_path):
    path = tmp_path / "plain"
    path.write_bytes(os.urandom(200 * 1024 + 3))
    return path


def test_round_trip_through_the_plugin(run_cli, env, keys, plain, tmp_path):
    run_cli("age", "-r", keys["recipient"], "-o", tmp_path / "file.age", plain, env=env).check()
    header = (tmp_path / "file.age").read_bytes().split(b"\n---", 1)[0]
    assert re.findall(rb"^-> (\S+)", header, re.M) == [b"wctest"]
    run_cli("age", "-d", "-i", keys["file"], "-o", tmp_path / "back", tmp_path / "file.age", env=env).check()
    assert (tmp_path / "back").read_bytes() == plain.read_bytes()
    assert len(plugin_pids(env)) == 2
    assert_no_plugin_left(env)


def test_another_identity_of_the_plugin_does_not_open_it(run_cli, expect_failure, env, keys, plain, tmp_path):
    run_cli("age", "-r", keys["recipient"], "-o", tmp_path / "file.age", plain, env=env).check()
    other, _ = generate(env)
    (tmp_path / "other.key").write_text(other + "\n")
    expect_failure("age", "-d", "-i", tmp_path / "other.key", "-o", tmp_path / "out", tmp_path / "file.age",
                   cwd=tmp_path, env=env, message="no identity matched", secrets=[other])


def test_files_go_both_ways_with_age(run_cli, env, keys, plain, tmp_path):
    full_env = {**os.environ, **env}
    subprocess.run([AGE, "-r", keys["recipient"], "-o", tmp_path / "by-age.age", plain], env=full_env, check=True)
    run_cli("age", "-d", "-i", keys["file"], "-o", tmp_path / "from-age", tmp_path / "by-age.age", env=env).check()
    assert (tmp_path / "from-age").read_bytes() == plain.read_bytes()
    run_cli("age", "-a", "-r", keys["recipient"], "-o", tmp_path / "ours.age", plain, env=env).check()
    subprocess.run([AGE, "-d", "-i", keys["file"], "-o", tmp_path / "by-age", tmp_path / "ours.age"], env=full_env,
                   check=True)
    assert (tmp_path / "by-age").read_bytes() == plain.read_bytes()


def test_mixed_with_x25519_one_run_for_all_the_plugins_recipients(run_cli, env, keys, plain, tmp_path):
    subprocess.run([AGE_KEYGEN, "-o", tmp_path / "x25519.key"], check=True, capture_output=True)
    x25519 = subprocess.run([AGE_KEYGEN, "-y", tmp_path / "x25519.key"], check=True, capture_output=True,
                            text=True).stdout.strip()
    second_identity, second = generate(env)
    run_cli("age", "-r", keys["recipient"], "-r", x25519, "-r", second, "-o", tmp_path / "file.age", plain,
            env=env).check()
    header = (tmp_path / "file.age").read_bytes().split(b"\n---", 1)[0]
    assert sorted(re.findall(rb"^-> (\S+)", header, re.M)) == [b"X25519", b"wctest", b"wctest"]
    assert len(plugin_pids(env)) == 1
    # The X25519 recipient's stanza opens with age alone; each plugin
    # identity opens its own.
    subprocess.run([AGE, "-d", "-i", tmp_path / "x25519.key", "-o", tmp_path / "by-x25519", tmp_path / "file.age"],
                   check=True)
    assert (tmp_path / "by-x25519").read_bytes() == plain.read_bytes()
    (tmp_path / "second.key").write_text(second_identity + "\n")
    for key in (keys["file"], tmp_path / "second.key"):
        run_cli("age", "-d", "-i", key, "-o", tmp_path / "back", tmp_path / "file.age", env=env).check()
        assert (tmp_path / "back").read_bytes() == plain.read_bytes()
        (tmp_path / "back").unlink()


@pytest.mark.parametrize("mode", ["unknown", "slow"])
def test_unknown_commands_and_slow_answers_still_work(run_cli, env, keys, plain, tmp_path, mode):
    env = {**env, "WCTEST_MODE": mode}
    run_cli("age", "-r", keys["recipient"], "-o", tmp_path / "file.age", plain, env=env).check()
    run_cli("age", "-d", "-i", keys["file"], "-o", tmp_path / "back", tmp_path / "file.age", env=env).check()
    assert (tmp_path / "back").read_bytes() == plain.read_bytes()


FAILURES = {
    "crash": "age plugin exited before it finished",
    "malformed": "age plugin wrote a line that starts no stanza",
    "error": "age plugin failed: it answered with an error",
    "endless": "age plugin wrote a line longer than 64 KiB",
    # No terminal to ask on: the request is answered "fail", and the plugin
    # gives up with an error.
    "secret": "age plugin failed: it answered with an error",
}


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_a_misbehaving_plugin_is_one_clear_error(run_cli, expect_failure, env, keys, plain, tmp_path, mode):
    run_cli("age", "-r", keys["recipient"], "-o", tmp_path / "file.age", plain, env=env).check()
    env = {**env, "WCTEST_MODE": mode}
    # The plugin's own complaints on its standard error are its business;
    # this plugin makes none in these modes.
    expect_failure("age", "-r", keys["recipient"], "-o", tmp_path / "out.age", plain, cwd=tmp_path, env=env,
                   message=FAILURES[mode])
    expect_failure("age", "-d", "-i", keys["file"], "-o", tmp_path / "out", tmp_path / "file.age", cwd=tmp_path,
                   env=env, message=FAILURES[mode], secrets=[keys["identity"]])
    assert_no_plugin_left(env)


def test_a_plugin_that_stays_after_its_conversation_is_ended(run_cli, env, keys, plain, tmp_path):
    """A plugin that answers "done" and then never exits (deaf to SIGINT and
    SIGTERM) gets a bounded grace period, is killed and reaped, and the job
    finishes; before, `warpcrypt age` waited for it forever."""
    env = {**env, "WCTEST_MODE": "linger"}
    for args in (("-r", keys["recipient"], "-o", tmp_path / "file.age", plain),
                 ("-d", "-i", keys["file"], "-o", tmp_path / "back", tmp_path / "file.age")):
        started = time.monotonic()
        run_cli("age", *args, env=env).check()
        assert time.monotonic() - started < 15
    assert (tmp_path / "back").read_bytes() == plain.read_bytes()
    assert len(plugin_pids(env)) == 2
    assert_no_plugin_left(env)


@pytest.mark.parametrize("option, message", [
    (("--window", "4097"), "chunk size must be a multiple of 4 KiB"),
    (("--devices", "7"), "the device list names a CUDA device"),
])
def test_a_bad_option_is_refused_before_any_plugin_runs(expect_failure, env, keys, plain, tmp_path, option,
                                                        message):
    """Options are checked at the job's entry: the plugin, which may ask the
    user for a PIN or a touch, never runs for a job that cannot run (it
    once did, and the job failed after it)."""
    expect_failure("age", *option, "-r", keys["recipient"], "-o", tmp_path / "out.age", plain, cwd=tmp_path,
                   env=env, message=message)
    assert plugin_pids(env) == []


def test_a_missing_plugin_is_named(run_cli, expect_failure, env, keys, plain, tmp_path):
    run_cli("age", "-r", keys["recipient"], "-o", tmp_path / "file.age", plain, env=env).check()
    env = {**env, "PATH": search_path(with_plugins=False)}
    for argv in (["-r", keys["recipient"], "-o", tmp_path / "out.age", plain],
                 ["-d", "-i", keys["file"], "-o", tmp_path / "out", tmp_path / "file.age"]):
        expect_failure("age", *argv, cwd=tmp_path, env=env, message="age plugin not found: its program is not on PATH",
                       secrets=[keys["identity"]])


@pytest.mark.parametrize("name", ["..", "a/b", "../../tmp/x", "x..y"])
def test_names_that_could_escape_the_path_lookup_are_refused(expect_failure, env, plain, tmp_path, name):
    # A program waits where such a name would lead, relative to the working
    # directory; it must never run.
    marker = tmp_path / "ran"
    trap = tmp_path / f"age-plugin-{name}"
    if trap.parent.is_relative_to(tmp_path):
        trap.parent.mkdir(parents=True, exist_ok=True)
        trap.write_text(f"#!/bin/sh\ntouch {marker}\n")
        trap.chmod(0o755)
    recipient = wctest.bech32_encode("age1" + name, bytes(32))
    identity = wctest.bech32_encode("AGE-PLUGIN-" + name.upper() + "-", bytes(32))
    (tmp_path / "bad.key").write_text(identity + "\n")
    expect_failure("age", "-r", recipient, "-o", tmp_path / "out.age", plain, cwd=tmp_path,
                   env={**env, "PATH": f".:{env['PATH']}"}, message="not an age plugin key: .*plugin name")
    expect_failure("age", "-d", "-i", tmp_path / "bad.key", "-o", tmp_path / "out", plain, cwd=tmp_path,
                   env={**env, "PATH": f".:{env['PATH']}"}, message="not an age plugin key: .*plugin name")
    assert not marker.exists()


@pytest.mark.parametrize("path", [".:{}", ":{}", "{}:", "{}::/bin", "plugins:{}"])
def test_a_plugin_is_never_taken_from_a_relative_path_entry(expect_failure, env, plain, tmp_path, path):
    # Another user can plant a program in a directory the command runs in; a
    # PATH entry that is empty or relative (the working directory to the
    # shell) must not find it, as Go's exec.LookPath refuses it for age.
    marker = tmp_path / "ran"
    for folder in (tmp_path, tmp_path / "plugins"):
        folder.mkdir(exist_ok=True)
        trap = folder / "age-plugin-planted"
        trap.write_text(f"#!/bin/sh\ntouch {marker}\n")
        trap.chmod(0o755)
    recipient = wctest.bech32_encode("age1planted", bytes(32))
    expect_failure("age", "-r", recipient, "-o", tmp_path / "out.age", plain, cwd=tmp_path,
                   env={**env, "PATH": path.format(search_path(with_plugins=False))},
                   message="age plugin not found: its program is not on PATH", watch=[tmp_path / "plugins"])
    assert not marker.exists()


def test_an_empty_plugin_name_is_refused(expect_failure, env, plain, tmp_path):
    (tmp_path / "bad.key").write_text(wctest.bech32_encode("AGE-PLUGIN--", bytes(32)) + "\n")
    expect_failure("age", "-d", "-i", tmp_path / "bad.key", "-o", tmp_path / "out", plain, cwd=tmp_path, env=env,
                   message="not an age plugin key")


def test_a_secret_the_plugin_asks_for_is_typed_without_echo(monkeypatch, warpcrypt_binary, env, keys, plain,
                                                             tmp_path):
    for name, value in {**env, "WCTEST_MODE": "secret", "WCTEST_PIN": PIN}.items():
        monkeypatch.setenv(name, value)
    for argv in (["age", "-r", keys["recipient"], "-o", tmp_path / "file.age", plain],
                 ["age", "-d", "-i", keys["file"], "-o", tmp_path / "back", tmp_path / "file.age"]):
        terminal = Terminal([str(warpcrypt_binary), *map(str, argv)])
        terminal.read_until(b"wctest PIN:")
        terminal.type_hidden(PIN + "\n")
        assert terminal.finish() == 0, terminal.transcript
        assert PIN.encode() not in terminal.transcript
    assert (tmp_path / "back").read_bytes() == plain.read_bytes()
    assert_no_plugin_left(env)


def test_a_plugin_recipient_does_not_join_a_hybrid_one(run_cli, expect_failure, env, keys, plain, tmp_path,
                                                       tmp_path_factory):
    # Its labels are not read, so it counts as classical under age 1.3's rule.
    pq_key = tmp_path_factory.mktemp("pq") / "pq.key"
    run_cli("age-keygen", "-pq", "-o", pq_key).check()
    hybrid = run_cli("age-keygen", "-y", pq_key).check().stdout.decode().strip()
    assert hybrid.startswith("age1pq1")
    expect_failure("age", "-r", hybrid, "-r", keys["recipient"], "-o", tmp_path / "out.age", plain, cwd=tmp_path,
                   env=env, message="cannot be combined with classical ones")
    assert plugin_pids(env) == []
