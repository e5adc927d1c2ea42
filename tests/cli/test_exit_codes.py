"""Exit statuses by the kind of failure (docs/cli.md: 1 failure, 2 usage,
3 I/O, 4 authentication, 5 no device), --json on enc, seal, open and age, and no
silent fallback to the CPU: a device that is not there is an error that says
how to run on the CPU."""

from __future__ import annotations

import json

import pytest

from wc_support import random_bytes

KEY = "00112233445566778899aabbccddeeff"
CTR = ["-aes-128-ctr", "-K", KEY, "-iv", KEY]


@pytest.fixture
def files(workdir, run_cli):
    """A plaintext, its CBC encryption, a file sealed with a passphrase, an
    age identity and the plaintext encrypted to it."""
    (workdir / "p").write_bytes(random_bytes(20000, "exit-codes"))
    run_cli("enc", "-aes-128-cbc", "-K", KEY, "-iv", KEY, "-in", "p", "-out", "cbc", cwd=workdir).check()
    run_cli("seal", "-pass", "pass:right", "-iter", "1", "-in", "p", "-out", "s", cwd=workdir).check()
    run_cli("age-keygen", "-o", "id", cwd=workdir).check()
    recipient = run_cli("age-keygen", "-y", "id", cwd=workdir).check().stdout.decode().strip()
    run_cli("age", "-r", recipient, "-o", "a", "p", cwd=workdir).check()
    (workdir / "recipient").write_text(recipient + "\n")
    run_cli("age-keygen", "-o", "other-id", cwd=workdir).check()
    return workdir


@pytest.mark.parametrize("args, status", [
    (["enc", "-nosuchflag"], 2),
    (["enc", "-aes-128-ctr", "-K", "00"], 2),
    (["enc", *CTR, "--threads", "0"], 2),
    (["enc", *CTR, "-in", "missing"], 3),
    (["enc", *CTR, "-in", "p", "-out", "no/such/dir/c"], 3),
    (["enc", "-d", "-aes-128-cbc", "-K", "ff" * 16, "-iv", KEY, "-in", "cbc", "-out", "x"], 4),
    (["enc", "-d", "-aes-128-cbc", "-pass", "pass:x", "-in", "p", "-out", "x"], 4),
    (["open", "-pass", "pass:wrong", "-in", "s", "-out", "x"], 4),
    (["open", "-pass", "pass:right", "-in", "p", "-out", "x"], 4),
    (["seal", "-pass", "pass:x", "-in", "missing", "-out", "x"], 3),
], ids=["unknown-option", "short-key", "threads", "missing-input", "unwritable-output", "bad-decrypt",
        "no-salted-header", "wrong-passphrase", "not-sealed", "seal-missing-input"])
def test_exit_status_by_kind(args, status, files, run_cli):
    result = run_cli(*args, cwd=files)
    assert result.returncode == status, result.describe()
    assert len(result.stderr_lines) == 1 and not (files / "x").exists(), result.describe()


def test_an_age_file_no_identity_opens_is_an_authentication_failure(files, run_cli):
    for name in ("mine", "theirs"):
        run_cli("age-keygen", "-o", name, cwd=files).check()
    recipient = run_cli("age-keygen", "-y", "theirs", cwd=files).check().stdout.decode().strip()
    run_cli("age", "-r", recipient, "-o", "p.age", "p", cwd=files).check()
    result = run_cli("age", "-d", "-i", "mine", "-o", "x", "p.age", cwd=files)
    assert result.returncode == 4 and "no identity matched" in result.stderr_text, result.describe()
    assert not (files / "x").exists()


@pytest.mark.parametrize("args", [["enc", *CTR, "--backend", "hybrid"], ["enc", *CTR, "--backend", "gpu"],
                                  ["enc", *CTR, "--backend", "hybrid", "--devices", "0,1"],
                                  ["enc", *CTR, "--devices", "7"], ["enc", *CTR, "--backend", "cpu", "--devices", "7"],
                                  ["seal", "-pass", "pass:x", "--backend", "hybrid"],
                                  ["seal", "-pass", "pass:x", "--backend", "gpu", "--devices", "7"],
                                  ["open", "-pass", "pass:right", "--backend", "gpu"]],
                         ids=["hybrid", "gpu", "hybrid-devices", "device-7", "cpu-device-7", "seal-hybrid", "seal-device-7",
                              "open-gpu"])
def test_a_missing_device_is_an_error_never_the_cpu(args, files, run_cli, cuda_device_present):
    if cuda_device_present and "--devices" not in args:
        pytest.skip("a CUDA device is present")
    if cuda_device_present and "7" not in args:
        pytest.skip("a CUDA device is present")
    result = run_cli(*args, "-in", "s" if args[0] == "open" else "p", "-out", "x", cwd=files)
    assert result.returncode == 5, result.describe()
    assert "run on the CPU with backend cpu" in result.stderr_text, result.describe()
    assert not (files / "x").exists()


@pytest.mark.parametrize("source", ["file", "pipe"])
def test_hybrid_counting_its_devices_beside_its_work_still_refuses_none(source, files, run_cli,
                                                                       cuda_device_present):
    """Where the CUDA driver loads, a hybrid job counts the devices beside its
    first work (their count starts the driver, which takes longer than many
    jobs). With every device hidden from it, the job still fails with the
    device error, one line, and keeps no output file."""
    if not cuda_device_present:
        pytest.skip("no CUDA device: without a driver the devices are counted before the work "
                    "(test_a_missing_device_is_an_error_never_the_cpu)")
    plaintext = random_bytes(64 << 20, "hybrid-hidden-devices")
    (files / "big").write_bytes(plaintext)
    source_args = ["-in", "big"] if source == "file" else []
    result = run_cli("enc", *CTR, "--backend", "hybrid", *source_args, "-out", "x", cwd=files,
                     stdin=plaintext if source == "pipe" else None, env={"CUDA_VISIBLE_DEVICES": ""})
    assert result.returncode == 5, result.describe()
    assert len(result.stderr_lines) == 1 and "run on the CPU with backend cpu" in result.stderr_text, \
        result.describe()
    assert not (files / "x").exists()


@pytest.mark.parametrize("args", [["-evp", "aes-128-ctr", "--backend", "gpu", "--resident", "device"],
                                  ["-evp", "aes-128-ctr", "--backend", "gpu"],
                                  ["-evp", "aes-128-ctr", "--memory", "pinned"]],
                         ids=["resident", "pinned", "cpu-pinned"])
def test_speed_on_a_missing_device_is_a_device_error(args, run_cli, cuda_device_present):
    if cuda_device_present:
        pytest.skip("a CUDA device is present")
    result = run_cli("speed", *args, "-bytes", "4096", "-seconds", "0.1")
    assert result.returncode == 5, result.describe()
    assert len(result.stderr_lines) == 1, result.describe()


# Backends compare fairly only on the same kind of host memory, so speed
# reports the kind it measured, and gives the cpu backend page-locked memory
# when asked (it used to measure ordinary memory and call it pinned).
@pytest.mark.parametrize("args, memory", [([], "pageable"), (["--memory", "pageable"], "pageable"),
                                          (["--memory", "pinned"], "pinned"),
                                          (["--backend", "gpu"], "pinned"),
                                          (["--backend", "gpu", "--memory", "pageable"], "pageable")],
                         ids=["cpu-default", "cpu-pageable", "cpu-pinned", "gpu-default", "gpu-pageable"])
def test_speed_reports_the_host_memory_it_measured(args, memory, run_cli, cuda_device_present):
    if memory == "pinned" or "gpu" in args:
        if not cuda_device_present:
            pytest.skip("page-locked memory and the gpu backend need a CUDA device")
    result = run_cli("speed", "-evp", "aes-128-ctr", "-bytes", "64K", "-seconds", "0.05", "--threads", "1",
                     *args, "--json").check()
    assert json.loads(result.stdout)["memory"] == memory, result.describe()
    table = run_cli("speed", "-evp", "aes-128-ctr", "-bytes", "64K", "-seconds", "0.05", "--threads", "1",
                    *args).check()
    assert f"host-resident, {memory} memory" in table.stdout.decode().splitlines()[0], table.describe()


def json_line(result) -> dict:
    lines = result.stdout.decode().splitlines()
    assert len(lines) == 1, result.describe()
    return json.loads(lines[0])


@pytest.mark.parametrize("args, command, source", [
    (["enc", *CTR, "-in", "p", "-out", "x"], "enc", "p"),
    (["enc", *CTR, "-a", "-in", "p", "-out", "x"], "enc", "p"),
    (["seal", "-pass", "pass:x", "-iter", "1", "-in", "p", "-out", "x"], "seal", "p"),
    (["open", "-pass", "pass:right", "-in", "s", "-out", "x"], "open", "s"),
    (["age", "-R", "recipient", "-o", "x", "p"], "age", "p"),
    (["age", "-d", "-i", "id", "-o", "x", "a"], "age", "a"),
], ids=["enc", "enc-base64", "seal", "open", "age-encrypt", "age-decrypt"])
def test_json_reports_the_run(args, command, source, files, run_cli):
    result = run_cli(*args, "--json", cwd=files).check()
    report = json_line(result)
    assert report["command"] == command and report["ok"] is True
    assert report["bytes_out"] == (files / "x").stat().st_size
    assert report["bytes_in"] == (files / source).stat().st_size
    assert report["cpu_bytes"] + report["gpu_bytes"] > 0 and report["seconds"] >= 0
    assert result.stderr == b""


@pytest.mark.parametrize("args, kind, status", [
    (["open", "-pass", "pass:wrong", "-in", "s", "-out", "x"], "auth", 4),
    (["enc", *CTR, "-in", "missing", "-out", "x"], "io", 3),
    (["enc", *CTR, "-in", "p", "--backend", "hybrid", "-out", "x"], "no_device", 5),
    (["seal", "-pass", "pass:x", "-keyfile", "p", "-in", "p", "-out", "x"], "usage", 2),
    (["age", "-d", "-i", "other-id", "-o", "x", "a"], "auth", 4),
    (["age", "-d", "-i", "id", "-o", "x", "missing"], "io", 3),
    (["age", "-r", "age1notakey", "-o", "x", "p"], "usage", 2),
    (["age", "-R", "recipient", "--backend", "gpu", "-o", "x", "p"], "no_device", 5),
], ids=["open-auth", "enc-io", "enc-no-device", "seal-usage", "age-auth", "age-io", "age-usage", "age-no-device"])
def test_json_reports_the_failure(args, kind, status, files, run_cli, cuda_device_present):
    if kind == "no_device" and cuda_device_present:
        pytest.skip("a CUDA device is present")
    result = run_cli(*args, "--json", cwd=files)
    assert result.returncode == status
    report = json_line(result)
    assert report["ok"] is False and report["kind"] == kind and report["exit"] == status
    assert report["message"] and "right" not in report["message"]


@pytest.mark.parametrize("args, option", [(["enc", *CTR, "-in", "p"], "-out"),
                                          (["age", "-R", "recipient", "-a", "p"], "-o")], ids=["enc", "age"])
def test_json_needs_the_data_elsewhere(args, option, files, run_cli):
    result = run_cli(*args, "--json", cwd=files)
    assert result.returncode == 2
    assert f"name the output file with {option}" in json_line(result)["message"]
    assert not (files / "x").exists()


def test_age_shows_progress_in_bytes_and_quiet_hides_it(files, run_cli):
    (files / "big").write_bytes(random_bytes(8 << 20, "age-progress"))
    shown = run_cli("age", "--progress", "-R", "recipient", "-o", "big.age", "big", cwd=files).check()
    assert "100%" in shown.stderr_text and "8.39/8.39 MB" in shown.stderr_text, shown.describe()
    opened = run_cli("age", "-d", "--progress", "-i", "id", "-o", "back", "big.age", cwd=files).check()
    assert "MB" in opened.stderr_text, opened.describe()
    assert (files / "back").read_bytes() == (files / "big").read_bytes()
    quiet = run_cli("age", "--progress", "-q", "-R", "recipient", "-o", "q.age", "big", cwd=files).check()
    assert quiet.stderr == b"", quiet.describe()
