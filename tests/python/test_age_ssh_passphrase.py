"""warpcrypt.age opening files for passphrase-protected OpenSSH keys
(ed25519 and RSA, made by ssh-keygen -N), encrypted by the reference `age`
and by warpcrypt: the passphrase given to Identity.parse or
parse_identities as str, bytes or a callable. A callable is asked only
when a file has a stanza for its key, once per such file; a wrong
passphrase raises InvalidTag; what the callable raises is what the call
raises; no passphrase is ever in a repr or an error message. The C side is
wc_age_identities_add_with_prompt (include/warpcrypt/age.h)."""

from __future__ import annotations

import gc
import shutil
import subprocess
import weakref
from dataclasses import dataclass
from pathlib import Path

import pytest

from warpcrypt import age
from warpcrypt.exceptions import InvalidArgument, InvalidTag, NoIdentity

SSH_KEYGEN = shutil.which("ssh-keygen")
AGE = shutil.which("age")
PASSPHRASE = "corr3ct h0rse, ssh"
PLAIN = b"a file for an SSH key under a passphrase\n" * 3000  # a few 64 KiB chunks


class DialogClosed(Exception):
    """What an application's passphrase callable raises when the user
    cancels."""


@dataclass
class SshKey:
    private: str  # the key file, passphrase-protected
    public: str  # its public key line: the recipient
    sealed: dict[str, bytes]  # the age file of PLAIN to the key, by who wrote it


@pytest.fixture(scope="module", params=["ed25519", "rsa"])
def key(request, tmp_path_factory) -> SshKey:
    if SSH_KEYGEN is None or AGE is None:
        pytest.skip("ssh-keygen (openssh-client) and the reference age make these files; one is not on PATH")
    folder = tmp_path_factory.mktemp(request.param)
    path = folder / "id"
    # Few bcrypt rounds (-a 4): a test, not a vault.
    subprocess.run([SSH_KEYGEN, "-q", "-t", request.param, "-a", "4", "-N", PASSPHRASE, "-C", "test@host",
                    "-f", str(path)], check=True, timeout=60)
    (folder / "plain").write_bytes(PLAIN)
    subprocess.run([AGE, "-R", str(folder / "id.pub"), "-o", str(folder / "by-age"), str(folder / "plain")],
                   check=True, timeout=60)
    public = " ".join((folder / "id.pub").read_text().split()[:2])
    sealed = {"age": (folder / "by-age").read_bytes(), "warpcrypt": age.encrypt(PLAIN, [public])}
    return SshKey(path.read_text(), public, sealed)


class Asker:
    """A passphrase callable that counts how often it is asked."""

    def __init__(self, answer: str | bytes = PASSPHRASE):
        self.answer = answer
        self.calls = 0

    def __call__(self) -> str | bytes:
        self.calls += 1
        return self.answer


@pytest.mark.parametrize("writer", ["age", "warpcrypt"])
@pytest.mark.parametrize("given", ["str", "bytes", "callable"])
def test_a_file_to_a_protected_key_opens_with_its_passphrase(key, writer, given):
    passphrase = {"str": PASSPHRASE, "bytes": PASSPHRASE.encode(), "callable": Asker()}[given]
    identity = age.Identity.parse(key.private, passphrase=passphrase)
    assert str(identity.recipient) == key.public
    assert age.decrypt(key.sealed[writer], [identity]) == PLAIN
    # parse_identities reads a key file the same way
    assert age.decrypt(key.sealed[writer], age.parse_identities(key.private, passphrase=passphrase)) == PLAIN


def test_without_a_passphrase_the_file_still_has_no_identity(key):
    with pytest.raises(NoIdentity, match="no passphrase was given"):
        age.decrypt(key.sealed["warpcrypt"], [age.Identity.parse(key.private)])


def _decrypt_buffer(sealed: bytes, identities: list[age.Identity], tmp_path: Path) -> bytes:
    return age.decrypt(sealed, identities)


def _decrypt_file(sealed: bytes, identities: list[age.Identity], tmp_path: Path) -> bytes:
    (tmp_path / "in.age").write_bytes(sealed)
    age.decrypt_file(tmp_path / "in.age", tmp_path / "out", identities)
    return (tmp_path / "out").read_bytes()


def _decrypt_stream(sealed: bytes, identities: list[age.Identity], tmp_path: Path) -> bytes:
    (tmp_path / "in.age").write_bytes(sealed)
    with open(tmp_path / "in.age", "rb") as source, open(tmp_path / "out", "wb") as target:
        age.decrypt_stream(source, target, identities)
    return (tmp_path / "out").read_bytes()


@pytest.mark.parametrize("decrypt", [_decrypt_buffer, _decrypt_file, _decrypt_stream],
                         ids=["buffer", "file", "stream"])
def test_the_callable_is_asked_once_a_file_and_only_when_the_file_names_the_key(key, decrypt, tmp_path):
    asker = Asker()
    identity = age.Identity.parse(key.private, passphrase=asker)
    other = age.Identity.generate()
    assert asker.calls == 0  # parsing needs no passphrase: the public key is in clear
    assert decrypt(key.sealed["age"], [other, identity], tmp_path) == PLAIN
    assert asker.calls == 1
    # A file for another key opens with that key, the SSH key never tried.
    assert decrypt(age.encrypt(b"not for the SSH key", [other.recipient]), [identity, other], tmp_path) \
        == b"not for the SSH key"
    assert asker.calls == 1
    assert decrypt(key.sealed["warpcrypt"], [identity], tmp_path) == PLAIN
    assert asker.calls == 2


def test_a_passphrase_is_copied_when_parsed(key):
    # Held in native memory from parse on: the caller may wipe its own copy.
    passphrase = bytearray(PASSPHRASE.encode())
    identity = age.Identity.parse(key.private, passphrase=passphrase)
    passphrase[:] = bytes(len(passphrase))
    assert age.decrypt(key.sealed["age"], [identity]) == PLAIN


@pytest.mark.parametrize("given", ["str", "callable"])
def test_a_wrong_passphrase_says_so_without_naming_either(key, given, tmp_path):
    wrong = "not " + PASSPHRASE
    identity = age.Identity.parse(key.private, passphrase=wrong if given == "str" else Asker(wrong))
    with pytest.raises(InvalidTag, match="incorrect passphrase") as raised:
        age.decrypt(key.sealed["age"], [identity])
    for shown in (str(raised.value), repr(raised.value), repr(identity), str(identity)):
        assert PASSPHRASE not in shown and wrong not in shown
    # a file written atomically is not left behind
    (tmp_path / "in.age").write_bytes(key.sealed["age"])
    with pytest.raises(InvalidTag):
        age.decrypt_file(tmp_path / "in.age", tmp_path / "out", [identity])
    assert not (tmp_path / "out").exists()


def test_no_repr_shows_the_passphrase(key):
    for passphrase in (PASSPHRASE, PASSPHRASE.encode(), Asker()):
        for identity in [age.Identity.parse(key.private, passphrase=passphrase),
                         *age.parse_identities(key.private, passphrase=passphrase)]:
            assert PASSPHRASE not in repr(identity) and PASSPHRASE not in str(identity)


def test_what_the_callable_raises_is_what_decrypting_raises(key, tmp_path):
    def refuse() -> str:
        raise DialogClosed("the user closed the dialog")

    identity = age.Identity.parse(key.private, passphrase=refuse)
    with pytest.raises(DialogClosed, match="closed the dialog"):
        age.decrypt(key.sealed["age"], [identity])
    (tmp_path / "in.age").write_bytes(key.sealed["age"])
    with pytest.raises(DialogClosed):
        age.decrypt_file(tmp_path / "in.age", tmp_path / "out", [identity])
    assert not (tmp_path / "out").exists()
    with pytest.raises(DialogClosed):
        _decrypt_stream(key.sealed["warpcrypt"], [identity], tmp_path)


def test_a_callable_answer_must_be_a_passphrase(key):
    with pytest.raises(TypeError, match="must be str or bytes, not int"):
        age.decrypt(key.sealed["age"], [age.Identity.parse(key.private, passphrase=lambda: 42)])
    with pytest.raises(InvalidArgument, match="longer than 1024 bytes"):
        age.decrypt(key.sealed["age"], [age.Identity.parse(key.private, passphrase=lambda: "x" * 1025)])
    with pytest.raises(InvalidArgument, match="longer than 1024 bytes"):
        age.Identity.parse(key.private, passphrase="x" * 1025)
    with pytest.raises(TypeError, match="must be str or bytes"):
        age.Identity.parse(key.private, passphrase=3.5)  # type: ignore[arg-type]


def test_an_identity_asking_its_owner_is_collected_with_it(key):
    # A bound method of the object that keeps the identity: a reference cycle
    # through the native key set, which the garbage collector must see.
    class Vault:
        def __init__(self, private: str):
            self.identity = age.Identity.parse(private, passphrase=self.ask)

        def ask(self) -> str:
            return PASSPHRASE

    vault = Vault(key.private)
    assert age.decrypt(key.sealed["age"], [vault.identity]) == PLAIN
    gone = weakref.ref(vault)
    del vault
    gc.collect()
    assert gone() is None
