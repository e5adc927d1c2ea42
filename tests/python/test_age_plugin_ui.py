"""warpcrypt.age's plugin_ui=: what an age plugin asks the user (msg,
request-public, request-secret, confirm) reaches the application's
PluginUI, and its answers reach the plugin, through every call that runs a
plugin; without one, or where a method declines, the plugin is answered
"fail", as before. The plugin is tests/cli/plugins/age-plugin-wctest:
$WCTEST_MODE=secret works only with the PIN it asks for, and
$WCTEST_MODE=converse asks everything and writes down each answer
($WCTEST_TRANSCRIPT). The C side is wc_age_plugin_ui (include/warpcrypt/age.h)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional, Union

import pytest

from warpcrypt import age
from warpcrypt.exceptions import Unsupported

PLUGINS = Path(__file__).resolve().parents[1] / "cli" / "plugins"
PIN = "4711-wctest"
PLAIN = b"a file for a plugin that asks\n" * 100

# What converse mode asks, as a PluginUI hears it.
QUESTIONS = [
    ("message", "wctest", "wctest: insert the key"),
    ("request_value", "wctest", "wctest: key slot?", False),
    ("request_value", "wctest", "wctest: PIN?", True),
    ("confirm", "wctest", "wctest: use the key in slot 1?", "Use it", "Skip it"),
    ("confirm", "wctest", "wctest: touch the key", "Touched", None),
]
DECLINED = [{"asked": asked, "answer": "fail", "args": [], "body": ""}
            for asked in ("msg", "request-public", "request-secret", "confirm", "confirm")]


class Answers(age.PluginUI):
    """Answers everything, and keeps what it was asked."""

    def __init__(self) -> None:
        self.heard: list[tuple[object, ...]] = []

    def message(self, plugin: str, text: str) -> Optional[bool]:
        self.heard.append(("message", plugin, text))
        return None

    def request_value(self, plugin: str, prompt: str, secret: bool) -> Optional[Union[str, bytes]]:
        self.heard.append(("request_value", plugin, prompt, secret))
        return PIN if secret else b"slot 1"

    def confirm(self, plugin: str, prompt: str, yes: str, no: Optional[str]) -> Optional[bool]:
        self.heard.append(("confirm", plugin, prompt, yes, no))
        return no is not None  # the first choice where there are two, else the plugin's "no"


@pytest.fixture(scope="module")
def plugin_keys() -> tuple[age.Identity, str]:
    env = {**os.environ, "PATH": plugin_path()}
    identity, recipient = subprocess.run([str(PLUGINS / "age-plugin-wctest"), "--generate"], env=env, check=True,
                                         capture_output=True, text=True, timeout=60).stdout.split()
    return age.Identity.parse(identity), recipient


def plugin_path() -> str:
    """The plugin's folder, then this Python (which has `cryptography`)."""
    return os.pathsep.join([str(PLUGINS), str(Path(sys.executable).parent), "/usr/bin", "/bin"])


@pytest.fixture
def transcript(monkeypatch, tmp_path) -> Callable[[], list[dict[str, object]]]:
    """The plugin in converse mode; returns what it has written down so far."""
    monkeypatch.setenv("PATH", plugin_path())
    monkeypatch.setenv("WCTEST_MODE", "converse")
    path = tmp_path / "transcript"
    monkeypatch.setenv("WCTEST_TRANSCRIPT", str(path))
    return lambda: [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# Each call that runs a plugin, as `call(keys, folder, plugin_ui)`: it
# encrypts PLAIN to the plugin's recipient, returning the age file, or
# decrypts the file for its identity that prepare() made, returning the
# plaintext.
def _encrypt(keys, folder, ui):
    return age.encrypt(PLAIN, [keys[1]], plugin_ui=ui)


def _encrypt_file(keys, folder, ui):
    (folder / "plain").write_bytes(PLAIN)
    age.encrypt_file(folder / "plain", folder / "sealed", [keys[1]], plugin_ui=ui)
    return (folder / "sealed").read_bytes()


def _encrypt_stream(keys, folder, ui):
    (folder / "plain").write_bytes(PLAIN)
    with open(folder / "plain", "rb") as source, open(folder / "sealed", "wb") as target:
        age.encrypt_stream(source, target, [keys[1]], plugin_ui=ui)
    return (folder / "sealed").read_bytes()


def _decrypt(keys, folder, ui):
    return age.decrypt((folder / "sealed").read_bytes(), [keys[0]], plugin_ui=ui)


def _decrypt_file(keys, folder, ui):
    age.decrypt_file(folder / "sealed", folder / "opened", [keys[0]], plugin_ui=ui)
    return (folder / "opened").read_bytes()


def _decrypt_stream(keys, folder, ui):
    with open(folder / "sealed", "rb") as source, open(folder / "opened", "wb") as target:
        age.decrypt_stream(source, target, [keys[0]], plugin_ui=ui)
    return (folder / "opened").read_bytes()


CALLS = {"encrypt": _encrypt, "encrypt_file": _encrypt_file, "encrypt_stream": _encrypt_stream,
         "decrypt": _decrypt, "decrypt_file": _decrypt_file, "decrypt_stream": _decrypt_stream}


@contextlib.contextmanager
def plugin_asking_nothing():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", plugin_path())
        patch.delenv("WCTEST_MODE", raising=False)
        yield


def prepare(name, keys, folder) -> None:
    """A file for the plugin's identity, for the decrypting calls."""
    if name.startswith("decrypt"):
        with plugin_asking_nothing():
            (folder / "sealed").write_bytes(age.encrypt(PLAIN, [keys[1]]))


def assert_worked(name, produced, keys) -> None:
    """What an encrypting call wrote opens with the plugin's identity, and
    a decrypting call gave back PLAIN."""
    if name.startswith("encrypt"):
        with plugin_asking_nothing():
            produced = age.decrypt(produced, [keys[0]])
    assert produced == PLAIN


@pytest.mark.parametrize("name", CALLS)
def test_every_answer_reaches_the_plugin(name, plugin_keys, transcript, tmp_path):
    prepare(name, plugin_keys, tmp_path)
    ui = Answers()
    produced = CALLS[name](plugin_keys, tmp_path, ui)
    assert ui.heard == QUESTIONS  # asked once each: the plugin ran once
    assert transcript() == [
        {"asked": "msg", "answer": "ok", "args": [], "body": ""},
        {"asked": "request-public", "answer": "ok", "args": [], "body": "slot 1"},
        {"asked": "request-secret", "answer": "ok", "args": [], "body": PIN},
        {"asked": "confirm", "answer": "ok", "args": ["yes"], "body": ""},
        {"asked": "confirm", "answer": "ok", "args": ["no"], "body": ""},
    ]
    assert_worked(name, produced, plugin_keys)


@pytest.mark.parametrize("ui", [None, age.PluginUI()], ids=["no plugin_ui", "PluginUI's own methods"])
@pytest.mark.parametrize("name", ["encrypt", "decrypt"])
def test_without_answers_the_plugin_hears_fail(name, ui, plugin_keys, transcript, tmp_path):
    prepare(name, plugin_keys, tmp_path)
    produced = CALLS[name](plugin_keys, tmp_path, ui)
    assert transcript() == DECLINED
    assert_worked(name, produced, plugin_keys)  # converse mode goes on regardless


def test_a_message_not_shown_is_answered_fail(plugin_keys, transcript):
    class Unseen(Answers):
        def message(self, plugin: str, text: str) -> Optional[bool]:
            super().message(plugin, text)
            return False

    ui = Unseen()
    age.encrypt(PLAIN, [plugin_keys[1]], plugin_ui=ui)
    assert ui.heard == QUESTIONS
    assert [answer["answer"] for answer in transcript()] == ["fail", "ok", "ok", "ok", "ok"]


@pytest.mark.parametrize("name", CALLS)
def test_the_pin_a_plugin_needs_comes_from_plugin_ui(name, plugin_keys, monkeypatch, tmp_path):
    prepare(name, plugin_keys, tmp_path)
    monkeypatch.setenv("PATH", plugin_path())
    monkeypatch.setenv("WCTEST_MODE", "secret")
    monkeypatch.setenv("WCTEST_PIN", PIN)
    # Without plugin_ui, as before: the plugin is answered "fail" and gives up.
    with pytest.raises(Unsupported, match="the age plugin failed: it answered with an error"):
        CALLS[name](plugin_keys, tmp_path, None)

    class Pin(age.PluginUI):
        def request_value(self, plugin: str, prompt: str, secret: bool) -> Optional[Union[str, bytes]]:
            assert (plugin, prompt, secret) == ("wctest", "wctest PIN:", True)
            return PIN

    assert_worked(name, CALLS[name](plugin_keys, tmp_path, Pin()), plugin_keys)


class Interrupted(Exception):
    """What an application's PluginUI raises when its user gives up."""


@pytest.mark.parametrize("name", CALLS)
def test_what_plugin_ui_raises_is_what_the_call_raises(name, plugin_keys, transcript, tmp_path):
    prepare(name, plugin_keys, tmp_path)

    class GivesUp(Answers):
        def request_value(self, plugin: str, prompt: str, secret: bool) -> Optional[Union[str, bytes]]:
            super().request_value(plugin, prompt, secret)
            raise Interrupted(prompt)

    ui = GivesUp()
    with pytest.raises(Interrupted, match="key slot"):
        CALLS[name](plugin_keys, tmp_path, ui)
    # The plugin heard "fail" for that question and every one after it,
    # and the application was asked nothing more.
    assert ui.heard == QUESTIONS[:2]
    assert [answer["answer"] for answer in transcript()] == ["ok", "fail", "fail", "fail", "fail"]


def test_a_wrong_answer_type_is_a_type_error(plugin_keys, transcript):
    class Unsure(Answers):
        def confirm(self, plugin: str, prompt: str, yes: str, no: Optional[str]) -> Optional[bool]:
            return "maybe"  # type: ignore[return-value]

    with pytest.raises(TypeError, match="confirm\\(\\) must return True, False or None"):
        age.encrypt(PLAIN, [plugin_keys[1]], plugin_ui=Unsure())


def test_plugin_ui_must_have_the_methods(plugin_keys, transcript):
    class OnlyMessages:
        def message(self, plugin: str, text: str) -> None:
            pass

    with pytest.raises(TypeError, match="message, request_value and confirm"):
        age.encrypt(PLAIN, [plugin_keys[1]], plugin_ui=OnlyMessages())  # type: ignore[arg-type]
    assert transcript() == []  # refused before any plugin ran
