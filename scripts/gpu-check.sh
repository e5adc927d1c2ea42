#!/usr/bin/env bash
# One GPU run, on the machine with the GPU (see README "GPU checks"): unpack
# the carried dependencies, build, then the steps named on the command line:
#   test      the whole ctest suite (GPU tests included), vectors required
#   gputest   only the GPU test binary (ctest -L gpu)
#   sanitize  compute-sanitizer memcheck and racecheck on the GPU test binary
#   speed     a short `warpcrypt speed` table per GPU mode
#   bench     the full sweep (bench/sweep.py) and its plots
#   sass      the kernels' machine code, compressed, for reading offline
#   engine    the streaming engine's figures (bench/engine_bench.py; ENGINE_PARTS
#             picks sweep, backends, cli, sealed)
#   racecheck-aead  racecheck on the AEAD kernels alone, on short messages
#   kernels   device-resident kernel benchmarks (bench/gpu/kernel_bench.cu):
#             AEAD batches of 1 KiB messages against one 1 GiB message, and
#             the timing spread over zero and random keys and data
#   ncu       Nsight Compute on the AES-256-CTR and AES-256-GCM kernels: the
#             shared-memory bank conflicts per kernel and per instruction
#             (ncu-*.csv), for docs/security.md
#   pipes     Nsight Compute's pipe utilisation and instruction mix of the
#             CTR, GCM, ChaCha20 and ChaCha20-Poly1305 kernels on 64 MiB
#             (ncu-pipes-*.csv): which pipe bounds each kernel; and the
#             executed instructions per opcode (opcodes-*.txt,
#             bench/sass_opcode_counts.py)
#   ghash     GHASH's multiplication alone three ways (bench/gpu/ghash_bench.cu:
#             nibble tables, integer multiplies with holes, binary tensor
#             cores), then Nsight Compute's pipe counts of each kernel
#             (ncu-ghash.csv)
#   python    the Python package: its tests with CuPy and PyTorch, the two
#             examples, bench/python_overhead.py (JSON in python-overhead.log)
#             and bench/checkpoint_bench.py on 4 GiB (python-checkpoint.log)
#   safetensors  warpcrypt.safetensors, warpcrypt.aead and warpcrypt.torch on
#             the GPU: their tests (against cryptotensors), then their GPU
#             cases under compute-sanitizer memcheck
#   safetensors-bench  bench/safetensors_bench.py on 8 and 32 GiB in /dev/shm
#             (safetensors-bench.json), then bench/file_write_bounds.py on
#             8 GiB there (file-write-bounds.json), and
#             bench/page_cache_register_bench.py (page-cache-register.json)
#   multigpu-load  what bounds loading a page-cached file to every GPU at
#             once: reads, copies and both, with and without NUMA placement
#             (bench/multigpu_load_bounds.py on 16 GiB; multigpu-load.json),
#             and the same from C++ with slots of 256 KiB to 16 MiB
#             (bench/gpu/file_load_bench.cu; file-load.jsonl)
#   cli       the CLI tests (tests/cli) on build-gpu's CLI: their GPU and
#             hybrid cases run only where there is a device
#   age       `warpcrypt age` against the reference `age` on 1 GiB in
#             /dev/shm (bench/engine_bench.py --parts age; engine_figures.json),
#             then what bounds it (bench/age_bounds.sh: lanes, file writes)
#   hybrid    cpu, gpu and hybrid side by side on files, pipes and buffers,
#             and what a GPU job pays before its first chunk
#             (bench/hybrid_bounds.sh, bench/gpu/start_bench.cu; hybrid.json)
#   host-data the gpu backend on page-cached files against its pinned-buffer
#             figures: rate and start apart, from two file sizes
#             (bench/gpu_host_data.sh; host-data.json)
#   demo      scripts/demo.sh (setup's closing table) on build-gpu's CLI,
#             with the GPU kernel's row
#   figures   the figures the README's table and docs/performance.md's
#             current run are written from, each results file with its run's
#             date, commit and machine (bench/run_record.py), into
#             $out/figures: the engine's kernels, backends, cli, sealed and
#             age parts, files in /dev/shm (engine_figures.json; FIGURE_PARTS
#             picks)
#   figures-python  the rest of them, into $out/figures too: the Python
#             package's overhead, Dask's encrypt_files on 8 GiB, and encrypted
#             safetensors on 8 GiB. Each step fits one 10-minute device call;
#             `scripts/performance-page.py --take DIR` copies both steps'
#             files into docs/bench/current/ and rewrites both pages
#   multigpu  what only several devices show: the multi-device tests, and
#             memcheck on them and on files read into both devices' memory;
#             then on device 0 alone and on every device:
#             the pinned copy limit, aes-128-ctr, aes-256-gcm and chacha20
#             from pinned memory and device-resident (multigpu-speed.jsonl),
#             and a 16 GiB seal on CPU, GPU and hybrid workers
#             (multigpu-seal.txt)
#   multigpu-weights  the CLI's and the Python package's multi-device tests,
#             then encrypted safetensors of 16 and 32 GiB loaded to cuda:0
#             and to every GPU through a device_map
#             (bench/safetensors_bench.py --device-map-only;
#             multigpu-weights.json)
# BUILD_TARGETS limits the build to those targets (default: everything).
# Logs and results go to $OUT (default: gpu-out/). RESULTS_ARCHIVE names a
# .tar.gz that gets every results file under $OUT at the end (JSON, CSV,
# text tables, plots): a lent machine that returns only a few files returns
# them all in one.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
steps=("$@")
want() { [[ " ${steps[*]} " == *" $1 "* ]]; }
status=0
step() {  # step NAME COMMAND...: runs, logs to $out/NAME.log, records failure
  local name=$1
  shift
  echo "==> $name"
  if "$@" >"$out/$name.log" 2>&1; then
    tail -n 3 "$out/$name.log"
  else
    echo "FAILED: $name (last lines of $out/$name.log):"
    tail -n 40 "$out/$name.log"
    status=1
  fi
}

deps=/tmp/warpcrypt-deps
mkdir -p "$deps"
for deb in .deps/*.deb; do dpkg -x "$deb" "$deps"; done
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export WARPCRYPT_VECTORS_DIR=$PWD/.deps/vectors/cryptography_vectors
export WARPCRYPT_REQUIRE_VECTORS=1
# The commit the benchmarks record (bench/run_record.py): this copy's .git
# can lag behind the checkout it came from, whose commit
# scripts/fetch-gpu-deps.sh wrote into .deps/commit.
if [[ -z ${WARPCRYPT_BENCH_COMMIT:-} && -f .deps/commit ]]; then
  export WARPCRYPT_BENCH_COMMIT=$(<.deps/commit)
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.txt"
# The prefix finds what .deps unpacked: libsodium, and CLI11's package
# (usr/share/cmake/CLI11, whose include path is relative to it). The CUDA
# code is compiled for the GPUs present (cmake/cuda_architectures.cmake; the
# configure log names them).
step configure cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWARPCRYPT_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$deps/usr"
step build cmake --build build-gpu -j"$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
# The CLI lists the devices where the build made it (BUILD_TARGETS may not).
if [[ -x build-gpu/warpcrypt ]]; then build-gpu/warpcrypt devices | tee -a "$out/gpu.txt"; fi

if want test; then
  step ctest ctest --test-dir build-gpu --output-on-failure -j4 --timeout 600
fi
if want gputest; then
  step ctest-gpu ctest --test-dir build-gpu --output-on-failure -j4 --timeout 600 -L gpu
fi
if want sanitize; then
  # The differential sweeps are long under instrumentation; the vector,
  # in-place, unaligned and batch tests exercise every kernel.
  gpu_filter='--gtest_filter=*GpuDeviceApi.InPlace*:*GpuDeviceApi.UnalignedPointers*:*GpuDeviceApi.StreamOffsets*:*GpuBatch*:*GpuDispatch*:*GpuCounterCarry*'
  # The engine's lanes add host threads, streams and copies but no kernels:
  # memcheck only, racecheck has nothing new to find there.
  engine_filter='--gtest_filter=*GpuEngine.*:*GpuEngineTest.InPlace*'
  # The AEAD vector and differential sets call the GPU tens of thousands of
  # times through host memory; AeadDevice covers the same kernels directly.
  vector_filter='--gtest_filter=*_gpu:*_gpu_reference:-*GcmEncryptVectors*:*GcmDecryptVectors*:*AeadDifferential*'
  for tool in memcheck racecheck; do
    step "$tool-gpu-tests" compute-sanitizer --tool "$tool" --error-exitcode 1 build-gpu/tests/warpcrypt_gpu_tests "$gpu_filter"
    step "$tool-vectors" compute-sanitizer --tool "$tool" --error-exitcode 1 build-gpu/tests/warpcrypt_unit_tests "$vector_filter"
  done
  step memcheck-engine compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/warpcrypt_gpu_tests "$engine_filter"
  step memcheck-aead compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/warpcrypt_gpu_tests \
    '--gtest_filter=*AeadDevice*:*AeadArithmetic*'
fi
if want racecheck-aead; then
  # Racecheck instruments every shared-memory access (the T-table's too), so
  # it takes the tests whose messages stay short: a few segments each, and
  # the strided batches, whose short messages take the two passes.
  step racecheck-aead timeout "${RACECHECK_SECONDS:-500}" compute-sanitizer --tool racecheck --error-exitcode 1 \
    build-gpu/tests/warpcrypt_gpu_tests \
    '--gtest_filter=*AeadDevice.UnalignedPointers*:*AeadDeviceGcm*:*AeadArithmetic*:*AeadDevice.Strided*aes_128_gcm*:*AeadDevice.Strided*chacha*'
fi
if want speed; then
  for cipher in aes-128-ctr aes-256-ctr aes-256-gcm chacha20 chacha20-poly1305 salsa20; do
    build-gpu/warpcrypt speed -evp "$cipher" --backend gpu --resident device -bytes 1073741824 -seconds 2
  done 2>&1 | tee "$out/speed.txt"
fi
if want kernels; then
  step kernels-batch build-gpu/bench/gpu/warpcrypt_kernel_bench batch 7
  step kernels-spread build-gpu/bench/gpu/warpcrypt_kernel_bench spread 21
  # The batches' kernels alone, without the host's per-message preparation.
  step kernels-batch-ncu ncu --csv --metrics gpu__time_duration.sum -k 'regex:aead_|describe_' \
    build-gpu/bench/gpu/warpcrypt_kernel_bench batch 1
fi
if want ncu; then
  conflicts=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  conflicts+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum
  for cipher in aes-256-ctr aes-256-gcm; do
    step "ncu-$cipher" ncu --section SourceCounters --metrics "$conflicts" -k 'regex:keystream|aead_bulk' -c 3 \
      -f -o "$out/ncu-$cipher" build-gpu/warpcrypt speed -evp "$cipher" --backend gpu --resident device \
      -bytes 67108864 -seconds 1
    ncu -i "$out/ncu-$cipher.ncu-rep" --page details --csv >"$out/ncu-$cipher-details.csv" 2>&1
    ncu -i "$out/ncu-$cipher.ncu-rep" --page source --print-source sass --csv >"$out/ncu-$cipher-sass.csv" 2>&1
    rm -f "$out/ncu-$cipher.ncu-rep"
  done
  # The same kernels over zero and over random keys and data, at the base
  # clock Nsight Compute locks: executed instructions, shared-memory
  # wavefronts and elapsed cycles per launch (ncu-spread.csv).
  step ncu-spread ncu --csv --metrics gpc__cycles_elapsed.max,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
    -k 'regex:keystream|aead_' build-gpu/bench/gpu/warpcrypt_kernel_bench spread 3
  mv "$out/ncu-spread.log" "$out/ncu-spread.csv"
fi
if want pipes; then
  for cipher in aes-256-ctr aes-256-gcm aes-128-ctr aes-128-gcm chacha20 chacha20-poly1305; do
    step "pipes-$cipher" ncu --section ComputeWorkloadAnalysis --section InstructionStats --section SpeedOfLight \
      --section Occupancy --section SourceCounters -k 'regex:keystream|aead_bulk' -c 1 -f -o "$out/pipes-$cipher" \
      build-gpu/warpcrypt speed -evp "$cipher" --backend gpu --resident device -bytes 67108864 -seconds 1
    ncu -i "$out/pipes-$cipher.ncu-rep" --page details --csv >"$out/ncu-pipes-$cipher.csv" 2>&1
    ncu -i "$out/pipes-$cipher.ncu-rep" --page raw --csv >"$out/ncu-pipes-$cipher-raw.csv" 2>&1
    ncu -i "$out/pipes-$cipher.ncu-rep" --page source --print-source sass --csv >"$out/sass-$cipher.csv" 2>&1
    python3 bench/sass_opcode_counts.py "$out/sass-$cipher.csv" >"$out/opcodes-$cipher.txt"
    rm -f "$out/pipes-$cipher.ncu-rep" "$out/sass-$cipher.csv"
  done
fi
if want ghash; then
  step ghash build-gpu/bench/gpu/warpcrypt_ghash_bench 11
  step ncu-ghash ncu --csv --page raw --section ComputeWorkloadAnalysis --section InstructionStats \
    --section SpeedOfLight -k 'regex:ghash_' -c 3 build-gpu/bench/gpu/warpcrypt_ghash_bench 1
  mv "$out/ncu-ghash.log" "$out/ncu-ghash.csv"
fi
if want multigpu; then
  # The out-of-memory test fills a device, which the sanitizer's own shadow
  # memory cannot live with; it runs, unsanitized, in gputest.
  step memcheck-multigpu compute-sanitizer --tool memcheck --error-exitcode 1 build-gpu/tests/warpcrypt_gpu_tests \
    '--gtest_filter=*MultiGpu*:*GpuEngine.*:*GpuEngineTest.InPlace*:*ReadFilesToDevice*:-*OutOfMemory*'
  step multigpu-tests build-gpu/tests/warpcrypt_gpu_tests '--gtest_filter=*MultiGpu*'
  step multigpu-copies build-gpu/bench/gpu/warpcrypt_kernel_bench copies 7
  all_devices=$(seq -s, 0 $(($(nvidia-smi -L | wc -l) - 1)))
  # Device 0 alone and every device, from pinned memory and device-resident,
  # 1 GiB calls: one `speed --json` report a line.
  for cipher in aes-128-ctr aes-256-gcm chacha20; do
    for devices in 0 "$all_devices"; do
      for resident in host device; do
        build-gpu/warpcrypt speed -evp "$cipher" --backend gpu --resident "$resident" --devices "$devices" \
          -bytes 1073741824 -seconds 3 --json | tr -d '\n'
        echo
      done
    done
  done >"$out/multigpu-speed.jsonl" 2>"$out/multigpu-speed.log"
  cat "$out/multigpu-speed.jsonl" | cut -c1-400
  # 16 GiB of random-looking bytes (aes-128-ctr over zeros) in the page
  # cache, sealed to /dev/null three times per kind of worker; wall seconds.
  big=/tmp/warpcrypt-16g
  head -c 16G /dev/zero | build-gpu/warpcrypt enc -aes-128-ctr -K "$(printf '%032d' 7)" -iv "$(printf '%032d' 9)" \
    -out "$big"
  head -c 32 /dev/urandom >/tmp/warpcrypt-seal.key
  for workers in "cpu" "gpu --devices 0" "gpu --devices $all_devices" "hybrid --devices 0" \
                 "hybrid --devices $all_devices"; do
    seconds=()
    for run in 1 2 3; do
      start=$EPOCHREALTIME
      build-gpu/warpcrypt seal -keyfile /tmp/warpcrypt-seal.key --backend $workers -in "$big" -out /dev/null
      seconds+=("$(awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $start }")")
    done
    echo "seal 16 GiB, --backend $workers: ${seconds[*]} s"
  done 2>&1 | tee "$out/multigpu-seal.txt"
  rm -f "$big"
fi
if want engine; then
  step engine timeout "${ENGINE_SECONDS:-540}" python3 bench/engine_bench.py --binary build-gpu/warpcrypt \
    --out "$out" ${ENGINE_PARTS:+--parts "$ENGINE_PARTS"}
fi
if want sass; then
  cuobjdump -sass build-gpu/src/CMakeFiles/warpcrypt_cuda.dir/backends/cuda/launch.cu.o | gzip >"$out/launch.sass.gz"
fi
# The reference `age` and `age-keygen`, unpacked from .deps; the CLI that
# the CLI tests, the Dask tests and the benchmarks run.
export PATH="$deps/usr/bin:$PATH"
export WARPCRYPT_CLI="$PWD/build-gpu/warpcrypt"
if want python || want cli || want safetensors || want safetensors-bench || want figures-python ||
   want multigpu-weights; then
  # The package, built from this checkout with what the machine has
  # (nanobind, scikit-build-core): no network, so no build isolation and no
  # dependencies. It links build-gpu's library as built, kernels included.
  pysite=/tmp/warpcrypt-python
  step python-install python3 -m pip install --no-build-isolation --no-deps --upgrade --target "$pysite" \
    -C build-dir="$PWD/build-gpu/python" -C cmake.define.warpcrypt_DIR="$PWD/build-gpu" \
    -C cmake.define.CMAKE_PREFIX_PATH="$deps/usr" ./python
  # Dask, distributed, zarr, pyca/cryptography and pyrage from .deps/wheels,
  # only the distributions this Python lacks, so that PyTorch's own numpy
  # and friends stay as they are.
  step python-wheels python3 scripts/install-missing-wheels.py "$pysite" .deps/wheels
  export PYTHONPATH="$pysite${PYTHONPATH:+:$PYTHONPATH}"
fi
if want cli; then
  step cli-tests python3 -m pytest tests/cli -q -rs
fi
if want multigpu-weights; then
  step multigpu-cli python3 -m pytest tests/cli/test_seal.py -q -rs -k "two_devices or gpu_backend"
  step multigpu-python python3 -m pytest tests/python/test_gpu.py tests/python/test_safetensors.py \
    tests/python/test_safetensors_models.py -q -rs -k "device_map or second_device or own_device"
  step multigpu-weights python3 bench/safetensors_bench.py --gib 16 --gib 32 --dir /dev/shm --repeats 3 \
    --device-map-only --json "$out/multigpu-weights.json"
fi
if want age; then
  step age python3 bench/engine_bench.py --binary build-gpu/warpcrypt --out "$out" --parts age \
    --scratch /dev/shm --runs 5
  step age-bounds bench/age_bounds.sh build-gpu/warpcrypt
fi
if want python; then
  # Some GPU machines have no Dask; its tests then say so and stay out,
  # instead of failing at import (CI runs them on every commit).
  dask_tests=()
  python3 -c 'import dask, distributed' 2>/dev/null || {
    echo "no dask on this machine: tests/python/test_dask.py not run"
    dask_tests=(--ignore=tests/python/test_dask.py)
  }
  step python-tests python3 -m pytest tests/python -q -rs "${dask_tests[@]}"
  step python-example-state-dict python3 examples/encrypt_state_dict.py
  step python-example-memmap python3 examples/encrypt_memmap.py --size-mib 1024
  step python-overhead python3 bench/python_overhead.py
  step python-checkpoint python3 bench/checkpoint_bench.py --gib 4 --dir /dev/shm --repeats 3
fi
if want safetensors; then
  # With the AEAD's own tests (the loader opens tensors through its chunk
  # calls and the keys GPU arrays share) and the checkpoints' (their
  # tensors go through the same loader and writer).
  step safetensors-tests python3 -m pytest tests/python/test_safetensors.py tests/python/test_safetensors_api.py \
    tests/python/test_safetensors_sharded.py tests/python/test_safetensors_models.py \
    tests/python/test_aead.py tests/python/test_torch_checkpoint.py -q -rs
  # PyTorch's allocator hands out pieces of larger blocks, so memcheck sees
  # an access past a tensor only where it leaves the block.
  step safetensors-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 \
    python3 -m pytest tests/python/test_safetensors.py tests/python/test_safetensors_models.py tests/python/test_aead.py \
    tests/python/test_torch_checkpoint.py -q -k "gpu or cuda or meta or device_map"
fi
if want safetensors-bench; then
  step safetensors-bench python3 bench/safetensors_bench.py --gib 8 --gib 32 --dir /dev/shm \
    --repeats "${SAFETENSORS_REPEATS:-3}" --json "$out/safetensors-bench.json"
  # What bounds the save: the ways a new file in /dev/shm can be written.
  step file-write-bounds python3 bench/file_write_bounds.py --gib 8 --dir /dev/shm --json "$out/file-write-bounds.json"
  # Whether the copy engines can read the page cache's pages straight
  # (registered with CUDA) instead of through pinned slots.
  step page-cache-register python3 bench/page_cache_register_bench.py --gib 8 --dir /dev/shm \
    --json "$out/page-cache-register.json"
fi
if want figures; then
  mkdir -p "$out/figures"
  step figures-engine python3 bench/engine_bench.py --binary build-gpu/warpcrypt --out "$out/figures" \
    --parts "${FIGURE_PARTS:-cli,sealed,age,backends,kernels}" --runs 3 --seconds 1 --scratch /dev/shm
fi
if want figures-python; then
  mkdir -p "$out/figures"
  step figures-python-overhead sh -c 'python3 bench/python_overhead.py > "$1"' - "$out/figures/python_overhead.json"
  step figures-dask python3 bench/dask_bench.py --total 8G --cpu-workers 1,4,"$(nproc)" --repeat 2 \
    --dir /dev/shm/warpcrypt-dask-bench --out "$out/figures/dask.json"
  step figures-safetensors python3 bench/safetensors_bench.py --gib 8 --dir /dev/shm --repeats 3 \
    --json "$out/figures/safetensors.json"
fi
if want multigpu-load; then
  step multigpu-load python3 bench/multigpu_load_bounds.py --gib 16 --dir /dev/shm --json "$out/multigpu-load.json"
  step file-load sh -c 'build-gpu/bench/gpu/warpcrypt_file_load_bench 16 3 >"$1"' - "$out/file-load.jsonl"
fi
if want hybrid; then
  step hybrid env HYBRID_JSON="$out/hybrid.json" bench/hybrid_bounds.sh build-gpu/warpcrypt \
    build-gpu/bench/gpu/warpcrypt_start_bench
fi
if want host-data; then
  step host-data env HOST_DATA_JSON="$out/host-data.json" bench/gpu_host_data.sh build-gpu/warpcrypt
fi
if want demo; then
  step demo env WARPCRYPT_CLI=build-gpu/warpcrypt scripts/demo.sh
fi
if want bench; then
  # Bounded so the plots still get made from what finished.
  step sweep timeout "${SWEEP_SECONDS:-480}" python3 bench/sweep.py --binary build-gpu/warpcrypt --out "$out" \
    ${SWEEP_SERIES:+--series "$SWEEP_SERIES"} ${SWEEP_CIPHERS:+--ciphers "$SWEEP_CIPHERS"}
  step plot python3 bench/plot.py "$out/sweep.csv" --out "$out"
fi
if [[ -n ${RESULTS_ARCHIVE:-} ]]; then
  (cd "$out" && find . -type f \( -name '*.json' -o -name '*.csv' -o -name '*.txt' -o -name '*.png' \) -print0 |
    tar -czf "$RESULTS_ARCHIVE" --null -T -) || status=1
fi
exit $status
