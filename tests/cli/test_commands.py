"""The commands around `enc`: --help, enc -list, devices."""

from __future__ import annotations

import re

from wc_support import ALL_CIPHERS


def test_help(run_cli):
    result = run_cli("--help").check()
    text = (result.stdout + result.stderr).decode()
    for command in ("enc", "devices"):
        assert re.search(rf"\b{command}\b", text), f"--help does not mention {command}:\n{text}"


def test_enc_list_names_every_cipher(run_cli):
    listing = run_cli("enc", "-list").check().stdout.decode()
    for c in ALL_CIPHERS:
        # Whole names: "aes-128-cfb" must not be satisfied by "aes-128-cfb8".
        assert re.search(rf"(?<![\w-])-?{re.escape(c.name)}(?![\w-])", listing, re.I), (
            f"{c.name} missing from `enc -list`:\n{listing}")


def test_devices_exits_zero_and_says_something(run_cli):
    result = run_cli("devices").check()
    assert (result.stdout + result.stderr).strip(), "`warpcrypt devices` printed nothing"
