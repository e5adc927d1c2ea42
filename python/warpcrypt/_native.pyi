"""
The warpcrypt C library, for the warpcrypt package; use the package, not this module.
"""

from collections.abc import Sequence


def status_codes() -> list[tuple[str, int]]:
    """The C library's wc_status codes as (wc_status_name, code), in order."""

def status_string(code: int) -> str:
    """
    The C library's description of a status code ("unknown status" for a code it lacks).
    """

AEAD_MIN_TAG_SIZE: int = 4

AEAD_MAX_TAG_SIZE: int = 16

AEAD_MAX_NONCE_SIZE: int = 128

def aead_table() -> list[tuple[str, int, int, int]]:
    """
    Each AEAD of the library's table as (name, key size, recommended nonce size, longest message one nonce may seal), in bytes.
    """

class Aead:
    """
    A key bound to one AEAD and tag length (warpcrypt.aead's classes hold one). Threads may share it; the key is wiped when it is collected.
    """

    def __init__(self, name: str, key: object, tag_size: int, backend: int, threads: int) -> None: ...

    @property
    def tag_size(self) -> int: ...

    def seal(self, nonce: object | None, data: object | None, aad: object | None, resolver: object) -> bytes:
        """Host memory in; the ciphertext with the tag attached, as bytes."""

    def open(self, nonce: object | None, data: object | None, aad: object | None, resolver: object) -> bytes:
        """
        The ciphertext with its tag attached in; the plaintext as bytes, or InvalidTag.
        """

    def seal_into(self, nonce: object | None, data: object | None, aad: object | None, buf: object | None, tag: object | None, stream: int | None, resolver: object) -> int:
        """
        Into buf (host or GPU memory), the tag attached or into `tag`; returns the bytes written to buf.
        """

    def open_into(self, nonce: object | None, data: object | None, aad: object | None, buf: object | None, tag: object | None, verified: object | None, stream: int | None, resolver: object) -> int:
        """
        Into buf, the tag attached to data or in `tag`; returns the plaintext bytes written to buf.
        """

    def seal_batch(self, nonces: list[object], messages: list[object], aads: list[object] | None, bufs: list[object] | None, tags: list[object] | None, stream: int | None, resolver: object) -> list[bytes] | None:
        """
        Many messages in one library call; a list of bytes without bufs, else None.
        """

    def open_batch(self, nonces: list[object], messages: list[object], aads: list[object] | None, bufs: list[object] | None, tags: list[object] | None, verified: object | None, stream: int | None, resolver: object) -> tuple[list[bytes] | None, list[int]]:
        """(results, indices of the messages that failed authentication)."""

    def seal_chunks(self, nonces: object, data: object, chunk_size: int, tags: object, buf: object | None, stream: int | None, resolver: object) -> None:
        """
        data cut into chunk_size-byte messages, sealed in place or into buf, their tags into `tags`.
        """

    def open_chunks(self, nonces: object, data: object, chunk_size: int, tags: object, buf: object | None, verified: object | None, stream: int | None, resolver: object) -> list[int]:
        """
        The chunks opened as seal_chunks sealed them; the indices of those that failed.
        """

SEAL_PASSPHRASE: int = 1

SEAL_KEY: int = 2

SEAL_DEFAULT_CHUNK_BYTES: int = 1048576

SEAL_MIN_CHUNK_BYTES: int = 4096

SEAL_MAX_CHUNK_BYTES: int = 1073741824

SEAL_ARGON2ID: int = 1

SEAL_PBKDF2: int = 2

SEAL_DEFAULT_ARGON2_OPS: int = 3

SEAL_DEFAULT_ARGON2_MEMORY: int = 268435456

SEAL_DEFAULT_ITERATIONS: int = 600000

OPEN_DEFAULT_MAX_ITERATIONS: int = 2000000

OPEN_DEFAULT_MAX_ARGON2_OPS: int = 4

OPEN_DEFAULT_MAX_ARGON2_MEMORY: int = 1073741824

def crypt_file(direction: int, cipher: str, key: object, iv: object | None, source: str, target: str, padding: bool, backend: int, threads: int, progress: object | None) -> tuple[int, int, float, int, int]: ...

def seal_file(source: str, target: str, key_source: int, secret: object, aead: str, chunk_bytes: int, kdf: int, argon2_ops: int, argon2_memory: int, iterations: int, digest: str, backend: int, threads: int, progress: object | None) -> tuple[int, int, float, int, int]: ...

def open_file(source: str, target: str, key_source: int, secret: object, offset: int, length: int, max_iterations: int, max_argon2_ops: int, max_argon2_memory: int, backend: int, threads: int, progress: object | None) -> tuple[int, int, float, int, int]: ...

def sealed_info(path: str) -> tuple[str, int, str | None, int, int, int, int, bytes, bytes, int, int, int]: ...

def move_beneath(root: str, path: str, file: str) -> None:
    """
    Moves the complete file to path beneath the folder root (wc_output_move_beneath): no folder on the way a link, a replaced file's mode kept.
    """

def fill_mapped(region: object, data: object | None) -> bool:
    """
    Makes the pages under region (a shared file mapping) present, then copies data there, without the GIL; False where the kernel cannot (before Linux 5.14).
    """

def read_files_to_device(ranges: Sequence[tuple[int, int, int, int]]) -> None:
    """
    Reads each (fd, offset, length, device pointer) range of open files into device memory, without the GIL; returns once every byte is there (wc_read_files_to_device).
    """

SEAL_HEADER_LEN: int = 48

SEAL_TAG_LEN: int = 16

class AtomicOutput:
    """
    A file written beside its target and renamed over it on commit (wc_output_open).
    """

    def __init__(self, path: str, inputs: Sequence[int] = [], secret: bool = False) -> None:
        """
        inputs: descriptors of the files read for this output, which it may not be; secret: a key, mode 0600 once complete too.
        """

    @property
    def fd(self) -> int:
        """The descriptor to write the data to."""

    def commit(self) -> None:
        """Gives the file its final mode and name, and closes it."""

    def discard(self) -> None:
        """Removes the file unless committed, and closes it."""

class SealedStream:
    """
    A sealed file's key and header: its chunks sealed or opened one at a time.
    """

    @staticmethod
    def seal(name: str, key_source: int, secret: object, aead: str, chunk_bytes: int, kdf: int, argon2_ops: int, argon2_memory: int, iterations: int, digest: str, backend: int) -> tuple[SealedStream, bytes]:
        """A stream that seals a new file: (stream, the header to write first)."""

    @staticmethod
    def open(name: str, header: bytes, key_source: int, secret: object, max_iterations: int, max_argon2_ops: int, max_argon2_memory: int, backend: int) -> SealedStream:
        """A stream that opens the file with this header."""

    @property
    def chunk_size(self) -> int:
        """Plaintext bytes per chunk."""

    def layout(self, body_len: int) -> tuple[int, int]:
        """
        (chunks, plaintext bytes) of a file whose body, after the header, is body_len bytes.
        """

    def seal_chunk(self, index: int, last: bool, data: object) -> bytes:
        """Chunk `index` sealed: its ciphertext and tag."""

    def open_chunk(self, index: int, last: bool, data: object) -> bytes:
        """Sealed chunk `index` opened: its plaintext, once its tag matched."""

AGE_DEFAULT_WORK_FACTOR: int = 18

AGE_DEFAULT_MAX_WORK_FACTOR: int = 22

AGE_MAX_WORK_FACTOR: int = 30

class AgeRecipients:
    def __init__(self) -> None: ...

    def add(self, arg: str, /) -> None: ...

    def add_passphrase(self, arg0: object, arg1: int, /) -> None: ...

    def set_plugin_ui(self, ui: object) -> None:
        """
        The plugins of these recipients ask `ui` (a warpcrypt.age.PluginUI) what they ask the user.
        """

    def __len__(self) -> int: ...

class AgeIdentities:
    def __init__(self) -> None: ...

    def generate(self) -> None: ...

    def add(self, text: str, passphrase: object | None = None) -> None:
        """
        Adds the identities of `text`; `passphrase` (str, bytes or a callable returning either) opens a passphrase-protected SSH key among them, held in native memory or asked when a file names the key.
        """

    def add_passphrase(self, arg0: object, arg1: int, /) -> None: ...

    def add_copy(self, source: AgeIdentities, index: int) -> None: ...

    def set_plugin_ui(self, ui: object) -> None:
        """
        The plugin identities of this set ask `ui` (a warpcrypt.age.PluginUI) what they ask the user.
        """

    def type(self, arg: int, /) -> str: ...

    def secret_key(self, arg: int, /) -> str: ...

    def recipient(self, arg: int, /) -> str: ...

    def __len__(self) -> int: ...

def age_encrypt(recipients: AgeRecipients, data: object, armor: bool, backend: int, threads: int) -> bytes: ...

def age_decrypt(identities: AgeIdentities, data: object, offset: int, length: int, backend: int, threads: int) -> bytes: ...

def age_encrypt_fd(recipients: AgeRecipients, out_fd: int, in_fd: int, armor: bool, backend: int, threads: int) -> None: ...

def age_decrypt_fd(identities: AgeIdentities, out_fd: int, in_fd: int, offset: int, length: int, backend: int, threads: int) -> None: ...

def age_inspect_fd(in_fd: int, name: str) -> tuple[bool, str, tuple[str, ...], int, int, int, int, int, int]:
    """
    (armored, postquantum, stanza types, header, armor, overhead and payload sizes, chunks, file size) of the age file read from in_fd, which nothing decrypts.
    """

def age_encrypt_file(recipients: AgeRecipients, source: str, target: str, armor: bool, backend: int, threads: int) -> None: ...

def age_decrypt_file(identities: AgeIdentities, source: str, target: str, offset: int, length: int, backend: int, threads: int) -> None: ...

def describe_plan(subject: str, direction: int, data: str, total_bytes: int, backend: int, threads: int) -> tuple[str, str, int, int, int, list[int], bool, int, int]:
    """
    (backend, reason, cpu_lanes, spare_cpu_lanes, gpu_lanes_per_device, devices, gpu_lanes_late, chunk_bytes, unit_bytes): where the library runs a job of `subject` on `data` ('pageable', 'pinned', 'device' or 'stream') memory.
    """

ENCRYPT: int = 1

DECRYPT: int = 0

def version() -> str: ...

def backend_values() -> dict[str, int]:
    """Backend name -> wc_backend value."""

def hkdf(digest: str, secret: object, salt: object, info: object, length: int) -> bytes:
    """
    HKDF (RFC 5869) of `secret` under `salt` and `info`, `length` bytes, with an OpenSSL digest such as "sha256". An empty salt stands for a digest's length of zero bytes.
    """

def hmac(digest: str, key: object, message: object, length: int) -> bytes:
    """
    HMAC of `message` under `key` with an OpenSSL digest such as "sha256"; `length` is the digest's.
    """

def random_bytes(length: int) -> bytes:
    """`length` bytes from the library's random source."""

def ed25519_public_key(seed: object) -> bytes:
    """The Ed25519 public key of a 32-byte seed."""

def ed25519_sign(seed: object, message: object) -> bytes:
    """An Ed25519 signature (64 bytes)."""

def ed25519_verify(public_key: object, signature: object, message: object) -> bool:
    """Whether `signature` is a valid Ed25519 signature of `message`."""

def default_threads() -> int:
    """What threads=0 means: the usable CPUs (affinity, cgroup quota)."""

def built_with_cuda() -> bool: ...

def device_count() -> int: ...

def device_info(index: int) -> tuple[int, str, tuple[int, int], int, int, str]:
    """
    (index, name, (major, minor), multiprocessors, memory bytes, PCI bus id) of a CUDA device.
    """

class CipherInfo:
    """A cipher of the library's table and its sizes in bytes."""

    @property
    def name(self) -> str: ...

    @property
    def key_size(self) -> int: ...

    @property
    def iv_size(self) -> int:
        """0 for ECB, which takes no IV."""

    @property
    def block_size(self) -> int:
        """16 for ECB and CBC, 1 for the stream-like modes and stream ciphers."""

    @property
    def padded(self) -> bool:
        """Whether the mode pads with PKCS#7 unless padding is off (ECB and CBC)."""

    def __repr__(self) -> str: ...

def cipher_info(name: str) -> CipherInfo:
    """The cipher by its `openssl enc` name, case-insensitively."""

def cipher_infos() -> list[CipherInfo]: ...

def crypt(direction: int, info: CipherInfo, key: object, iv: object | None, data: object, padding: bool, backend: int, threads: int) -> bytes:
    """One-shot work on host memory, returning bytes."""

def crypt_into(direction: int, info: CipherInfo, key: object, iv: object | None, data: object, out: object, padding: bool, backend: int, threads: int, stream: int | None, stream_offset: int, resolver: object) -> int:
    """
    One-shot work into `out`, in host or GPU memory, returning the bytes written.
    """

class CipherContext:
    """
    Encrypts or decrypts a message piece by piece (Cipher.encryptor(), Cipher.decryptor()).
    """

    def __init__(self, info: CipherInfo, direction: int, key: object, iv: object | None, padding: bool, backend: int, threads: int) -> None: ...

    def update(self, data: object) -> bytes:
        """
        Processes `data` and returns the output so far. Block modes may hold back up to one block.
        """

    def update_into(self, data: object, buf: object) -> int:
        """
        As update(), writing into the writable buffer `buf`; returns the bytes written. `buf` must hold len(data) plus what earlier calls held back: up to 16 bytes in ECB, CBC and CFB decryption.
        """

    def finalize(self) -> bytes:
        """
        Returns the last block (padding on encryption, held bytes on decryption) and wipes the key.
        """

    @property
    def backend(self) -> str:
        """The backend running this context: 'cpu' or 'gpu'."""

def c_encrypt_ns(name: str, key: bytes, iv: bytes, data: bytes, iterations: int) -> float:
    """
    Mean ns per wc_encrypt call, looped in C (bench/python_overhead.py's baseline).
    """

def c_encrypt_device(name: str, key: bytes, iv: bytes, pointer: int, length: int, stream: int) -> None:
    """
    One in-place wc_encrypt_device_async call (bench/python_overhead.py's baseline).
    """
