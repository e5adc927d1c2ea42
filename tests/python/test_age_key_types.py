"""warpcrypt.age with every key type: X25519, the post-quantum hybrid
(AGE-SECRET-KEY-PQ-1), OpenSSH ed25519 and RSA keys (with and without a
passphrase), a plugin identity (tests/cli/plugins/age-plugin-wctest) and a
passphrase, through every function that takes or returns a key. Each either
works (a file encrypted to the identity's recipient opens with the identity)
or refuses by name; none becomes a key of another type. Once, every SSH and
plugin identity came back from parse_identities as the all-zero X25519 key,
one recipient for all of them, which anyone could open.
The C API's side is tests/unit/age_key_types_test.cpp."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

import warpcrypt
from warpcrypt import age

PLUGINS = Path(__file__).resolve().parents[1] / "cli" / "plugins"
SSH_KEYGEN = shutil.which("ssh-keygen")
SSH_PASSPHRASE = "correct horse battery"
PLAIN = b"every key type, one file at a time\n" * 40

# The plugin's own Bech32, to spell keys the library is not asked to make.
_loader = importlib.machinery.SourceFileLoader("wctest", str(PLUGINS / "age-plugin-wctest"))
wctest = importlib.util.module_from_spec(importlib.util.spec_from_loader("wctest", _loader))
_loader.exec_module(wctest)

# What the old round trip through text made of every SSH and plugin identity.
ZERO_SECRET = wctest.bech32_encode("AGE-SECRET-KEY-", bytes(32))
ZERO_RECIPIENT = str(age.Identity.parse(ZERO_SECRET).recipient)


@dataclass
class Key:
    """One identity as text, with what the library must make of it."""

    text: str  # what parse_identities reads (a secret)
    type: str  # Identity.type
    recipient: Optional[str]  # Identity.recipient, None where the type has none to derive
    encrypt_to: str  # a recipient whose files this identity opens
    has_secret_key: bool  # Identity.secret_key() gives `text` back
    refusal: Optional[str] = None  # decrypting refuses with this, by name


def run(argv, **kwargs) -> str:
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=60, **kwargs)
    assert result.returncode == 0, f"{argv}: {result.stderr}"
    return result.stdout


def plugin_path() -> str:
    """The plugin's folder, then this Python (which has `cryptography`)."""
    return os.pathsep.join([str(PLUGINS), str(Path(sys.executable).parent), "/usr/bin", "/bin"])


@pytest.fixture
def plugins_on_path(monkeypatch):
    monkeypatch.setenv("PATH", plugin_path())


def ssh_public(path: Path) -> str:
    """The .pub line without its comment: the recipient the key stands for."""
    kind, blob = Path(str(path) + ".pub").read_text().split()[:2]
    return f"{kind} {blob}"


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, Key]:
    if SSH_KEYGEN is None:
        pytest.skip("ssh-keygen is not on PATH (Debian's openssh-client, which scripts/install-deps.sh installs): "
                    "the SSH identities are made with it")
    folder = tmp_path_factory.mktemp("keys")
    made = {}
    x25519 = age.Identity.generate()
    made["x25519"] = Key(x25519.secret_key(), "x25519", str(x25519.recipient), str(x25519.recipient), True)
    hybrid_secret = wctest.bech32_encode("AGE-SECRET-KEY-PQ-", os.urandom(32))
    hybrid_recipient = str(age.Identity.parse(hybrid_secret).recipient)
    made["hybrid"] = Key(hybrid_secret, "hybrid", hybrid_recipient, hybrid_recipient, True)
    for kind in ("ed25519", "rsa"):
        path = folder / kind
        run([SSH_KEYGEN, "-q", "-t", kind, "-N", "", "-C", f"{kind}@host", "-f", path])
        # The same key under a passphrase (few bcrypt rounds: a test, not a vault).
        protected = folder / f"{kind}-pw"
        shutil.copy(path, protected)
        shutil.copy(str(path) + ".pub", str(protected) + ".pub")
        run([SSH_KEYGEN, "-q", "-p", "-a", "4", "-N", SSH_PASSPHRASE, "-f", protected])
        line = ssh_public(path)
        made[kind] = Key(path.read_text(), f"ssh-{kind}", line, line, False)
        made[f"{kind}-pw"] = Key(protected.read_text(), f"ssh-{kind}", line, line, False,
                                 refusal="passphrase-protected SSH key")
    plugin_identity, plugin_recipient = run(
        [PLUGINS / "age-plugin-wctest", "--generate"], env={**os.environ, "PATH": plugin_path()}).split()
    made["plugin"] = Key(plugin_identity, "plugin", None, plugin_recipient, False)
    return made


KINDS = ["x25519", "hybrid", "ed25519", "ed25519-pw", "rsa", "rsa-pw", "plugin"]


def test_ssh_and_plugin_identities_never_become_the_zero_key(keys, plugins_on_path):
    # The attack: what parse_identities made of these keys, a file
    # encrypted to its recipient, and that file opened by the all-zero key.
    zero = age.Identity.parse(ZERO_SECRET)
    recipients = []
    for kind in ("ed25519", "ed25519-pw", "rsa", "plugin"):
        key = keys[kind]
        [identity] = age.parse_identities(key.text)
        try:
            recipients.append(str(identity.recipient))
        except warpcrypt.Unsupported as refusal:
            assert key.recipient is None and f"{key.type} identity" in str(refusal)
        else:
            assert recipients[-1] == key.recipient
        sealed = age.encrypt(PLAIN, recipients[-1:] if key.recipient else [key.encrypt_to])
        with pytest.raises(warpcrypt.NoIdentity):
            age.decrypt(sealed, [zero])
        with pytest.raises(warpcrypt.Unsupported, match=f"{key.type} identity"):
            identity.secret_key()
        if key.refusal is None:
            assert age.decrypt(sealed, [identity]) == PLAIN
        else:
            with pytest.raises(warpcrypt.NoIdentity, match=key.refusal):
                age.decrypt(sealed, [identity])
    # Each key its own recipient; the protected key and its plain copy are
    # one key.
    assert recipients == [keys["ed25519"].recipient, keys["ed25519"].recipient, keys["rsa"].recipient]
    assert ZERO_RECIPIENT not in recipients


@pytest.mark.parametrize("kind", KINDS)
def test_every_function_that_takes_or_returns_a_key_works_or_refuses_by_name(keys, kind, plugins_on_path,
                                                                           tmp_path):
    key = keys[kind]
    [parsed] = age.parse_identities(key.text)
    one = age.Identity.parse(key.text)
    for identity in (parsed, one):
        assert identity.type == key.type
        # Its type and public recipient, and nothing of the secret.
        recipient_field = f", recipient={key.recipient!r}" if key.recipient else ""
        assert repr(identity) == str(identity) == f"Identity(type={key.type!r}{recipient_field})"
        if key.has_secret_key:
            assert identity.secret_key() == key.text != ZERO_SECRET
        else:
            with pytest.raises(warpcrypt.Unsupported, match=f"{key.type} identity has no age secret key"):
                identity.secret_key()
        if key.recipient is None:
            with pytest.raises(warpcrypt.Unsupported, match=f"{key.type} identity"):
                identity.recipient
        else:
            recipient = identity.recipient
            assert isinstance(recipient, age.Recipient)
            assert str(recipient) == key.recipient != ZERO_RECIPIENT
            assert age.parse_recipients(f"# {kind}\n{recipient}\n") == [recipient]
    # Bytes, paths and streams, with the identity alone and among identities
    # of other types that do not open the file.
    others = [age.parse_identities(keys[other].text)[0] for other in ("x25519", "ed25519", "rsa")
              if keys[other].encrypt_to != key.encrypt_to]
    sealed = age.encrypt(PLAIN, [age.Recipient(key.encrypt_to)])
    (tmp_path / "file.age").write_bytes(sealed)
    for identities in ([one], [*others, parsed]):
        if key.refusal is not None:
            with pytest.raises(warpcrypt.NoIdentity, match=key.refusal):
                age.decrypt(sealed, identities)
            with pytest.raises(warpcrypt.NoIdentity, match=key.refusal):
                age.decrypt_file(tmp_path / "file.age", tmp_path / "plain", identities)
            assert not (tmp_path / "plain").exists()
            continue
        assert age.decrypt(sealed, identities) == PLAIN
        age.decrypt_file(tmp_path / "file.age", tmp_path / "plain", identities)
        assert (tmp_path / "plain").read_bytes() == PLAIN
        (tmp_path / "plain").unlink()
        with open(tmp_path / "file.age", "rb") as source, open(tmp_path / "plain", "wb") as target:
            age.decrypt_stream(source, target, identities)
        assert (tmp_path / "plain").read_bytes() == PLAIN
        (tmp_path / "plain").unlink()
    # The identity's key never opens a file meant for another.
    stranger = age.encrypt(PLAIN, [keys["x25519" if kind != "x25519" else "ed25519"].encrypt_to])
    with pytest.raises(warpcrypt.NoIdentity):
        age.decrypt(stranger, [parsed])


def test_recipients_of_every_type_go_through_encrypt_and_files(keys, plugins_on_path, tmp_path):
    # encrypt_file and encrypt_stream take every recipient type; classical
    # ones together, the hybrid alone (age 1.3's rule), and a passphrase.
    classical = [keys[kind].encrypt_to for kind in ("x25519", "ed25519", "rsa", "plugin")]
    (tmp_path / "plain").write_bytes(PLAIN)
    for recipients in (classical, [keys["hybrid"].encrypt_to]):
        age.encrypt_file(tmp_path / "plain", tmp_path / "file.age", recipients)
        with open(tmp_path / "plain", "rb") as source, open(tmp_path / "stream.age", "wb") as target:
            age.encrypt_stream(source, target, recipients)
        for name in ("file.age", "stream.age"):
            sealed = (tmp_path / name).read_bytes()
            for kind in ("x25519", "ed25519", "rsa", "plugin") if recipients is classical else ("hybrid",):
                assert age.decrypt(sealed, age.parse_identities(keys[kind].text)) == PLAIN
    sealed = age.encrypt(PLAIN, passphrase="a passphrase", work_factor=2)
    assert age.decrypt(sealed, passphrase="a passphrase") == PLAIN
    with pytest.raises(warpcrypt.NoIdentity, match="the file is passphrase-encrypted but identities were specified"):
        age.decrypt(sealed, age.parse_identities(keys["ed25519"].text))


def test_identity_files_keep_each_identity_as_its_type(keys):
    # One identity file of age keys and a plugin's, parsed in one go, keeps
    # their order and types; a passphrase is not an identity's text, and
    # Identity.parse and Recipient take one key each.
    text = "\n".join(["# mixed", keys["x25519"].text, keys["plugin"].text, keys["hybrid"].text, ""])
    assert [identity.type for identity in age.parse_identities(text)] == ["x25519", "plugin", "hybrid"]
    with pytest.raises(warpcrypt.InvalidArgument, match="one identity expected"):
        age.Identity.parse(text)
    # A Recipient is one key too, never a recipients file in disguise.
    with pytest.raises(warpcrypt.InvalidArgument, match="one recipient expected"):
        age.Recipient(f"{keys['x25519'].recipient}\n{keys['ed25519'].recipient}\n")
    with pytest.raises(warpcrypt.FormatError):
        age.parse_identities("correct horse battery staple")
