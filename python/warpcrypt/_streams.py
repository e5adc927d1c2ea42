"""CUDA streams: the one a caller names, and the caller's current one.

Stream values are ``cudaStream_t`` handles as integers. 0 is the legacy
default stream, and the runtime's special handles 1 (cudaStreamLegacy) and
2 (cudaStreamPerThread) mean what they mean to CUDA, which is also what they
mean in DLPack and ``__cuda_array_interface__``.
"""

from __future__ import annotations

import sys


def handle(stream: object) -> int | None:
    """The handle of a stream given as an int, a PyTorch or CuPy stream, or
    any object with ``__cuda_stream__``; None stays None (the current one)."""
    if stream is None or type(stream) is int:
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise TypeError(
        "stream must be an int cudaStream_t, a torch.cuda.Stream, a cupy.cuda.Stream or an object "
        f"with __cuda_stream__, not {type(stream).__name__}"
    )


def current(array: object, device: int) -> int:
    """The stream the caller's framework would run the next operation on
    `array` on: PyTorch's or CuPy's current stream for `device`. Other
    libraries have no such notion, and get the legacy default stream, which
    orders against every blocking stream."""
    framework = type(array).__module__.partition(".")[0]
    if framework == "torch":
        torch = sys.modules["torch"]
        # The raw getter skips building a torch.cuda.Stream: a microsecond a
        # call, which counts against a kernel of a hundred.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        return int(raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream)
    if framework == "cupy":
        return int(sys.modules["cupy"].cuda.get_current_stream(device).ptr)
    return 0
