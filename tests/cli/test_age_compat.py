"""`warpcrypt age` where age users have habits (issue 51), each beside the
real `age` where this machine has it (Debian's age 1.1.1; age 1.3's own
cmd/age/testdata scripts are the reference where 1.1.1 lacks a feature):

- `-e -i KEY` encrypts to the identity's recipient, and `-j PLUGIN`
  decrypts with a plugin's default identity;
- `-p` with an empty answer makes a passphrase up and shows it on the
  terminal alone;
- `age --version`;
- `-R` passes over SSH keys of types age does not encrypt to, with a warning;
- the terminal: input typed ahead of the prompt is kept, an armored file
  pasted at the terminal is read to its END line before the passphrase is
  asked, and a file encrypted to keys asks for no passphrase;
- `-j batchpass`: age 1.3's non-interactive passphrase (AGE_PASSPHRASE,
  AGE_PASSPHRASE_FD), which 1.1.1 does not have: its messages are those
  of age 1.3's batchpass.txt;
- `warpcrypt age` alone prints its usage, and a recipient, recipients file
  or identity file given twice is warned of, as age 1.3 does.

tests/cli/test_age_testscripts.py runs age 1.3's scripts themselves."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_support import Terminal, ask, prompts
from wc_support import reference_age

pyrage = pytest.importorskip("pyrage", reason="pyrage (tests/requirements.txt) is the second age implementation")
from pyrage import passphrase as pyrage_passphrase  # noqa: E402

AGE, AGE_KEYGEN = reference_age()
PLUGINS = Path(__file__).parent / "plugins"
PASSPHRASE = "correct horse battery staple"
PLAIN = b"age users expect this\n"
SSH_KEYGEN = shutil.which("ssh-keygen")


def run(argv, stdin: bytes | None = None, env=None, **kwargs) -> subprocess.CompletedProcess:
    """Runs without a controlling terminal, as the CLI tests run."""
    return subprocess.run([str(a) for a in argv], input=stdin, capture_output=True, timeout=120,
                          env={**os.environ, **(env or {})}, start_new_session=True, **kwargs)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, (result.args, result.stderr.decode(errors="replace"))
    return result


def failure_line(result: subprocess.CompletedProcess) -> str:
    """The one line a failure writes; nothing on standard output."""
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1 and result.stdout == b"", (result.returncode, lines)
    return lines[0]


@pytest.fixture
def plain(tmp_path) -> Path:
    path = tmp_path / "plain"
    path.write_bytes(PLAIN)
    return path


@pytest.fixture
def x25519_key(tmp_path) -> Path:
    path = tmp_path / "x25519.key"
    ok(run([AGE_KEYGEN, "-o", path]))
    return path


# ---- -e -i: encrypting to an identity's recipient ---------------------------


def test_encrypting_to_identity_files_as_age_does(warpcrypt_binary, x25519_key, plain, tmp_path):
    pq_key = tmp_path / "pq.key"
    ok(run([warpcrypt_binary, "age-keygen", "-pq", "-o", pq_key]))
    for key in (x25519_key, pq_key):
        ok(run([warpcrypt_binary, "age", "-e", "-i", key, "-o", tmp_path / "ours.age", plain]))
        assert ok(run([warpcrypt_binary, "age", "-d", "-i", key, tmp_path / "ours.age"])).stdout == PLAIN
        (tmp_path / "ours.age").unlink()
    # Both ways with age, the X25519 key beside an -r recipient.
    other = tmp_path / "other.key"
    ok(run([AGE_KEYGEN, "-o", other]))
    other_recipient = ok(run([AGE_KEYGEN, "-y", other])).stdout.decode().strip()
    ok(run([warpcrypt_binary, "age", "-e", "-i", x25519_key, "-r", other_recipient, "-o", tmp_path / "ours.age",
            plain]))
    ok(run([AGE, "-e", "-i", x25519_key, "-r", other_recipient, "-o", tmp_path / "by-age.age", plain]))
    for file in ("ours.age", "by-age.age"):
        for key in (x25519_key, other):
            assert ok(run([AGE, "-d", "-i", key, tmp_path / file])).stdout == PLAIN
            assert ok(run([warpcrypt_binary, "age", "-d", "-i", key, tmp_path / file])).stdout == PLAIN


@pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not on PATH (Debian's openssh-client)")
def test_encrypting_to_a_passphrase_protected_ssh_key_asks_nothing(warpcrypt_binary, plain, tmp_path):
    key = tmp_path / "id_ed25519"
    ok(run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", PASSPHRASE, "-a", "2", "-f", key]))
    # No terminal here: the public key is in clear in the key file.
    ok(run([warpcrypt_binary, "age", "-e", "-i", key, "-o", tmp_path / "ours.age", plain]))
    assert b"-> ssh-ed25519 " in (tmp_path / "ours.age").read_bytes()
    status, shown = ask([AGE, "-d", "-i", key, "-o", tmp_path / "back", tmp_path / "ours.age"], [PASSPHRASE])
    assert status == 0, shown
    assert (tmp_path / "back").read_bytes() == PLAIN


def test_identities_encrypt_only_with_an_explicit_e(warpcrypt_binary, x25519_key, plain, tmp_path):
    # age's rule: -i without -e or -d is most likely a forgotten -d.
    assert run([AGE, "-i", x25519_key, plain]).returncode != 0
    line = failure_line(run([warpcrypt_binary, "age", "-i", x25519_key, "-o", tmp_path / "out", plain]))
    assert "explicit -e" in line
    line = failure_line(run([warpcrypt_binary, "age", "-e", "-d", "-i", x25519_key, plain]))
    assert "-e and -d cannot be combined" in line
    assert not (tmp_path / "out").exists()


def test_a_plugin_identity_has_no_recipient_to_encrypt_to(warpcrypt_binary, plain, tmp_path):
    key = tmp_path / "plugin.key"
    key.write_text(wctest().bech32_encode("AGE-PLUGIN-WCTEST-", bytes(32)) + "\n")
    for args in (["-i", key], ["-j", "wctest"]):
        line = failure_line(run([warpcrypt_binary, "age", "-e", *args, "-o", tmp_path / "out", plain]))
        assert "a plugin identity's recipient is its plugin's to derive" in line, line
    assert not (tmp_path / "out").exists()


# ---- -j: a plugin's default identity ----------------------------------------


def wctest():
    """tests/cli/plugins/age-plugin-wctest as a module, for its Bech32."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("wctest", str(PLUGINS / "age-plugin-wctest"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("wctest", loader))
    loader.exec_module(module)
    return module


def test_j_decrypts_with_the_plugins_default_identity(warpcrypt_binary, plain, tmp_path):
    search = os.pathsep.join([str(PLUGINS), str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    made = ok(run(["age-plugin-wctest", "--generate"], env={"PATH": search}))
    identity, recipient = made.stdout.decode().split()
    env = {"PATH": search, "WCTEST_DEFAULT_IDENTITY": identity}
    ok(run([warpcrypt_binary, "age", "-r", recipient, "-o", tmp_path / "file.age", plain], env=env))
    # age opens it the same way: the plugin hears the same data-less identity.
    assert ok(run([AGE, "-d", "-j", "wctest", tmp_path / "file.age"], env=env)).stdout == PLAIN
    assert ok(run([warpcrypt_binary, "age", "-d", "-j", "wctest", tmp_path / "file.age"], env=env)).stdout == PLAIN
    # -i and -j mix, in either order.
    other = tmp_path / "other.key"
    ok(run([AGE_KEYGEN, "-o", other]))
    for args in (["-i", other, "-j", "wctest"], ["-j", "wctest", "-i", other]):
        assert ok(run([warpcrypt_binary, "age", "-d", *args, tmp_path / "file.age"], env=env)).stdout == PLAIN


@pytest.mark.parametrize("name, message", [
    ("pwn/pwn", r"-j pwn/pwn: invalid plugin name"),
    ("", r"-j : invalid plugin name"),
    ("x..y", r"not an age plugin key: .*plugin name"),
])
def test_j_refuses_names_that_are_no_plugins(warpcrypt_binary, plain, tmp_path, name, message):
    # age 1.3's plugin.txt: "! age -d -j pwn/pwn test.age"; no program runs.
    line = failure_line(run([warpcrypt_binary, "age", "-d", "-j", name, "-o", tmp_path / "out", plain]))
    assert re.search(message, line), line
    assert not (tmp_path / "out").exists()


# ---- -p: an empty answer makes a passphrase up -------------------------------


AUTOGENERATED = rb'using autogenerated passphrase "([^"]+)"'


def test_an_empty_answer_makes_a_passphrase_up_as_age_does(warpcrypt_binary, plain, tmp_path):
    shown = {}
    for name, argv in (("age", [AGE]), ("warpcrypt", [warpcrypt_binary, "age", "--work-factor", "12"])):
        # Standard error is not the terminal: the passphrase must reach the
        # terminal, and only the terminal.
        terminal = Terminal([*map(str, argv), "-p", "-o", str(tmp_path / f"{name}.age"), str(plain)], on_tty=())
        terminal.read_until(rb"Enter passphrase")
        terminal.type_hidden("\n")
        assert terminal.finish() == 0, terminal.transcript
        shown[name] = terminal.transcript
        assert len(prompts(terminal.transcript)) == 1, terminal.transcript  # no confirmation
    assert b"leave empty to autogenerate a secure one" in shown["warpcrypt"]
    made_up = re.search(AUTOGENERATED, shown["warpcrypt"]).group(1).decode()
    assert re.fullmatch(r"[a-z0-9]{5}(-[a-z0-9]{5}){4}", made_up), made_up
    assert re.search(AUTOGENERATED, shown["age"])
    back = ok(run([warpcrypt_binary, "age", "-d", "-pass", f"pass:{made_up}", tmp_path / "warpcrypt.age"]))
    assert back.stdout == PLAIN
    assert pyrage_passphrase.decrypt((tmp_path / "warpcrypt.age").read_bytes(), made_up) == PLAIN


def test_a_typed_passphrase_is_confirmed_with_ages_prompts(warpcrypt_binary, plain, tmp_path):
    asked = {}
    for name, argv in (("age", [AGE]), ("warpcrypt", [warpcrypt_binary, "age", "--work-factor", "12"])):
        status, transcript = ask([*argv, "-p", "-o", tmp_path / f"{name}.age", plain], [PASSPHRASE, PASSPHRASE])
        assert status == 0, transcript
        assert PASSPHRASE.encode() not in transcript
        asked[name] = [re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", p).strip() for p in prompts(transcript)]
    assert asked["warpcrypt"] == asked["age"], asked
    status, transcript = ask([warpcrypt_binary, "age", "-p", "-o", tmp_path / "differ.age", plain],
                             [PASSPHRASE, PASSPHRASE + "!"])
    assert status != 0 and b"the passphrases didn't match" in transcript
    assert not (tmp_path / "differ.age").exists()


# ---- --version -----------------------------------------------------------------


def test_version_is_one_line_on_standard_output(warpcrypt_binary):
    ours = ok(run([warpcrypt_binary, "age", "--version"]))
    theirs = ok(run([AGE, "--version"]))
    for result in (ours, theirs):
        assert result.stderr == b"" and len(result.stdout.splitlines()) == 1, result
    program = ok(run([warpcrypt_binary, "--version"])).stdout.decode().splitlines()[0]
    assert program == "warpcrypt " + ours.stdout.decode().strip()


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_usage_goes_to_standard_error_as_ages_does(warpcrypt_binary, flag):
    """A script's standard output holds only what the command writes."""
    ours = ok(run([warpcrypt_binary, "age", flag]))
    theirs = ok(run([AGE, flag]))
    for result in (ours, theirs):
        assert result.stdout == b"" and b"-d" in result.stderr, result
    assert ok(run([warpcrypt_binary, "help", "age"])).stdout  # asked of warpcrypt itself: on standard output


def test_age_alone_prints_its_usage_as_age_does(warpcrypt_binary):
    """With no argument at all there is nothing to do: the usage on
    standard error, the usage exit status (age exits 1: 2 is warpcrypt's
    for usage everywhere)."""
    ours = run([warpcrypt_binary, "age"], stdin=b"")
    theirs = run([AGE], stdin=b"")
    for result in (ours, theirs):
        assert result.returncode != 0 and result.stdout == b"" and b"-d" in result.stderr, result
    assert ours.returncode == 2 and b"Usage: warpcrypt age" in ours.stderr


def test_a_value_given_twice_is_warned_of_once_as_age_13_warns(warpcrypt_binary, x25519_key, plain, tmp_path):
    """age 1.3's duplicates.txt: a recipient, a recipients file or an
    identity file given twice (or more) is harmless but often a slip, so it
    is warned of, once each; age 1.1.1 says nothing."""
    recipient = ok(run([warpcrypt_binary, "age-keygen", "-y", x25519_key])).stdout.decode().strip()
    (tmp_path / "recipients.txt").write_text(recipient + "\n")
    done = ok(run([warpcrypt_binary, "age", "-r", recipient, "-a", "-r", recipient, "-r", recipient,
                   "-R", tmp_path / "recipients.txt", "-o", tmp_path / "file.age", "-R", tmp_path / "recipients.txt",
                   plain]))
    assert done.stderr.decode().splitlines() == [
        f'warpcrypt: warning: duplicate recipient "{recipient}"',
        f'warpcrypt: warning: duplicate recipients file "{tmp_path / "recipients.txt"}"']
    done = ok(run([warpcrypt_binary, "age", "-d", "-i", x25519_key, "-i", x25519_key, tmp_path / "file.age"]))
    assert done.stdout == PLAIN
    assert done.stderr.decode().splitlines() == [f'warpcrypt: warning: duplicate identity file "{x25519_key}"']
    quiet = ok(run([warpcrypt_binary, "age", "-q", "-d", "-i", x25519_key, "-i", x25519_key, tmp_path / "file.age"]))
    assert quiet.stderr == b""
    once = ok(run([warpcrypt_binary, "age", "-r", recipient, "-o", tmp_path / "once.age", plain]))
    assert once.stderr == b""


# ---- -R: SSH keys age does not encrypt to are passed over ----------------------


@pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen is not on PATH (Debian's openssh-client)")
def test_recipients_files_pass_over_ssh_keys_age_does_not_take(warpcrypt_binary, x25519_key, plain, tmp_path):
    ecdsa = tmp_path / "id_ecdsa"
    ok(run([SSH_KEYGEN, "-q", "-t", "ecdsa", "-N", "", "-f", ecdsa]))
    ecdsa_line = (tmp_path / "id_ecdsa.pub").read_text().strip()
    recipient = ok(run([AGE_KEYGEN, "-y", x25519_key])).stdout.decode().strip()
    mixed = tmp_path / "authorized_keys"
    mixed.write_text(f"# keys\n{ecdsa_line}\n\n{recipient}\n")
    warning = r'warning: recipients file "[^"]*authorized_keys": ignoring unsupported SSH key of type ' \
              r'"ecdsa-sha2-nistp256" at line 2'
    for argv, output in (([AGE], "by-age.age"), ([warpcrypt_binary, "age"], "ours.age")):
        result = ok(run([*argv, "-R", mixed, "-o", tmp_path / output, plain]))
        lines = result.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and re.search(warning, lines[0]), lines
        assert ok(run([warpcrypt_binary, "age", "-d", "-i", x25519_key, tmp_path / output])).stdout == PLAIN
    # With nothing else in it, the file gives no recipient: a failure, as in age.
    only = tmp_path / "only_ecdsa"
    only.write_text(ecdsa_line + "\n")
    assert run([AGE, "-R", only, "-o", tmp_path / "none-by-age.age", plain]).returncode != 0
    result = run([warpcrypt_binary, "age", "-R", only, "-o", tmp_path / "none.age", plain])
    assert result.returncode != 0 and re.search(rb"holds no recipient", result.stderr), result
    assert not (tmp_path / "none.age").exists()
    # -r names a key of its own: it is refused, not passed over.
    assert "ECDSA SSH keys are not age recipients" in failure_line(
        run([warpcrypt_binary, "age", "-r", ecdsa_line, "-o", tmp_path / "none.age", plain]))


def test_a_recipients_file_line_that_is_no_key_is_named_by_its_number(warpcrypt_binary, x25519_key, plain, tmp_path):
    recipient = ok(run([AGE_KEYGEN, "-y", x25519_key])).stdout.decode().strip()
    bad = tmp_path / "recipients"
    bad.write_text(f"{recipient}\nssh-ed25519 not-base64!\n")
    line = failure_line(run([warpcrypt_binary, "age", "-R", bad, "-o", tmp_path / "out", plain]))
    assert re.search(r"recipients: line 2: ", line), line
    assert not (tmp_path / "out").exists()


# ---- the terminal ------------------------------------------------------------------


@pytest.fixture
def passphrase_file(warpcrypt_binary, plain, tmp_path) -> Path:
    path = tmp_path / "pass.age"
    ok(run([warpcrypt_binary, "age", "-p", "-pass", f"pass:{PASSPHRASE}", "--work-factor", "10", "-a", "-o", path,
            plain]))
    return path


def test_a_passphrase_typed_before_the_prompt_is_kept(warpcrypt_binary, passphrase_file, tmp_path):
    """Typed at once, before the program has turned echo off: switching echo
    off must not flush it (TCSAFLUSH did)."""
    terminal = Terminal([str(warpcrypt_binary), "age", "-d", "-o", str(tmp_path / "back"), str(passphrase_file)],
                        on_tty=("stdin",))
    terminal.type(PASSPHRASE + "\n")
    assert terminal.finish() == 0, terminal.transcript
    assert (tmp_path / "back").read_bytes() == PLAIN


def test_an_armored_file_pasted_at_the_terminal_is_read_before_the_passphrase(warpcrypt_binary, passphrase_file,
                                                                                tmp_path):
    """age 1.3's terminal.txt: the armored file and then the passphrase,
    typed at the terminal that is standard input."""
    pasted = passphrase_file.read_text() + PASSPHRASE + "\n"
    for name, argv in (("age", [AGE, "-d"]), ("warpcrypt", [warpcrypt_binary, "age", "-d"])):
        out = tmp_path / f"back-{name}"
        terminal = Terminal([*map(str, argv), "-o", str(out)], on_tty=("stdin",))
        terminal.type(pasted)
        assert terminal.finish() == 0, (name, terminal.transcript)
        assert re.search(rb"Enter passphrase", terminal.transcript), (name, terminal.transcript)
        assert out.read_bytes() == PLAIN, name


def test_a_file_encrypted_to_keys_asks_for_no_passphrase(warpcrypt_binary, x25519_key, plain, tmp_path):
    recipient = ok(run([AGE_KEYGEN, "-y", x25519_key])).stdout.decode().strip()
    encrypted = tmp_path / "file.age"
    ok(run([AGE, "-r", recipient, "-a", "-o", encrypted, plain]))
    for name, argv in (("age", [AGE, "-d"]), ("warpcrypt", [warpcrypt_binary, "age", "-d"])):
        terminal = Terminal([*map(str, argv), "-o", str(tmp_path / "out"), str(encrypted)])
        assert terminal.finish() != 0, (name, terminal.transcript)
        assert b"passphrase:" not in terminal.transcript.lower(), (name, terminal.transcript)
    # age 1.1.1 says "no identity matched any of the recipients"; age 1.3
    # says this.
    assert b"the file is not passphrase-encrypted, identities are required" in terminal.transcript
    assert not (tmp_path / "out").exists()
    # Without a terminal, the same sentence, not "no terminal to ask".
    line = failure_line(run([warpcrypt_binary, "age", "-d", "-o", tmp_path / "out", encrypted]))
    assert "identities are required" in line, line


# ---- -j batchpass: AGE_PASSPHRASE and AGE_PASSPHRASE_FD -----------------------------


BATCH = {"AGE_PASSPHRASE": "", "AGE_PASSPHRASE_FD": "", "AGE_PASSPHRASE_WORK_FACTOR": "",
         "AGE_PASSPHRASE_MAX_WORK_FACTOR": ""}


def batch(**variables) -> dict:
    return {**BATCH, **variables}


def test_batchpass_encrypts_and_decrypts_without_a_terminal(warpcrypt_binary, plain, tmp_path):
    """age 1.3's batchpass.txt, step by step."""
    encrypted = tmp_path / "test.age"
    env = batch(AGE_PASSPHRASE="password", AGE_PASSPHRASE_WORK_FACTOR="5")
    ok(run([warpcrypt_binary, "age", "-e", "-j", "batchpass", "-o", encrypted, plain], env=env))
    assert re.search(rb"^-> scrypt \S+ 5$", encrypted.read_bytes(), re.M)
    assert pyrage_passphrase.decrypt(encrypted.read_bytes(), "password") == PLAIN
    assert ok(run([warpcrypt_binary, "age", "-d", "-j", "batchpass", encrypted], env=env)).stdout == PLAIN
    env = {**env, "AGE_PASSPHRASE_MAX_WORK_FACTOR": "10"}
    assert ok(run([warpcrypt_binary, "age", "-d", "-j", "batchpass", encrypted], env=env)).stdout == PLAIN
    env = {**env, "AGE_PASSPHRASE_MAX_WORK_FACTOR": "3"}
    assert "work factor" in failure_line(run([warpcrypt_binary, "age", "-d", "-j", "batchpass", encrypted], env=env))
    # A file age -p wrote (through a terminal) opens the same way.
    status, shown = ask([AGE, "-p", "-o", tmp_path / "by-age.age", plain], [PASSPHRASE, PASSPHRASE])
    assert status == 0, shown
    back = run([warpcrypt_binary, "age", "-d", "-j", "batchpass", tmp_path / "by-age.age"],
               env=batch(AGE_PASSPHRASE=PASSPHRASE))
    assert ok(back).stdout == PLAIN


def test_batchpass_reads_a_descriptor_to_its_end(warpcrypt_binary, plain, tmp_path):
    read_end, write_end = os.pipe()
    os.write(write_end, b"pass phrase\r\n\n")  # the line ends are trimmed, as age-plugin-batchpass trims them
    os.close(write_end)
    try:
        ok(run([warpcrypt_binary, "age", "-e", "-j", "batchpass", "-o", tmp_path / "fd.age", plain],
               env=batch(AGE_PASSPHRASE_FD=str(read_end), AGE_PASSPHRASE_WORK_FACTOR="4"), pass_fds=(read_end,)))
    finally:
        os.close(read_end)
    assert pyrage_passphrase.decrypt((tmp_path / "fd.age").read_bytes(), "pass phrase") == PLAIN


@pytest.mark.parametrize("argv, env, message", [
    (["-e", "-j", "batchpass", "-a"], batch(AGE_PASSPHRASE="password", AGE_PASSPHRASE_FD="3"), "mutually exclusive"),
    (["-e", "-j", "batchpass", "-a"], batch(), "must be set"),
    (["-e", "-j", "batchpass", "-r", "age1gc2zwslg9j25pg9e9ld7623aewc2gjzquzgq90m75r75myqdt5cq3yudvh", "-a"],
     batch(AGE_PASSPHRASE="password"), "incompatible recipients"),
    (["-e", "-r", "age1gc2zwslg9j25pg9e9ld7623aewc2gjzquzgq90m75r75myqdt5cq3yudvh", "-j", "batchpass", "-a"],
     batch(AGE_PASSPHRASE="password"), "incompatible recipients"),
    (["-e", "-j", "batchpass", "-a"], batch(AGE_PASSPHRASE="password", AGE_PASSPHRASE_WORK_FACTOR="31"),
     "AGE_PASSPHRASE_WORK_FACTOR must be between 1 and 30"),
    (["-e", "-j", "batchpass", "-a"], batch(AGE_PASSPHRASE_FD="x"), "AGE_PASSPHRASE_FD"),
])
def test_batchpass_refusals_are_ages(warpcrypt_binary, plain, tmp_path, argv, env, message):
    line = failure_line(run([warpcrypt_binary, "age", *argv, "-o", tmp_path / "out", plain], env=env))
    assert message in line, line
    assert not (tmp_path / "out").exists()


def test_batchpass_with_the_wrong_passphrase(warpcrypt_binary, plain, tmp_path):
    ok(run([warpcrypt_binary, "age", "-e", "-j", "batchpass", "-o", tmp_path / "test.age", plain],
           env=batch(AGE_PASSPHRASE="password", AGE_PASSPHRASE_WORK_FACTOR="5")))
    result = run([warpcrypt_binary, "age", "-d", "-j", "batchpass", "-o", tmp_path / "out", tmp_path / "test.age"],
                 env=batch(AGE_PASSPHRASE="wrongpassword"))
    assert "incorrect passphrase" in failure_line(result)
    assert not (tmp_path / "out").exists()
