"""Encrypted safetensors: CryptoTensors files, read and written by warpcrypt,
decrypted where the tensors are going (on the GPU for a CUDA device).

A CryptoTensors file is a safetensors file whose tensors are encrypted with
AES-GCM or ChaCha20-Poly1305 under data keys of their own, wrapped under a
master key, and whose header carries an Ed25519 signature; the
``cryptotensors`` package writes and reads the same files
(``warpcrypt._cryptotensors`` describes the format and what it
authenticates). Keys are JWKs, as that package takes them::

    keys = warpcrypt.safetensors.generate_keys()          # a JWK Set: master + signing key
    warpcrypt.safetensors.save_file(model.state_dict(), "model.safetensors", keys=keys)
    weights = warpcrypt.safetensors.load_file("model.safetensors", device="cuda:0", keys=keys)

To a GPU, the library reads the ciphertext into each tensor's own
allocation, through page-locked slots small enough to stay in the CPU's
cache, and it is decrypted there in place: the plaintext never exists in
host memory. A file without encryption loads as
safetensors loads it when no keys are given; with keys, an unsigned file is
refused, so that a stripped file cannot pass for a verified one.

These functions are ``safetensors.torch``'s with more options (NumPy
arrays, RawTensor, device maps, partial encryption, progress);
``warpcrypt.safetensors.numpy`` and ``warpcrypt.safetensors.torch`` have
exactly the functions of ``safetensors.numpy`` and ``safetensors.torch``,
each taking `keys` as well.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import errno
import mmap
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Union

from warpcrypt import _cryptotensors as ct
from warpcrypt import _native
from warpcrypt._cryptotensors import Entry, KeySet, Sealing, generate_keys
from warpcrypt._files import _output
from warpcrypt._tensor_keys import Keys as Keys  # re-exported: the modules beside it take it from here
from warpcrypt.exceptions import FormatError, InvalidArgument, InvalidTag, Unsupported, _tensor_not_authentic

__all__ = ["RawTensor", "TensorSlice", "generate_keys", "load_file", "rewrap_file", "safe_open", "save_file"]

PathLike = Union[str, "os.PathLike[str]"]
DeviceSpec = Union[str, int, Any]
# progress(bytes done, bytes total) of tensor data, called as pieces complete.
Progress = Callable[[int, int], None]

# A reader's and a GPU staging slot's unit of work: large enough that a
# system call and a copy launch cost nothing beside it, small enough that
# every reader has one in flight.
PIECE_BYTES = 16 * 1024 * 1024


def _readers() -> int:
    """Threads that read and decrypt at once on the CPU, or write a save's
    slots: a read from the page cache is a copy by the kernel, a few GB/s
    per thread, so 16 as far as the CPUs go. The usable CPUs are the
    library's count (affinity and cgroup quota included), as every other
    job's workers are. Loads to a GPU read in the library
    (wc_read_files_to_device), which places its own readers."""
    return min(16, _native.default_threads())


# How much of a file being written its reserving thread reserves at a time.
_RESERVE_STEP = 64 << 20


def _gpu_slots(in_flight: int) -> int:
    """A save's pinned slots per device: twice the pieces in flight, so a
    slot comes back to the writers only once the copy queued behind it half
    a round ago has long finished, and the copy engine never waits on a
    refill."""
    return 2 * in_flight


# How many bytes of tensors one call of the library reads to the GPUs
# (wc_read_files_to_device): a batch's tensors are opened on their devices
# while the next batch is read, so the openings hide behind the reads, and
# a batch is large enough that its first and last slots, when not every
# reader is busy, cost little beside it.
_GPU_BATCH_BYTES = 1 << 30


class _ByteCount:
    """The bytes of tensor data done, told to a progress callback as pieces
    complete. Pieces complete on several threads at once: the lock keeps
    the count and the calls in one order, so that the bytes done only grow
    and the last call says (total, total). A callback that raises fails the
    piece, and with it the whole operation."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self._total, self._progress = total, progress
        self._done = 0
        self._lock = threading.Lock()

    def add(self, nbytes: int) -> None:
        if self._progress is None or not nbytes:
            return
        with self._lock:
            self._done += nbytes
            assert self._done <= self._total, "more bytes done than there are"
            self._progress(self._done, self._total)


# What callers without a progress callback count with.
_UNCOUNTED = _ByteCount(0, None)


# ---------------------------------------------------------------- frameworks


class _Framework:
    """How one tensor library allocates bytes and views them as tensors."""

    name: str

    def empty(self, nbytes: int, device: Any) -> Any:
        raise NotImplementedError

    def host_view(self, array: Any) -> memoryview:
        raise NotImplementedError

    def finish(self, array: Any, dtype: str, shape: tuple[int, ...]) -> Any:
        raise NotImplementedError

    def device(self, spec: DeviceSpec) -> Any:
        raise NotImplementedError

    def is_cuda(self, device: Any) -> bool:
        return False

    def describe(self, tensor: Any) -> tuple[str, tuple[int, ...]] | None:
        raise NotImplementedError


class _Numpy(_Framework):
    name = "numpy"
    _DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16", "F16": "float16",
               "I32": "int32", "U32": "uint32", "F32": "float32", "C64": "complex64", "F64": "float64",
               "I64": "int64", "U64": "uint64"}

    def __init__(self) -> None:
        import numpy

        self.np = numpy
        self._names = {numpy.dtype(v): k for k, v in self._DTYPES.items()}

    def empty(self, nbytes: int, device: Any) -> Any:
        return self.np.empty(nbytes, dtype=self.np.uint8)

    def host_view(self, array: Any) -> memoryview:
        view: memoryview = array.data
        return view

    def finish(self, array: Any, dtype: str, shape: tuple[int, ...]) -> Any:
        if dtype not in self._DTYPES:
            raise Unsupported(f"NumPy has no {dtype}: load this file with framework='pt'")
        return array.view(self._DTYPES[dtype]).reshape(shape)

    def device(self, spec: DeviceSpec) -> Any:
        if spec not in ("cpu", None):
            raise InvalidArgument(f"NumPy arrays live on the CPU, not on {spec!r}")
        return "cpu"

    def describe(self, tensor: Any) -> tuple[str, tuple[int, ...]] | None:
        if not isinstance(tensor, self.np.ndarray):
            return None
        name = self._names.get(tensor.dtype.newbyteorder("="))
        if name is None:
            raise InvalidArgument(f"NumPy dtype {tensor.dtype} has no safetensors dtype")
        return name, tuple(tensor.shape)

    def host_bytes(self, tensor: Any) -> memoryview:
        # safetensors files are little-endian: a big-endian array is written
        # swapped, as safetensors.numpy writes it; a strided one, as its
        # values in order (the bytes it views, not the memory beneath).
        little = self.np.ascontiguousarray(tensor, dtype=tensor.dtype.newbyteorder("<"))
        view: memoryview = little.reshape(-1).view(self.np.uint8).data
        return view


class _Torch(_Framework):
    name = "torch"
    _DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16", "F16": "float16",
               "BF16": "bfloat16", "I32": "int32", "U32": "uint32", "F32": "float32", "C64": "complex64",
               "F64": "float64", "I64": "int64", "U64": "uint64", "F8_E5M2": "float8_e5m2",
               "F8_E4M3": "float8_e4m3fn", "F8_E8M0": "float8_e8m0fnu"}

    def __init__(self) -> None:
        try:
            import torch  # type: ignore[import-not-found, unused-ignore]
        except ModuleNotFoundError as missing:
            if missing.name != "torch":
                raise
            raise ModuleNotFoundError("framework 'pt' needs PyTorch, which is not installed: use "
                                      "warpcrypt.safetensors.numpy, or framework='np'", name="torch") from None
        self.torch = torch
        self._types = {k: getattr(torch, v) for k, v in self._DTYPES.items() if hasattr(torch, v)}
        self._names = {v: k for k, v in self._types.items()}

    def empty(self, nbytes: int, device: Any) -> Any:
        return self.torch.empty(nbytes, dtype=self.torch.uint8, device=device)

    def host_view(self, array: Any) -> memoryview:
        return memoryview(array.numpy())

    def finish(self, array: Any, dtype: str, shape: tuple[int, ...]) -> Any:
        if dtype not in self._types:
            raise Unsupported(f"this PyTorch has no {dtype}")
        return array.view(self._types[dtype]).reshape(shape)

    def device(self, spec: DeviceSpec) -> Any:
        device = self.torch.device(f"cuda:{spec}" if isinstance(spec, int) else spec or "cpu")
        if device.type == "cuda" and device.index is None:
            device = self.torch.device("cuda", self.torch.cuda.current_device())
        if device.type not in ("cpu", "cuda"):
            raise InvalidArgument(f"warpcrypt.safetensors loads to the CPU or a CUDA device, not {device}")
        return device

    def is_cuda(self, device: Any) -> bool:
        return bool(device.type == "cuda")

    def describe(self, tensor: Any) -> tuple[str, tuple[int, ...]] | None:
        if not isinstance(tensor, self.torch.Tensor):
            return None
        name = self._names.get(tensor.dtype)
        if name is None:
            raise InvalidArgument(f"PyTorch dtype {tensor.dtype} has no safetensors dtype")
        return name, tuple(tensor.shape)

    def host_bytes(self, tensor: Any) -> memoryview:
        flat = tensor.detach().contiguous().reshape(-1).view(self.torch.uint8)
        return memoryview(flat.numpy())


@dataclass(frozen=True)
class RawTensor:
    """A tensor as the file holds it, with no tensor library: its
    safetensors dtype name ("BF16", "F32", ...), its shape and its bytes.
    ``framework="raw"`` loads these; :func:`save_file` writes them."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes | bytearray | memoryview = field(repr=False)


class _Raw(_Framework):
    name = "raw"

    def empty(self, nbytes: int, device: Any) -> Any:
        return bytearray(nbytes)

    def host_view(self, array: Any) -> memoryview:
        return memoryview(array)

    def finish(self, array: Any, dtype: str, shape: tuple[int, ...]) -> Any:
        return RawTensor(dtype, shape, array)

    def device(self, spec: DeviceSpec) -> Any:
        if spec not in ("cpu", None):
            raise InvalidArgument(f"raw tensors live on the CPU, not on {spec!r}")
        return "cpu"

    def describe(self, tensor: Any) -> tuple[str, tuple[int, ...]] | None:
        if not isinstance(tensor, RawTensor):
            return None
        if tensor.dtype not in ct.DTYPE_BITS:
            raise InvalidArgument(f"unknown safetensors dtype {tensor.dtype!r}")
        bits = ct.tensor_bits(tensor.dtype, tensor.shape)
        held = memoryview(tensor.data).nbytes
        if bits != 8 * held:
            raise InvalidArgument(f"a {tensor.dtype} tensor of shape {list(tensor.shape)} is {ct.size_text(bits)}, "
                                  f"not the {held} given")
        return tensor.dtype, tuple(tensor.shape)

    def host_bytes(self, tensor: Any) -> memoryview:
        return memoryview(tensor.data).cast("B")


def _framework(name: str) -> _Framework:
    if name in ("pt", "torch", "pytorch"):
        return _Torch()
    if name in ("np", "numpy"):
        return _Numpy()
    if name == "raw":
        return _Raw()
    raise InvalidArgument(f"framework {name!r}: warpcrypt.safetensors serves 'pt' (PyTorch), 'np' (NumPy) "
                          "and 'raw' (RawTensor)")


# ---------------------------------------------------------------- an open file


class _File:
    """An open file whose header has been read and, if encrypted, verified."""

    def __init__(self, path: PathLike, keys: Keys) -> None:
        name = os.fspath(path)
        self._verify(name, open(name, "rb"), keys)

    @classmethod
    def of_bytes(cls, data: bytes | bytearray | memoryview, keys: Keys) -> _File:
        """A file's bytes held in memory, read as the file would be."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"load takes the file's bytes, not {type(data).__name__}")
        file = cls.__new__(cls)
        stream = _memory_file()
        try:
            stream.write(data)
            stream.seek(0)
        except BaseException:
            stream.close()
            raise
        file._verify("<bytes>", stream, keys)
        return file

    def _verify(self, path: str, stream: IO[bytes], keys: Keys) -> None:
        """Reads the header from `stream`, which it then owns."""
        self.path, self.stream = path, stream
        try:
            size = os.fstat(self.stream.fileno()).st_size
            self.header, self.crypto = ct.read_file(self.stream, size, None if keys is None else KeySet(keys))
        except BaseException:
            self.stream.close()
            raise
        self.entries = {entry.name: entry for entry in self.header.entries}

    def close(self) -> None:
        self.stream.close()

    def sealing(self, name: str) -> Sealing | None:
        return self.crypto.sealings.get(name) if self.crypto is not None else None

    def names(self) -> list[str]:
        """The tensors' names in the order of their data."""
        return [entry.name for entry in self.header.entries]

    def job(self, name: str, framework: _Framework, device: Any,
            span: tuple[int, int] | None = None) -> tuple[_Job, int]:
        """Tensor `name` to load onto `device`: whole, or the least of it
        that holds its bytes `span` = [start, end) and authenticates on its
        own (those bytes where it is in the clear, the chunks that cover
        them, a one-message tensor whole). Returns the job and where in its
        array the span's first byte lands."""
        entry, sealing = self.entries[name], self.sealing(name)
        start, end = span or (0, entry.nbytes)
        skip, first = 0, 0
        if sealing is not None:
            size = sealing.chunk_size or max(entry.nbytes, 1)
            first, last = start // size, max(start // size + 1, -(-end // size))
            sealing = dataclasses.replace(sealing, nonces=sealing.nonces[first:last],
                                          tags=sealing.tags[ct.TAG_BYTES * first:ct.TAG_BYTES * last])
            skip, start, end = start - first * size, first * size, min(last * size, entry.nbytes)
        part = dataclasses.replace(entry, start=entry.start + start, end=entry.start + end)
        return _Job(part, sealing, self.stream.fileno(), self.header.data_start + part.start,
                    framework.empty(part.nbytes, device), first), skip

    def user_metadata(self) -> dict[str, str] | None:
        """The metadata its writer gave, None where it gave none, as
        safetensors reads it: a CryptoTensors file's header always has
        metadata (the encryption's), which says nothing of the writer's."""
        metadata = self.header.user_metadata()
        return None if self.crypto is not None and not metadata else metadata


def _memory_file() -> IO[bytes]:
    """An empty file in memory with a descriptor, which the readers and
    writers that take one file take as they take a file on disk."""
    return open(os.memfd_create("warpcrypt-safetensors", os.MFD_CLOEXEC), "w+b")


# ---------------------------------------------------------------- loading


@dataclass
class _Piece:
    """Bytes [start, end) of a tensor, and the messages (index, start, end)
    to seal or open once they are there."""

    start: int
    end: int
    messages: list[tuple[int, int, int]]


@dataclass
class _Job:
    """Bytes to load, a tensor or the chunks of one that a slice needs:
    where they are and where they go."""

    entry: Entry  # the tensor, or for a slice the part of it loaded (its bytes and messages)
    sealing: Sealing | None  # of the part: the nonces and tags of its messages
    fd: int
    offset: int  # of the part's first byte in the file
    array: Any  # uint8, entry.nbytes long, on the target device
    first_message: int = 0  # the part's first message in the tensor's count, which errors give

    def failure(self, message: int) -> InvalidTag:
        """The part's message `message` did not authenticate: the error
        names it where the tensor is cut into chunks, and only the tensor
        otherwise."""
        assert self.sealing is not None
        chunked = self.sealing.chunk_size is not None
        return _tensor_not_authentic(self.entry.name, self.first_message + message if chunked else None)


def _read_into(fd: int, view: memoryview, offset: int) -> None:
    done = 0
    while done < len(view):
        got = os.preadv(fd, [view[done:]], offset + done)
        if got == 0:
            raise FormatError("truncated: the file ended while its tensors were read")
        done += got


def _open_empty(job: _Job) -> None:
    """An empty tensor's one empty message: its tag authenticates it still."""
    sealing = job.sealing
    assert sealing is not None
    try:
        sealing.aead.decrypt(sealing.nonces[0], bytes(sealing.tags[:ct.TAG_BYTES]), sealing.associated_data)
    except InvalidTag:
        raise job.failure(0) from None


def _load_jobs(by_device: Mapping[Any, Sequence[_Job]], framework: _Framework,
               count: _ByteCount = _UNCOUNTED) -> None:
    """Reads and opens each job's bytes into its array, the jobs of every
    file at once: arrays in host memory on every core, arrays on GPUs
    read there by the library and opened there."""
    host = [job for device, jobs in by_device.items() if not framework.is_cuda(device) for job in jobs]
    gpus = {device: jobs for device, jobs in by_device.items() if framework.is_cuda(device)}
    if host:
        _load_host(host, framework, count)
    if gpus:
        _load_gpus(gpus, framework, count)


def _load_host(jobs: Sequence[_Job], framework: _Framework, count: _ByteCount) -> None:
    """Reads each tensor into its array and decrypts it there, pieces in
    parallel: each piece is read and its chunks opened while in cache."""

    def load_piece(job: _Job, piece: _Piece) -> None:
        view = framework.host_view(job.array)
        _read_into(job.fd, view[piece.start:piece.end], job.offset + piece.start)
        sealing = job.sealing
        for index, first, last in piece.messages:
            assert sealing is not None
            tag = sealing.tags[ct.TAG_BYTES * index:ct.TAG_BYTES * (index + 1)]
            try:
                sealing.aead.decrypt_into(sealing.nonces[index], view[first:last], sealing.associated_data,
                                          view[first:last], tag=tag)
            except InvalidTag:
                raise job.failure(index) from None
        count.add(piece.end - piece.start)

    _run_all(load_piece, [(job, piece) for job in jobs
                          for piece in _pieces(job.entry, job.sealing, split_one_message=False)])


def _pieces(entry: Entry, sealing: Sealing | None, *, split_one_message: bool) -> Iterator[_Piece]:
    """A tensor cut into pieces of about PIECE_BYTES, each with the messages
    that can be sealed or opened once it has arrived: a chunked tensor's
    pieces hold whole chunks. A one-message tensor (version 1) is one piece,
    or with `split_one_message` several, its message with the last."""
    nbytes = entry.nbytes
    messages = sealing.messages(nbytes) if sealing is not None else []
    chunked = sealing is not None and sealing.chunk_size is not None
    if chunked:
        assert sealing is not None and sealing.chunk_size is not None
        step = sealing.chunk_size * max(1, PIECE_BYTES // sealing.chunk_size)
    elif sealing is not None and not split_one_message:
        step = max(nbytes, 1)
    else:
        step = PIECE_BYTES
    starts = range(0, nbytes, step) if nbytes else [0]
    for start in starts:
        end = min(start + step, nbytes)
        if chunked:
            opened = [(i, s, e) for i, (s, e) in enumerate(messages) if start <= s < end or s == e == start]
        else:
            opened = [(i, s, e) for i, (s, e) in enumerate(messages) if end == nbytes]
        yield _Piece(start, end, opened)


def _run_all(work: Callable[..., None], tasks: Sequence[tuple[Any, ...]]) -> None:
    """Runs every task on the readers. A failure stops the tasks not yet
    started, and once the running ones are done, the failure of the first
    task in order is raised: which piece finished first must not decide
    which tensor an error names."""
    if len(tasks) <= 1:
        for task in tasks:
            work(*task)
        return
    with concurrent.futures.ThreadPoolExecutor(_readers()) as pool:
        futures = [pool.submit(work, *task) for task in tasks]
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
        except BaseException as failure:
            for future in futures:
                future.cancel()
            if not isinstance(failure, Exception):  # an interrupt of this thread's wait
                raise
            concurrent.futures.wait(futures)
            errors = [future.exception() for future in futures if not future.cancelled()]
            raise next(error for error in errors if error is not None) from None


class _GpuOpening:
    """The openings on one CUDA device: the tensors' nonces and tags go up
    once, each tensor's chunks are opened in place on a stream of their own
    once its bytes have arrived, recording each chunk's verdict on the
    device, and the verdicts are read once, at the end."""

    def __init__(self, torch: Any, device: Any, jobs: Sequence[_Job]) -> None:
        self.torch, self.device = torch, device
        self.stream = torch.cuda.Stream(device)
        self.sealed = [(job, job.sealing) for job in jobs if job.sealing is not None]
        self.verdicts = torch.zeros(max(1, sum(len(sealing.nonces) for _, sealing in self.sealed)),
                                    dtype=torch.int32, device=device)
        self.tags = self._upload(b"".join(sealing.tags for _, sealing in self.sealed))
        self.nonces = self._upload(b"".join(b"".join(sealing.nonces) for _, sealing in self.sealed))
        self.first_verdict: dict[int, int] = {}  # by id(job): names need not be unique to the loader
        position = 0
        for job, sealing in self.sealed:
            self.first_verdict[id(job)] = position
            position += len(sealing.nonces)

    def _upload(self, data: bytes) -> Any:
        """`data` as a uint8 array on the device (a byte where it is empty)."""
        return self.torch.frombuffer(bytearray(data or b"\0"), dtype=self.torch.uint8).to(self.device)

    def open(self, job: _Job) -> None:
        """Queues the opening of a job whose bytes are on the device: all its
        chunks in one call, with no work per chunk here."""
        sealing = job.sealing
        if sealing is None:
            return
        first = self.first_verdict[id(job)]
        count = len(sealing.nonces)
        tags = self.tags[ct.TAG_BYTES * first:ct.TAG_BYTES * (first + count)]
        if job.entry.nbytes == 0:
            if count:  # an empty tensor's one empty message, opened here
                _open_empty(job)
                self.verdicts[first].fill_(1)
            return
        if sealing.associated_data is not None:
            sealing.aead.decrypt_into(sealing.nonces[0], job.array, sealing.associated_data, job.array,
                                      tag=tags[:ct.TAG_BYTES], stream=self.stream,
                                      verified=self.verdicts[first:first + 1])
            return
        sealing.aead.decrypt_chunks(self.nonces[ct.NONCE_BYTES * first:ct.NONCE_BYTES * (first + count)], job.array,
                                    sealing.chunk_size or job.entry.nbytes, tags, stream=self.stream,
                                    verified=self.verdicts[first:first + count])

    def finish(self) -> None:
        """Waits for the openings; raises for the first chunk that failed."""
        self.stream.synchronize()
        if not self.sealed or bool(self.verdicts.all()):
            return
        failed = (self.verdicts == 0).nonzero().flatten().tolist()
        for job, sealing in self.sealed:
            first = self.first_verdict[id(job)]
            bad = [i - first for i in failed if first <= i < first + len(sealing.nonces)]
            if bad:
                raise job.failure(bad[0])


def _load(files: Sequence[tuple[_File, Sequence[str]]], framework: _Framework, place: Callable[[str], Any],
          progress: Progress | None = None) -> dict[str, Any]:
    """The named tensors of each file, each on the device `place` gives it,
    every file's tensors loaded at once by the same readers."""
    by_device: dict[Any, list[_Job]] = collections.defaultdict(list)
    jobs = []
    for file, names in files:
        for name in names:
            device = place(name)
            job, _ = file.job(name, framework, device)
            by_device[device].append(job)
            jobs.append(job)
    _load_jobs(by_device, framework, _ByteCount(sum(job.entry.nbytes for job in jobs), progress))
    return {job.entry.name: framework.finish(job.array, job.entry.dtype, job.entry.shape) for job in jobs}


def _load_gpus(gpus: Mapping[Any, Sequence[_Job]], framework: _Framework, count: _ByteCount) -> None:
    """The library reads the jobs' bytes into their arrays in batches, the
    devices' jobs in turn so that every batch keeps every device's readers
    busy, and each batch is opened on its devices while the next is read."""
    if not isinstance(framework, _Torch):
        raise InvalidArgument("GPU loading takes framework='pt'")
    torch = framework.torch
    openings = {device: _GpuOpening(torch, device, jobs) for device, jobs in gpus.items()}
    # The library's copies wait for no stream: what the caller's streams
    # queued on the arrays (their allocation) must be done first.
    for device in gpus:
        torch.cuda.current_stream(device).synchronize()
    queues = [collections.deque((device, job) for job in jobs) for device, jobs in gpus.items()]
    batch: list[tuple[Any, _Job]] = []
    batch_bytes = 0
    try:
        while any(queues):
            for queue in queues:
                if queue:
                    batch.append(queue.popleft())
                    batch_bytes += batch[-1][1].entry.nbytes
            if batch_bytes >= _GPU_BATCH_BYTES or not any(queues):
                _native.read_files_to_device([(job.fd, job.offset, job.entry.nbytes, job.array.data_ptr())
                                              for _, job in batch if job.entry.nbytes])
                for device, job in batch:
                    count.add(job.entry.nbytes)
                    openings[device].open(job)
                batch, batch_bytes = [], 0
    except BaseException:
        # The openings already queued use the arrays the caller is about
        # to drop: the allocator must not hand them out again before then.
        for opening in openings.values():
            opening.stream.synchronize()
        raise
    for opening in openings.values():
        opening.finish()


def _placement(framework: _Framework, device: DeviceSpec | Mapping[str, DeviceSpec]) -> Callable[[str], Any]:
    """Where each tensor goes: one device, or a device_map of name prefixes
    (the longest match wins; "" matches every name)."""
    if not isinstance(device, Mapping):
        resolved = framework.device(device)
        return lambda name: resolved
    devices = {prefix: framework.device(spec) for prefix, spec in device.items()}
    prefixes = sorted(devices, key=len, reverse=True)

    def place(name: str) -> Any:
        for prefix in prefixes:
            if name.startswith(prefix):
                return devices[prefix]
        raise InvalidArgument(f"device_map places no prefix of tensor {name!r}; add '' for the rest")

    return place


def load_file(filename: PathLike, device: DeviceSpec | Mapping[str, DeviceSpec] = "cpu", *, keys: Keys = None,
              framework: str = "pt", progress: Progress | None = None) -> dict[str, Any]:
    """Every tensor of the file, as ``safetensors.torch.load_file`` returns
    them (``framework="np"``: as ``safetensors.numpy.load_file``).

    `device`: where the tensors go: "cpu", "cuda:1", an int, a
    ``torch.device``, or a device map ``{name prefix: device}`` that spreads
    one load over several devices. `keys`: a JWK, a list of JWKs or a JWK
    Set holding the master key and the signature's public key, which an
    encrypted file needs; without keys, only a plain safetensors file loads.
    Raises :class:`warpcrypt.InvalidSignature` for a header that was changed
    or signed by another key, :class:`warpcrypt.InvalidTag` for tensor data
    that does not authenticate, and :class:`warpcrypt.FormatError` for a
    damaged file; nothing is returned then. `progress`: called with (bytes
    done, bytes total) of tensor data as pieces of it are read and opened
    (to a GPU: as their copies are queued), from the reading threads, one
    call at a time; the last call has done == total.
    An exception it raises ends the load and is raised here.
    """
    chosen = _framework(framework)
    return _load_all(_File(filename, keys), chosen, _placement(chosen, device), progress)


def _load_all(file: _File, framework: _Framework, place: Callable[[str], Any],
              progress: Progress | None = None) -> dict[str, Any]:
    """Every tensor of `file`, which is closed then."""
    try:
        return _load([(file, file.names())], framework, place, progress)
    finally:
        file.close()


def _load_bytes(data: bytes | bytearray | memoryview, keys: Keys, framework: str) -> dict[str, Any]:
    """Every tensor of a file held in `data`, on the CPU, as
    ``safetensors.<framework>.load`` returns them."""
    chosen = _framework(framework)
    return _load_all(_File.of_bytes(data, keys), chosen, _placement(chosen, "cpu"))


def _save_bytes(tensors: Mapping[str, Any], metadata: Mapping[str, str] | None, keys: Keys) -> bytes:
    """The file save_file would write, as bytes (``safetensors.<framework>.save``)."""
    with _memory_file() as stream:
        save_file(tensors, stream, keys=keys, metadata=metadata)  # type: ignore[arg-type]
        stream.seek(0)
        return stream.read()


def _load_raw(filename: PathLike, keys: Keys, progress: Progress | None) -> tuple[dict[str, str] | None,
                                                                                  dict[str, RawTensor]]:
    """The file's user metadata and every tensor as a RawTensor, from one
    open of the file: what warpcrypt-tensors writes again, encrypted or
    not."""
    file = _File(filename, keys)
    try:
        tensors = _load([(file, file.names())], _Raw(), lambda name: "cpu", progress)
        return file.user_metadata(), tensors
    finally:
        file.close()


class safe_open:  # noqa: N801  (named as safetensors names it)
    """A file opened for one tensor at a time, as ``safetensors.safe_open``::

        with warpcrypt.safetensors.safe_open(path, "pt", device="cuda:0", keys=keys) as f:
            for name in f.keys():
                tensor = f.get_tensor(name)

    The header is read and its signature verified when it opens; each
    tensor is read and authenticated when asked for.
    """

    def __init__(self, filename: PathLike, framework: str = "pt", device: DeviceSpec = "cpu", *,
                 keys: Keys = None) -> None:
        self._framework = _framework(framework)
        self._place = _placement(self._framework, device)
        self._file: _File | None = _File(filename, keys)

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _open(self) -> _File:
        if self._file is None:
            raise InvalidArgument("the file is closed")
        return self._file

    def keys(self) -> list[str]:
        """The tensors' names, sorted."""
        return sorted(self._open().entries)

    def offset_keys(self) -> list[str]:
        """The tensors' names in the order of their data in the file."""
        return [entry.name for entry in self._open().header.entries]

    def metadata(self) -> dict[str, str] | None:
        """The header's __metadata__ without CryptoTensors' own fields; None
        where the writer gave none, as safetensors returns it."""
        return self._open().user_metadata()

    def encrypted(self, name: str) -> bool:
        """Whether the tensor is encrypted (a tensor in the clear is not
        authenticated: only its dtype, shape and place are signed)."""
        self._entry(name)
        return self._open().sealing(name) is not None

    def get_tensor(self, name: str) -> Any:
        self._entry(name)
        return _load([(self._open(), [name])], self._framework, self._place)[name]

    def get_slice(self, name: str) -> TensorSlice:
        """Tensor `name`, to read in part: ``f.get_slice(name)[a:b]`` reads
        and opens only what holds rows a to b."""
        if isinstance(self._framework, _Raw):
            raise InvalidArgument("get_slice takes framework 'pt' or 'np'")
        self._entry(name)
        return TensorSlice(self, name)

    def _entry(self, name: str) -> Entry:
        entry = self._open().entries.get(name)
        if entry is None:
            raise KeyError(f"no tensor {name!r} in the file")
        return entry


class TensorSlice:
    """A tensor of an open file that is read as it is indexed, as
    ``safe_open.get_slice`` gives it in safetensors: ``part[a:b]``,
    ``part[i]``, ``part[:, c:d]``, with ints, slices of positive step and
    one Ellipsis. Only the rows of the first dimension that the index
    reaches are read and authenticated, each chunk on its own (a tensor of
    a version 1 file, one message, is read whole), so a tensor-parallel
    rank that takes a block of rows reads about its share; an index on a
    later dimension alone reaches every row."""

    def __init__(self, file: safe_open, name: str) -> None:
        self._file, self._name = file, name

    def get_shape(self) -> list[int]:
        return list(self._file._entry(self._name).shape)

    def get_dtype(self) -> str:
        return self._file._entry(self._name).dtype

    def __getitem__(self, index: Any) -> Any:
        entry = self._file._entry(self._name)
        first, end, within = _rows(index, entry.shape)
        row_bits = ct.tensor_bits(entry.dtype, entry.shape[1:])
        if row_bits % 8:  # rows that do not start on a byte: the whole tensor
            first, end, within = 0, entry.shape[0], _whole_rows(index, entry.shape)
        row_bytes = row_bits // 8
        framework, device = self._file._framework, self._file._place(self._name)
        job, skip = self._file._open().job(self._name, framework, device, (first * row_bytes, end * row_bytes))
        _load_jobs({device: [job]}, framework)
        rows = job.array[skip:skip + (end - first) * row_bytes]
        return framework.finish(rows, entry.dtype, (end - first, *entry.shape[1:]))[within]


def _index_parts(index: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """`index` as one int or slice per dimension it indexes, its Ellipsis
    spelled out."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if not (part is Ellipsis or isinstance(part, slice) or hasattr(part, "__index__")):
            raise InvalidArgument(f"a tensor slice takes ints, slices and Ellipsis, not {type(part).__name__}")
    if sum(part is Ellipsis for part in parts) > 1:
        raise InvalidArgument("an index can only have a single ellipsis ('...')")
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts = parts[:at] + (slice(None),) * (len(shape) - len(parts) + 1) + parts[at + 1:]
    if len(parts) > len(shape):
        raise IndexError(f"too many indices for a tensor of {len(shape)} dimensions: {len(parts)}")
    return parts


def _rows(index: Any, shape: tuple[int, ...]) -> tuple[int, int, tuple[Any, ...]]:
    """The rows [first, end) of the first dimension that `index` reaches,
    and the index that selects its values from those rows."""
    parts = _index_parts(index, shape)
    if not shape:
        return 0, 0, parts
    lead, rest, count = parts[0] if parts else slice(None), parts[1:], shape[0]
    if isinstance(lead, slice):
        rows = range(*lead.indices(count))
        if rows.step <= 0:
            raise InvalidArgument("a tensor slice takes steps of 1 or more")
        if not rows:
            return 0, 0, (slice(0, 0), *rest)
        return rows[0], rows[-1] + 1, (slice(0, rows[-1] + 1 - rows[0], rows.step), *rest)
    row = lead.__index__()
    if not -count <= row < count:
        raise IndexError(f"index {row} is out of bounds for dimension 0 of size {count}")
    row %= count
    return row, row + 1, (0, *rest)


def _whole_rows(index: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """`index` checked as _rows checks it, to select from the whole tensor."""
    parts = _index_parts(index, shape)
    _rows(parts, shape)
    return parts


# ---------------------------------------------------------------- saving


@dataclass
class _Source:
    entry: Entry
    tensor: Any
    framework: _Framework
    sealing: Sealing | None


def _frameworks_of(tensors: Mapping[str, Any]) -> dict[str, _Framework]:
    found: dict[str, _Framework] = {}
    cached: dict[str, _Framework] = {}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise InvalidArgument(f"tensor names are strings, not {type(name).__name__}")
        module = "raw" if isinstance(tensor, RawTensor) else type(tensor).__module__.partition(".")[0]
        if module not in ("numpy", "torch", "raw"):
            raise InvalidArgument(f"tensor {name!r} is a {type(tensor).__name__}: save_file takes NumPy arrays, "
                                  "PyTorch tensors and RawTensor")
        if module not in cached:
            cached[module] = _framework(module)
        found[name] = cached[module]
    return found


def save_file(tensors: Mapping[str, Any], filename: PathLike, *, keys: Keys, metadata: Mapping[str, str] | None = None,
              encrypt: Sequence[str] | None = None, version: str = "2",
              chunk_size: int = ct.DEFAULT_CHUNK_SIZE, progress: Progress | None = None) -> None:
    """Writes `tensors` (NumPy arrays, PyTorch tensors on the CPU or on
    CUDA devices, or :class:`RawTensor`) to `filename` as a CryptoTensors
    file, atomically.

    `keys`: exactly one master key (its ``alg`` picks the AEAD:
    aes256gcm, the default, aes128gcm or chacha20poly1305) and one signing
    key with its private part ``d``, as :func:`generate_keys` makes them;
    ``keys=None``, given explicitly, writes a plain safetensors file.
    `encrypt`: the names to encrypt (default: all); the others are written
    in the clear, unauthenticated. `version` "2" (chunks of `chunk_size`
    bytes, each authenticated on its own) or "1" (one message a tensor).
    CUDA tensors are encrypted on their device; their plaintext never
    reaches host memory. `progress`: called with (bytes done, bytes total)
    of tensor data as pieces of it are written, from the writing threads
    (one call at a time); the last call has done == total. An exception it
    raises ends the save, leaves no file (an existing one as it was) and is
    raised here.
    """
    if version not in ct.VERSIONS:
        raise InvalidArgument(f"version must be one of {', '.join(ct.VERSIONS)}, not {version!r}")
    if type(chunk_size) is not int or chunk_size <= 0 or chunk_size % 64:
        raise InvalidArgument(f"chunk_size must be a positive multiple of 64, not {chunk_size!r}")
    user_metadata = ct.check_user_metadata(metadata)
    frameworks = _frameworks_of(tensors)
    described = {name: frameworks[name].describe(tensor) for name, tensor in tensors.items()}
    entries = ct.layout((name, *described[name]) for name in tensors)  # type: ignore[misc]
    if keys is None:
        if encrypt is not None:
            raise InvalidArgument("encrypt names tensors to encrypt, but keys=None writes a plain file")
        sources = [_Source(entry, tensors[entry.name], frameworks[entry.name], None) for entry in entries]
        _write_file(filename, entries, sources, lambda: ct.header_bytes(entries, user_metadata), progress)
        return
    master_jwk, signer = KeySet(keys).writing_keys()
    assert master_jwk.secret is not None and signer.secret is not None
    alg = master_jwk.name.alg or "aes256gcm"
    master = ct.make_aead(alg, master_jwk.secret)
    chosen = set(tensors) if encrypt is None else set(encrypt)
    unknown = sorted(chosen - set(tensors))
    if unknown:
        raise InvalidArgument(f"encrypt names tensors that are not given: {', '.join(map(repr, unknown))}")
    if not chosen:
        raise InvalidArgument("encrypt names no tensor: pass keys=None to write a plain file")
    chunks = chunk_size if version == "2" else None
    sources, wrapped = [], {}
    for entry in entries:
        sealing = None
        if entry.name in chosen:
            sealing = ct.new_sealing(alg, entry.nbytes, chunks)
            wrapped[entry.name] = ct.wrap_key(master, sealing.data_key)
        sources.append(_Source(entry, tensors[entry.name], frameworks[entry.name], sealing))
    enc_name = ct.KeyName("oct", alg, master_jwk.name.kid, master_jwk.name.jku)
    seed = signer.secret

    def signed_header() -> bytes:
        crypto = ct.crypto_metadata(version, chunks, enc_name, signer.name,
                                    {s.entry.name: ct.encryption_entry(s.sealing, wrapped[s.entry.name])
                                     for s in sources if s.sealing is not None})
        return ct.header_bytes(entries, ct.sign_header(entries, {**(user_metadata or {}), **crypto}, seed))

    _write_file(filename, entries, sources, signed_header, progress)


def _write_file(filename: PathLike, entries: Sequence[Entry], sources: Sequence[_Source],
                header: Callable[[], bytes], progress: Progress | None) -> None:
    """Writes the tensors, then the header that `header` makes once they
    are sealed (it holds their tags). Every field of a header has a fixed
    length, tags and signature included, so its length is known before its
    contents: it is made once first, with the tags still zero, for that."""
    length = len(header())
    base = ct.LENGTH_BYTES + length

    def write_header(out: _MappedFile) -> None:
        final = header()
        assert len(final) == length, "the header's length changed with its contents"
        out.write(0, memoryview(length.to_bytes(8, "little") + final))

    count = _ByteCount(sum(entry.nbytes for entry in entries), progress)
    _write_sealed(filename, base + (entries[-1].end if entries else 0), base, sources, write_header, count)


def _write_sealed(filename: PathLike, size: int, base: int, sources: Sequence[_Source],
                  finish: Callable[[_MappedFile], None], count: _ByteCount = _UNCOUNTED) -> None:
    """Writes a file of `size` bytes atomically: each source's tensor,
    sealed, at `base` + its entry's start, then what `finish` writes once
    they are all sealed (the tags are known then)."""
    with _output(filename) as stream:
        with _MappedFile(stream.fileno(), size) as out:
            _write_tensors(out, base, sources, count)
            finish(out)


class _MappedFile:
    """The file being written, sized up front and mapped, so that many
    threads fill it at once: pwrite to one file cannot do that, since each
    write holds the file's lock.

    Its blocks are reserved (posix_fallocate) by a thread of its own, a step
    at a time from the start, while the writers fill what is reserved:
    tmpfs allocates a file's blocks on one thread however many threads ask
    (bench/file_write_bounds.py), so the reservation runs beside the copies
    rather than before them. A full disk is an OSError from the reservation,
    raised in the writer waiting for those blocks, never a SIGBUS on a
    mapped page. A filesystem that cannot reserve blocks is written with
    pwrite instead."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size, self.map, self.view = fd, size, None, None
        self._reserved, self._stop = 0, False
        self._failure: OSError | None = None
        self._progress = threading.Condition()
        self._reserver: threading.Thread | None = None
        if not size:
            return
        first = min(size, _RESERVE_STEP)
        try:
            os.posix_fallocate(fd, 0, first)
        except OSError as error:
            if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            return
        self._reserved = first
        os.ftruncate(fd, size)
        self.map = mmap.mmap(fd, size)
        self.view = memoryview(self.map)
        if first < size:
            self._reserver = threading.Thread(target=self._reserve, name="warpcrypt-reserve", daemon=True)
            self._reserver.start()

    def _reserve(self) -> None:
        at = self._reserved
        while at < self.size and not self._stop:
            step = min(_RESERVE_STEP, self.size - at)
            try:
                os.posix_fallocate(self.fd, at, step)
            except OSError as error:
                with self._progress:
                    self._failure = error
                    self._progress.notify_all()
                return
            at += step
            with self._progress:
                self._reserved = at
                self._progress.notify_all()

    def _wait_reserved(self, end: int) -> None:
        with self._progress:
            self._progress.wait_for(lambda: self._reserved >= end or self._failure is not None)
            if self._reserved < end:
                assert self._failure is not None
                raise OSError(self._failure.errno, self._failure.strerror)

    def __enter__(self) -> _MappedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._reserver is not None:
            self._stop = True
            self._reserver.join()
        if self.view is not None:
            assert self.map is not None
            try:
                self.view.release()
                self.map.close()
            except BufferError:
                # A failure's traceback still holds a piece of the map; the
                # file is being discarded, and the map goes with the last
                # reference.
                if exc[0] is None:
                    raise

    def region(self, offset: int, length: int) -> memoryview | None:
        """The file's bytes [offset, offset + length), reserved and ready to
        be written, or None where the file is not mapped."""
        if self.view is None:
            return None
        self._wait_reserved(offset + length)
        return self.view[offset:offset + length]

    def write(self, offset: int, data: memoryview) -> None:
        """Copies `data` to `offset`, without the GIL where the file is
        mapped."""
        region = self.region(offset, len(data))
        if region is None:
            _write_at(self.fd, data, offset)
        elif not _native.fill_mapped(region, data):
            region[:] = data


def _write_at(fd: int, view: memoryview, offset: int) -> None:
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _write_tensors(out: _MappedFile, base: int, sources: Sequence[_Source], count: _ByteCount) -> None:
    """Encrypts and writes each tensor at its offset: host tensors in pieces
    on every core, sealed straight into the file where it is mapped; CUDA
    tensors on their device, then through pinned memory."""
    host = [s for s in sources if not _on_cuda(s.tensor)]
    cuda = [s for s in sources if _on_cuda(s.tensor)]
    plaintext = {id(s): s.framework.host_bytes(s.tensor) for s in host}  # type: ignore[attr-defined]

    def write_piece(source: _Source, piece: _Piece) -> None:
        data = plaintext[id(source)]
        offset = base + source.entry.start + piece.start
        sealing = source.sealing
        if sealing is None:
            out.write(offset, data[piece.start:piece.end])
            count.add(piece.end - piece.start)
            return
        region = out.region(offset, piece.end - piece.start)
        target = region if region is not None else memoryview(bytearray(piece.end - piece.start))
        tags = memoryview(sealing.tags)
        for index, first, last in piece.messages:
            sealing.aead.encrypt_into(sealing.nonces[index], data[first:last], sealing.associated_data,
                                      target[first - piece.start:last - piece.start],
                                      tag=tags[ct.TAG_BYTES * index:ct.TAG_BYTES * (index + 1)])
        if region is None:
            _write_at(out.fd, target, offset)
        count.add(piece.end - piece.start)

    _run_all(write_piece, [(source, piece) for source in host
                           for piece in _pieces(source.entry, source.sealing, split_one_message=False)])
    if cuda:
        _write_cuda(out, base, cuda, count)


def _on_cuda(tensor: Any) -> bool:
    return bool(getattr(tensor, "is_cuda", False))


def _write_cuda(out: _MappedFile, base: int, sources: Sequence[_Source], count: _ByteCount) -> None:
    """CUDA tensors: each is encrypted on its device, then copied a piece at
    a time to a pinned slot, which a pool thread copies into the file once
    the copy is done; a slot is refilled once its write has finished."""
    torch = sys.modules["torch"]
    slots: dict[Any, list[Any]] = {}
    busy: dict[Any, list[concurrent.futures.Future[None] | None]] = {}
    next_slot: dict[Any, int] = {}

    def write_after(event: Any, slot: Any, length: int, offset: int) -> None:
        event.synchronize()
        out.write(offset, memoryview(slot.numpy())[:length])
        count.add(length)

    writers = _readers()
    with concurrent.futures.ThreadPoolExecutor(writers) as pool:
        writes: list[concurrent.futures.Future[None]] = []
        for source in sources:
            device = source.tensor.device
            if device not in slots:
                slots[device] = [torch.empty(PIECE_BYTES, dtype=torch.uint8, pin_memory=True)
                                 for _ in range(_gpu_slots(writers))]
                busy[device], next_slot[device] = [None] * len(slots[device]), 0
            flat = source.tensor.detach().contiguous().reshape(-1).view(torch.uint8)
            sealing = source.sealing
            stream = torch.cuda.current_stream(device)
            device_tags = None
            if sealing is not None:
                if source.entry.nbytes:
                    sealed = torch.empty_like(flat)
                    device_tags = torch.empty(len(sealing.tags), dtype=torch.uint8, device=device)
                    if sealing.associated_data is not None:
                        sealing.aead.encrypt_into(sealing.nonces[0], flat, sealing.associated_data, sealed,
                                                  tag=device_tags, stream=stream)
                    else:
                        nonces = torch.frombuffer(bytearray(b"".join(sealing.nonces)), dtype=torch.uint8).to(device)
                        sealing.aead.encrypt_chunks(nonces, flat, sealing.chunk_size or source.entry.nbytes,
                                                    device_tags, buf=sealed, stream=stream)
                    flat = sealed
                elif sealing.nonces:  # an empty tensor's one empty message, sealed on the host
                    sealing.tags[:] = sealing.aead.encrypt(sealing.nonces[0], b"", sealing.associated_data)
            for start in range(0, source.entry.nbytes, PIECE_BYTES):
                length = min(PIECE_BYTES, source.entry.nbytes - start)
                slot = next_slot[device]
                next_slot[device] = (slot + 1) % len(slots[device])
                waiting = busy[device][slot]
                if waiting is not None:
                    waiting.result()
                pinned = slots[device][slot]
                with torch.cuda.stream(stream):
                    pinned[:length].copy_(flat[start:start + length], non_blocking=True)
                    event = torch.cuda.Event()
                    event.record(stream)
                write = pool.submit(write_after, event, pinned, length, base + source.entry.start + start)
                busy[device][slot] = write
                writes.append(write)
            if device_tags is not None:
                assert sealing is not None
                sealing.tags[:] = bytes(device_tags.cpu().numpy())
        for write in writes:
            write.result()


# ---------------------------------------------------------------- rewrapping


def rewrap_file(filename: PathLike, *, keys: Keys, new_keys: Keys, output: PathLike | IO[bytes] | None = None,
                progress: Progress | None = None) -> None:
    """Wraps every tensor's data key under the master key of `new_keys`
    and signs the header with its signing key, leaving the tensor data as it
    is (copied, not decrypted). Writes `output` (a path, or an open binary
    file to write into), or replaces `filename`, atomically; `keys` must open the file as it is. `progress`: called with
    (bytes done, bytes total) of tensor data as it is copied; an exception
    it raises ends the rewrap, leaves the file and any `output` as they
    were, and is raised here.
    """
    file = _File(filename, keys)
    try:
        if file.crypto is None:
            raise FormatError(f"{file.path} is not encrypted")
        master_jwk, signer = KeySet(new_keys).writing_keys()
        assert master_jwk.secret is not None and signer.secret is not None
        crypto = file.crypto
        if master_jwk.name.alg and master_jwk.name.alg != crypto.enc.alg:
            raise InvalidArgument(f"the new master key is for {master_jwk.name.alg}, the file's tensors use "
                                  f"{crypto.enc.alg}")
        master = ct.make_aead(crypto.enc.alg, master_jwk.secret)
        entries = {}
        for name, sealing in crypto.sealings.items():
            entries[name] = ct.encryption_entry(sealing, ct.wrap_key(master, sealing.data_key))
        enc = ct.KeyName("oct", crypto.enc.alg, master_jwk.name.kid, master_jwk.name.jku)
        described = {**(file.header.user_metadata() or {}),
                     **ct.crypto_metadata(crypto.version, crypto.chunk_size, enc, signer.name, entries)}
        header = ct.header_bytes(file.header.entries, ct.sign_header(file.header.entries, described, signer.secret))
        with _output(output if output is not None else file.path) as stream:
            stream.write(len(header).to_bytes(8, "little"))
            stream.write(header)
            stream.flush()
            _copy_range(file.stream.fileno(), stream.fileno(), file.header.data_start, file.header.data_length,
                        _ByteCount(file.header.data_length, progress))
    finally:
        file.close()


def _copy_range(source: int, target: int, offset: int, length: int, count: _ByteCount) -> None:
    """Copies a piece at a time, so that the count moves while a large file
    is copied."""
    position = os.lseek(target, 0, os.SEEK_CUR)
    while length:
        copied = os.copy_file_range(source, target, min(length, PIECE_BYTES), offset, position)
        if copied == 0:
            raise FormatError("truncated: the file ended while its data was copied")
        offset, position, length = offset + copied, position + copied, length - copied
        count.add(copied)
