"""Help for every command (`help CMD` and `CMD --help`, both exit 0), the
manual page and the shell completions made from the same declarations, and
`--version`."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

COMMANDS = ("enc", "speed", "seal", "open", "devices")


def spellings(help_text: str) -> set[str]:
    """The option spellings the help lists: the first column of each row."""
    found = set()
    for line in help_text.splitlines():
        row = re.match(r" {2}(-[^\s,]+(?:, -[^\s,]+)*)", line)
        if row:
            found.update(row.group(1).split(", "))
    return found


@pytest.mark.parametrize("command", COMMANDS)
def test_help_command_and_command_help_agree(command, run_cli):
    by_help = run_cli("help", command).check()
    by_flag = run_cli(command, "--help").check()
    assert by_help.stdout == by_flag.stdout and by_help.stderr == b""
    assert f"warpcrypt {command}".encode() in by_flag.stdout


def test_help_of_an_unknown_command_is_a_usage_error(run_cli):
    result = run_cli("help", "encrypt")
    assert result.returncode == 2 and b"unknown command 'encrypt'" in result.stderr


def test_manual_page_lists_every_option_and_exit_status(run_cli):
    page = run_cli("--help-man").check().stdout.decode()
    assert page.startswith(".TH WARPCRYPT 1")
    for command in COMMANDS:
        assert f'.SS "warpcrypt {command}"' in page
        section = page.split(f'.SS "warpcrypt {command}"')[1].split(".SS")[0]
        for spelling in spellings(run_cli(command, "--help").check().stdout.decode()):
            assert "\\fB" + spelling.replace("-", "\\-") + "\\fR" in section, f"{command} {spelling}"
    exit_section = page.split('.SH "EXIT STATUS"')[1]
    assert re.findall(r"^\.B (\d)$", exit_section, re.M) == ["0", "1", "2", "3", "4", "5"]


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_manual_page_renders_without_warnings(run_cli):
    page = run_cli("--help-man").check().stdout
    rendered = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=page, capture_output=True)
    assert rendered.returncode == 0 and rendered.stderr == b"", rendered.stderr


def bash_complete(script: str, words: list[str]) -> list[str]:
    """What the bash completion offers after `words` (the last one being typed)."""
    program = (script + "\nCOMP_WORDS=(" + " ".join(f"'{w}'" for w in words) + ")\n"
               f"COMP_CWORD={len(words) - 1}\n_warpcrypt\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    result = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_bash_completion_offers_commands_and_their_options(run_cli):
    script = run_cli("--completion", "bash").check().stdout.decode()
    assert set(COMMANDS) <= set(bash_complete(script, ["warpcrypt", ""]))
    for command in COMMANDS:
        offered = set(bash_complete(script, ["warpcrypt", command, "-"]))
        assert spellings(run_cli(command, "--help").check().stdout.decode()) <= offered, command
    assert bash_complete(script, ["warpcrypt", "enc", "-ba"]) == ["-base64"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completions_name_every_option(shell, run_cli):
    script = run_cli("--completion", shell).check().stdout.decode()
    for command in COMMANDS:
        assert command in script
        for spelling in spellings(run_cli(command, "--help").check().stdout.decode()):
            word = spelling if shell == "zsh" else ("-l " if spelling.startswith("--") else "-o ") + spelling.lstrip("-")
            assert word in script, f"{shell}: {command} {spelling}"
    if shutil.which(shell):
        subprocess.run([shell, "-n"], input=script.encode(), check=True)


def test_completion_for_another_shell_is_a_usage_error(run_cli):
    result = run_cli("--completion", "tcsh")
    assert result.returncode == 2 and b"bash, zsh or fish" in result.stderr


def test_version_names_the_library_openssl_and_cuda(run_cli, openssl_binary):
    lines = run_cli("--version").check().stdout.decode().splitlines()
    assert re.fullmatch(r"warpcrypt \d+\.\d+\.\d+", lines[0]), lines
    openssl = subprocess.run([str(openssl_binary), "version"], capture_output=True, text=True).stdout
    assert lines[1].startswith("OpenSSL: OpenSSL 3.") and lines[1].split()[2] in openssl, lines
    built = run_cli("devices").check().stdout.decode()
    if "built without the CUDA backend" in built:
        assert lines[2] == "CUDA: not built"
    else:
        assert re.fullmatch(r"CUDA: runtime \d+\.\d+, driver (\d+\.\d+|none)", lines[2]), lines
