"""age v1 files (age-encryption.org/v1), byte-compatible with ``age`` and
``rage``, with the payload's chunks on every core (docs/age.md).

    >>> from warpcrypt import age
    >>> identity = age.Identity.generate()
    >>> sealed = age.encrypt(b"data", [identity.recipient])
    >>> age.decrypt(sealed, [identity])
    b'data'

Recipients are X25519 public keys (``age1...``), post-quantum hybrid keys
(``age1pq1...``), age 1.3's tagged recipients of hardware keys
(``age1tag1...``, ``age1tagpq1...``, whose identities are plugins'), SSH
public keys (``ssh-ed25519 ...``, ``ssh-rsa ...``) or one passphrase
(scrypt). Identities are X25519 and hybrid secret keys
(``AGE-SECRET-KEY-1...``, ``AGE-SECRET-KEY-PQ-1...``), OpenSSH private key
files (ed25519 and RSA) and plugin identities, each kept as what it is
(``Identity.type``), or a passphrase. An SSH identity's recipient is its
public key line; a plugin identity's recipient is its plugin's to give, and
only X25519 and hybrid keys have a ``secret_key()``: what a type cannot do
raises Unsupported, naming the type. A passphrase-protected SSH key is read
with ``passphrase=`` (``Identity.parse``, ``parse_identities``): a str or
bytes, held in native memory, or a callable returning one, asked only when
a file has a stanza for the key, once per such stanza; a wrong passphrase
raises InvalidTag, and without one a file for the key raises NoIdentity,
saying so. Plugin keys (``age1name1...``, ``AGE-PLUGIN-NAME-1...``) run
``age-plugin-name`` from PATH (docs/age.md); what a plugin asks the user
goes to the ``plugin_ui=`` given to the call (a :class:`PluginUI`), and
without one it is answered "fail". An exception raised by a passphrase
callable or a PluginUI method is raised by the call, once the library has
returned. A damaged file raises
FormatError (a broken rule, named), InvalidTag (a header MAC or chunk that
does not authenticate) or NoIdentity (nothing opens it); no plaintext of a
chunk that did not authenticate is returned or written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterable, Optional, Sequence, TypeVar, Union

from warpcrypt import _native, _table
from warpcrypt._files import _path
from warpcrypt._typing import PathLike
from warpcrypt.exceptions import InvalidArgument, Unsupported

__all__ = [
    "Identity",
    "Recipient",
    "PluginUI",
    "generate_identity",
    "parse_identities",
    "parse_recipients",
    "encrypt",
    "decrypt",
    "encrypt_file",
    "decrypt_file",
    "encrypt_stream",
    "decrypt_stream",
    "AgeInfo",
    "inspect",
    "DEFAULT_WORK_FACTOR",
    "DEFAULT_MAX_WORK_FACTOR",
]

DEFAULT_WORK_FACTOR = _native.AGE_DEFAULT_WORK_FACTOR
DEFAULT_MAX_WORK_FACTOR = _native.AGE_DEFAULT_MAX_WORK_FACTOR
_WHOLE = (1 << 64) - 1
Passphrase = Union[str, bytes, None]
# An SSH key's passphrase, or what to ask for it when a file needs the key.
SshPassphrase = Union[str, bytes, Callable[[], Union[str, bytes]], None]
_KeySet = TypeVar("_KeySet", "_native.AgeRecipients", "_native.AgeIdentities")


class Recipient:
    """A recipient as age writes it: ``age1...``, ``age1pq1...``, an SSH
    public key line, or a plugin's ``age1name1...``."""

    def __init__(self, text: str):
        native = _native.AgeRecipients()
        native.add(text)  # checks it, or raises
        if len(native) != 1:
            raise InvalidArgument("one recipient expected; use parse_recipients for a recipients file")
        self._text = text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Recipient({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Recipient) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


class Identity:
    """One identity, of the type it was read as: an X25519 or hybrid secret
    key, an OpenSSH private key, or a plugin identity. ``repr()`` and
    ``str()`` give no secret; :meth:`secret_key` does, for writing an
    identity file."""

    def __init__(self, native: "_native.AgeIdentities"):
        self._native = native  # the library's set, holding this identity alone

    @classmethod
    def generate(cls) -> "Identity":
        native = _native.AgeIdentities()
        native.generate()
        return cls(native)

    @classmethod
    def parse(cls, text: str, passphrase: SshPassphrase = None) -> "Identity":
        """One identity: an age key (``AGE-SECRET-KEY-1...``,
        ``AGE-SECRET-KEY-PQ-1...``, ``AGE-PLUGIN-NAME-1...``) or an OpenSSH
        private key file. ``passphrase`` opens a passphrase-protected SSH
        key: a str (its UTF-8) or bytes, kept in native memory and wiped
        when the identity goes, or a callable returning one, called each
        time a file to be opened has a stanza for the key, and never when
        none has. Other keys have no use for it."""
        native = _native.AgeIdentities()
        native.add(text, passphrase)
        if len(native) != 1:
            raise InvalidArgument("one identity expected; use parse_identities for an identity file")
        return cls(native)

    @property
    def type(self) -> str:
        """``"x25519"``, ``"hybrid"``, ``"ssh-ed25519"``, ``"ssh-rsa"`` or
        ``"plugin"``."""
        return self._native.type(0)

    @property
    def recipient(self) -> Recipient:
        """What files for this identity are encrypted to; for an SSH key, its
        public key line. A plugin identity's is its plugin's to give:
        Unsupported."""
        return Recipient(self._native.recipient(0))

    def secret_key(self) -> str:
        """The age secret key of an X25519 or hybrid identity; any other type
        raises Unsupported."""
        return self._native.secret_key(0)

    def __repr__(self) -> str:
        try:
            recipient = f", recipient={str(self.recipient)!r}"
        except Unsupported:
            recipient = ""
        return f"Identity(type={self.type!r}{recipient})"


def generate_identity() -> Identity:
    return Identity.generate()


def parse_identities(text: str, passphrase: SshPassphrase = None) -> list[Identity]:
    """Every identity of an identity file as ``age-keygen`` writes it (one
    key a line, ``#`` comments), or of an OpenSSH private key file;
    ``passphrase`` as for :meth:`Identity.parse`."""
    native = _native.AgeIdentities()
    native.add(text, passphrase)
    identities = []
    for i in range(len(native)):
        one = _native.AgeIdentities()
        one.add_copy(native, i)
        identities.append(Identity(one))
    return identities


def parse_recipients(text: str) -> list[Recipient]:
    """Every recipient of a recipients file (one a line, ``#`` comments)."""
    _native.AgeRecipients().add(text)  # the whole file checked first
    lines = (line.strip() for line in text.splitlines())
    return [Recipient(line) for line in lines if line and not line.startswith("#")]


class PluginUI:
    """What an application answers an age plugin that asks the user
    something (a PIN, a touch, a choice), given as ``plugin_ui=`` to the
    call that runs the plugin. Subclass it and override what the
    application can do; each method here declines, so the plugin is
    answered "fail", as it is without a ``plugin_ui``, and most plugins
    then end the operation. ``plugin`` is the plugin's name (``"yubikey"``
    for ``age-plugin-yubikey``); every string comes from the plugin and is
    untrusted text, to be shown as such. The methods run on the thread of
    the call, with the GIL; an exception one raises answers "fail", and the
    call raises it once it returns."""

    def message(self, plugin: str, text: str) -> Optional[bool]:
        """Shows ``text``; returns None (or True) once it is shown, False
        where it cannot be."""
        return False

    def request_value(self, plugin: str, prompt: str, secret: bool) -> Optional[Union[str, bytes]]:
        """The value asked for after ``prompt``, typed without echo where
        ``secret`` (a PIN), or None to decline."""
        return None

    def confirm(self, plugin: str, prompt: str, yes: str, no: Optional[str]) -> Optional[bool]:
        """Asks ``prompt``, to be answered with the choice labelled ``yes``
        (True) or, where ``no`` is not None, the one labelled ``no``
        (False); None declines."""
        return None


_PLUGIN_UI_METHODS = ("message", "request_value", "confirm")


def _with_plugin_ui(native: _KeySet, plugin_ui: Optional[PluginUI]) -> _KeySet:
    if plugin_ui is not None:
        if not all(callable(getattr(plugin_ui, name, None)) for name in _PLUGIN_UI_METHODS):
            raise TypeError("plugin_ui must have the methods of warpcrypt.age.PluginUI: message, request_value "
                            "and confirm")
        native.set_plugin_ui(plugin_ui)
    return native


def _recipients(recipients: Optional[Iterable[Union[Recipient, str]]], passphrase: Passphrase,
                work_factor: int, plugin_ui: Optional[PluginUI]) -> "_native.AgeRecipients":
    native = _native.AgeRecipients()
    for recipient in recipients or ():  # None, as an empty list, where a passphrase is given
        native.add(str(recipient))
    if passphrase is not None:
        native.add_passphrase(passphrase.encode() if isinstance(passphrase, str) else passphrase, work_factor)
    if len(native) == 0:
        raise InvalidArgument("give recipients or a passphrase")
    return _with_plugin_ui(native, plugin_ui)


def _identities(identities: Optional[Iterable[Identity]], passphrase: Passphrase,
                max_work_factor: int, plugin_ui: Optional[PluginUI]) -> "_native.AgeIdentities":
    native = _native.AgeIdentities()
    for identity in identities or ():
        if not isinstance(identity, Identity):
            raise TypeError("identities must be warpcrypt.age.Identity objects (Identity.parse reads a key)")
        native.add_copy(identity._native, 0)
    if passphrase is not None:
        native.add_passphrase(passphrase.encode() if isinstance(passphrase, str) else passphrase, max_work_factor)
    if len(native) == 0:
        raise InvalidArgument("give identities or a passphrase")
    return _with_plugin_ui(native, plugin_ui)


def _range(offset: int, length: Optional[int]) -> tuple[int, int]:
    if offset < 0 or (length is not None and length < 0):
        raise InvalidArgument("offset and length must not be negative")
    return offset, _WHOLE if length is None else length


def encrypt(data: object, recipients: Optional[Sequence[Union[Recipient, str]]] = (), *, passphrase: Passphrase = None,
            armor: bool = False, work_factor: int = DEFAULT_WORK_FACTOR, backend: str = "auto", threads: int = 0,
            plugin_ui: Optional[PluginUI] = None) -> bytes:
    """The age file of ``data`` (any buffer) for every recipient, or for a
    passphrase alone. A plugin recipient's plugin asks ``plugin_ui`` what
    it asks the user."""
    return _native.age_encrypt(_recipients(recipients, passphrase, work_factor, plugin_ui), data, armor,
                               _table.backend_value(backend), threads)


def decrypt(data: object, identities: Optional[Sequence[Identity]] = (), *, passphrase: Passphrase = None,
            max_work_factor: int = DEFAULT_MAX_WORK_FACTOR, offset: int = 0, length: Optional[int] = None,
            backend: str = "auto", threads: int = 0, plugin_ui: Optional[PluginUI] = None) -> bytes:
    """The plaintext of an age file (binary or armored), or bytes ``[offset,
    offset + length)`` of it, authenticating only the chunks that hold them.
    A plugin identity's plugin asks ``plugin_ui`` what it asks the user."""
    begin, count = _range(offset, length)
    return _native.age_decrypt(_identities(identities, passphrase, max_work_factor, plugin_ui), data, begin, count,
                               _table.backend_value(backend), threads)


def encrypt_file(src: PathLike, dst: PathLike, recipients: Optional[Sequence[Union[Recipient, str]]] = (), *,
                 passphrase: Passphrase = None, armor: bool = False, work_factor: int = DEFAULT_WORK_FACTOR,
                 backend: str = "auto", threads: int = 0, plugin_ui: Optional[PluginUI] = None) -> None:
    """Encrypts the file ``src`` into ``dst``, atomically."""
    _native.age_encrypt_file(_recipients(recipients, passphrase, work_factor, plugin_ui), _path(src), _path(dst),
                             armor, _table.backend_value(backend), threads)


def decrypt_file(src: PathLike, dst: PathLike, identities: Optional[Sequence[Identity]] = (), *,
                 passphrase: Passphrase = None, max_work_factor: int = DEFAULT_MAX_WORK_FACTOR, offset: int = 0,
                 length: Optional[int] = None, backend: str = "auto", threads: int = 0,
                 plugin_ui: Optional[PluginUI] = None) -> None:
    """Decrypts the age file ``src`` into ``dst``, atomically: on any failure
    no ``dst`` is left behind."""
    begin, count = _range(offset, length)
    _native.age_decrypt_file(_identities(identities, passphrase, max_work_factor, plugin_ui), _path(src),
                             _path(dst), begin, count, _table.backend_value(backend), threads)


def _descriptor(stream: BinaryIO, role: str) -> int:
    try:
        return stream.fileno()
    except (AttributeError, OSError) as exc:
        raise TypeError(f"{role} must be a binary stream with a file descriptor (fileno())") from exc


def encrypt_stream(source: BinaryIO, target: BinaryIO, recipients: Optional[Sequence[Union[Recipient, str]]] = (), *,
                   passphrase: Passphrase = None, armor: bool = False, work_factor: int = DEFAULT_WORK_FACTOR,
                   backend: str = "auto", threads: int = 0, plugin_ui: Optional[PluginUI] = None) -> None:
    """Encrypts from ``source``'s position to its end into ``target`` at its
    position; both are binary streams with descriptors (files, pipes,
    sockets). Buffered data is flushed first."""
    target.flush()
    _native.age_encrypt_fd(_recipients(recipients, passphrase, work_factor, plugin_ui), _descriptor(target, "target"),
                           _sync(source), armor, _table.backend_value(backend), threads)


def decrypt_stream(source: BinaryIO, target: BinaryIO, identities: Optional[Sequence[Identity]] = (), *,
                   passphrase: Passphrase = None, max_work_factor: int = DEFAULT_MAX_WORK_FACTOR,
                   backend: str = "auto", threads: int = 0, plugin_ui: Optional[PluginUI] = None) -> None:
    """Decrypts the age file read from ``source`` into ``target`` (binary
    streams with descriptors). A streamed target may hold the chunks
    authenticated before a failure."""
    target.flush()
    _native.age_decrypt_fd(_identities(identities, passphrase, max_work_factor, plugin_ui),
                           _descriptor(target, "target"), _sync(source), 0, _WHOLE, _table.backend_value(backend),
                           threads)


def _sync(source: BinaryIO) -> int:
    """The source's descriptor at the position the stream object reports,
    which read-ahead may have left behind."""
    fd = _descriptor(source, "source")
    if source.seekable():
        os.lseek(fd, source.tell(), os.SEEK_SET)
    return fd


@dataclass(frozen=True)
class AgeInfo:
    """What an age file says of itself without being decrypted, as
    ``warpcrypt age-inspect`` (and age 1.3's ``age-inspect``) reports it. The
    sizes add up to the file's: ``header_size + armor_size + overhead_size +
    payload_size == file_size``."""

    armored: bool
    # "no" where a recipient's key is classical (X25519, SSH), "yes" where
    # every one is post-quantum or a passphrase, else "unknown"
    postquantum: str
    stanza_types: tuple[str, ...]  # the recipient stanzas' types, in the header's order
    header_size: int  # the binary header, version line through MAC line
    armor_size: int  # what the armor adds; 0 for a binary file
    overhead_size: int  # the payload's nonce and one tag per chunk
    payload_size: int  # the plaintext, if the file decrypts
    chunks: int  # the payload's 64 KiB chunks
    file_size: int


def inspect(source: Union[PathLike, BinaryIO]) -> AgeInfo:
    """The header facts and sizes of the age file at path ``source``, or read
    from a binary stream with a descriptor (from its position on); needs no
    identity. A file that breaks the format raises FormatError, naming the
    rule."""
    if isinstance(source, (str, bytes, os.PathLike)):
        path = _path(source)
        with open(path, "rb") as opened:
            facts = _native.age_inspect_fd(opened.fileno(), path)
    else:
        name = getattr(source, "name", None)
        facts = _native.age_inspect_fd(_sync(source), name if isinstance(name, str) else repr(source))
    return AgeInfo(*facts)

