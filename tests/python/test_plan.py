"""warpcrypt.describe_plan: the library's own answer to where a job runs
(wc_plan_describe), which the calls it describes agree with, and options a
job refuses refused with the job's exception."""

from __future__ import annotations

import dataclasses
import os

import pytest

import warpcrypt


def test_the_cpu_plan_names_its_lanes_and_chunk():
    plan = warpcrypt.describe_plan("aes-256-ctr", size=8 << 20, backend="cpu", threads=3)
    assert (plan.backend, plan.reason) == ("cpu", "the backend the options name")
    assert (plan.cpu_lanes, plan.gpu_lanes_per_device, plan.devices) == (3, 0, ())
    assert plan.chunk_bytes == 1 << 20
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.backend = "gpu"  # type: ignore[misc]


def test_auto_keeps_host_memory_on_the_cpu_as_a_call_does():
    plan = warpcrypt.describe_plan("aes-256-ctr", size=16 << 20)
    assert plan.backend == "cpu"
    assert "staged through host memory" in plan.reason
    context = warpcrypt.Cipher(warpcrypt.algorithms.AES(bytes(32)), warpcrypt.modes.CTR(bytes(16))).encryptor()
    assert context.backend == plan.backend


def test_auto_on_pinned_memory_follows_the_break_even_size(has_device):
    below = warpcrypt.describe_plan("chacha20", data="pinned", size=4096)
    assert below.backend == "cpu" and below.reason == "below the measured GPU break-even size"
    above = warpcrypt.describe_plan("chacha20", data="pinned", size=1 << 30)
    assert above.backend == ("hybrid" if has_device else "cpu")


def test_files_and_sealed_files_under_auto_run_on_the_cpu(tmp_path):
    assert warpcrypt.describe_plan("aes-256-gcm", data="stream").backend == "cpu"
    plan = warpcrypt.describe_plan("chacha20", data="stream", size=1 << 20)
    source = tmp_path / "in"
    source.write_bytes(os.urandom(1 << 20))
    stats = warpcrypt.encrypt_file("chacha20", bytes(32), bytes(16), str(source), str(tmp_path / "out"))
    assert (stats.gpu_bytes, plan.backend) == (0, "cpu")


def test_a_sequential_mode_runs_on_one_thread():
    plan = warpcrypt.describe_plan("aes-256-ofb", data="pinned", size=1 << 30)
    assert (plan.backend, plan.cpu_lanes) == ("cpu", 1)


def test_gpu_without_a_device_raises_what_the_call_raises(require_no_device):
    for backend in ("gpu", "hybrid"):
        with pytest.raises(warpcrypt.NoDevice, match="run on the CPU with backend cpu"):
            warpcrypt.describe_plan("aes-256-ctr", backend=backend)
        with pytest.raises(warpcrypt.NoDevice):
            warpcrypt.encrypt("aes-256-ctr", bytes(32), bytes(16), bytes(1 << 20), backend=backend)
    with pytest.raises(warpcrypt.NoDevice):
        warpcrypt.describe_plan("aes-256-gcm", data="device")


def test_refused_work_is_refused():
    with pytest.raises(warpcrypt.UnknownCipher):
        warpcrypt.describe_plan("rot13")
    with pytest.raises(warpcrypt.InvalidArgument):
        warpcrypt.describe_plan("aes-256-ctr", backend="quantum")
    with pytest.raises(ValueError):
        warpcrypt.describe_plan("aes-256-ctr", data="tape")  # type: ignore[arg-type]
