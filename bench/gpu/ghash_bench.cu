// GHASH's multiplication alone, three ways, over 1 GiB of device memory: what
// each costs the GPU's pipes per 16-byte block, to decide how the GCM kernel
// should hash (docs/lab-notes/performance-history.md, "GHASH off the busy pipes").
//
// The T-table AES of the CTR and GCM kernels keeps the integer (ALU) and
// shared-memory (LSU) pipes busy; a GHASH that runs beside it must cost those
// two pipes little. The three candidates:
//
//   table  the production kernel's: nibble tables of the constant factor in
//          shared memory, 128 conflict-free lookups and their XORs per block;
//   holes  carry-less multiplication by integer multiplications with holes
//          (the library's gf_multiply for varying factors, here with the
//          constant's limbs precomputed): two-level Karatsuba on 32-bit
//          limbs, 144 IMAD.WIDE per block on the FMA pipe;
//   bmma   the library's warp chains (gf_mma_absorb in gf128_device.cuh):
//          multiplication by a constant as a 128 x 128 bit matrix on the
//          binary tensor cores (mma m16n8k256, AND + POPC), a warp stepping
//          16 chains at once, each absorbing two blocks of each of two tiles
//          per step, [a | b] x [M(F) ; M(G)] per tile, the sums of both
//          accumulating before one packing; the blocks arrive one per lane,
//          as the GCM kernel holds them.
//
// All three compute the same function, so their outputs are compared:
// the data is tiles of 32 blocks; chain (u, r), r < 16, of warp-unit u takes
// blocks a and a + 2 (block_a below) of tiles u, u + U, u + 2U, ..., two
// tiles per step as the GCM kernel's warp chains take two slots:
// S = (S + a0) F0 + b0 G0 + a1 F1 + b1 G1, the F and G fixed powers of a
// random H. The table kernel is checked against the host first.
//
//   warpcrypt_ghash_bench [runs]   one JSON object per method on stdout
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/gf128_device.cuh"

using namespace warpcrypt::cuda;

namespace {

constexpr int kThreads = 256;
constexpr int kChainsPerUnit = 16;
constexpr int kTileBlocks = 2 * kChainsPerUnit;
constexpr uint32_t kUnits = 8192;  // chains: 16 per unit
constexpr int kGroups = 2;         // tiles per step
constexpr int kFactors = 2 * kGroups;  // F0, G0, F1, G1

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

// Chain r of a warp-unit absorbs blocks a and b of each 32-block tile as
// the library's warp chains do: chain q blocks 4q and 4q + 2, chain q + 8
// blocks 4q + 1 and 4q + 3.
__host__ __device__ constexpr uint32_t block_a(uint32_t row) { return row < 8 ? 4 * row : 4 * (row - 8) + 1; }

// The table and holes kernels: one chain per thread, `times(x, i)` being x
// times factor i (F0, G0, F1, G1).
template <class Times>
__device__ void thread_chains(const uint4 *data, uint32_t steps, const Times &times, uint4 *out) {
  const uint32_t chain = blockIdx.x * kThreads + threadIdx.x;
  const uint32_t unit = chain / kChainsPerUnit;
  const uint32_t row = chain % kChainsPerUnit;
  Gf128 state{};
  for (uint32_t step = 0; step < steps; ++step) {
    Gf128 next{};
    for (int g = 0; g < kGroups; ++g) {
      const uint64_t tile = unit + (uint64_t{step} * kGroups + g) * kUnits;
      const uint4 *blocks = data + tile * kTileBlocks + block_a(row);
      const Gf128 a = g == 0 ? gf_add(state, gf_from_block(blocks[0])) : gf_from_block(blocks[0]);
      next = gf_add(next, times(a, 2 * g));
      next = gf_add(next, times(gf_from_block(blocks[2]), 2 * g + 1));
    }
    state = next;
  }
  out[chain] = gf_to_block(state);
}

// ---- table ----------------------------------------------------------------

__global__ void __launch_bounds__(kThreads) ghash_table(const uint4 *data, uint32_t steps, const uint32_t *tables,
                                                        uint4 *out) {
  __shared__ uint32_t shared[kFactors * kGf128TableWords];
  for (int i = threadIdx.x; i < kFactors * kGf128TableWords; i += kThreads) shared[i] = tables[i];
  __syncthreads();
  thread_chains(data, steps, [&](const Gf128 &x, int i) { return gf_multiply(x, shared + i * kGf128TableWords); },
                out);
}

// ---- holes ---------------------------------------------------------------

struct HoleFactors {
  GfHoleFactor factor[kFactors];
};

__global__ void __launch_bounds__(kThreads) ghash_holes(const uint4 *data, uint32_t steps,
                                                        const __grid_constant__ HoleFactors factors, uint4 *out) {
  thread_chains(data, steps, [&](const Gf128 &x, int i) { return gf_multiply(x, factors.factor[i]); }, out);
}

// ---- bmma ----------------------------------------------------------------

// The library's warp chains (gf128_device.cuh), as the GCM bulk kernel runs
// them: lane l of the warp holds block l of each group of 32.
__global__ void __launch_bounds__(kThreads) ghash_bmma(const uint4 *data, uint32_t steps,
                                                       const Gf128MmaFragments *fragments, uint4 *out) {
  __shared__ Gf128MmaFragments step_fragments[kGroups];
  for (int i = threadIdx.x; i < static_cast<int>(sizeof step_fragments / 4); i += kThreads) {
    (&step_fragments[0].word[0][0][0])[i] = (&fragments[0].word[0][0][0])[i];
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const uint32_t unit = (blockIdx.x * kThreads + threadIdx.x) / 32;
  Gf128WarpChains chains;
  for (uint32_t step = 0; step < steps; ++step) {
    uint32_t arranged[kGroups][4];
    for (int g = 0; g < kGroups; ++g) {
      const uint64_t tile = unit + (uint64_t{step} * kGroups + g) * kUnits;
      gf_mma_arrange(data[tile * kTileBlocks + lane], arranged[g]);
    }
    gf_mma_absorb(chains, arranged, step_fragments);
  }
  // Chain q's value is in lane 4q, chain q + 8's in lane 4q + 1.
  const Gf128 value = gf_mma_chain_value(chains);
  if (lane % 4 < 2) out[unit * kChainsPerUnit + lane / 4 + 8 * (lane % 4)] = gf_to_block(value);
}

// ---- host -----------------------------------------------------------------

Gf128 power(const Gf128 &h, int exponent) {
  Gf128 result{{0x80000000u, 0, 0, 0}};  // 1
  for (int i = 0; i < exponent; ++i) result = gf_multiply(result, h);
  return result;
}

uint4 host_chain(const std::vector<uint4> &data, uint32_t chain, uint32_t steps, const Gf128Columns (&k)[kFactors]) {
  const uint32_t unit = chain / kChainsPerUnit, row = chain % kChainsPerUnit;
  Gf128 state{};
  for (uint32_t step = 0; step < steps; ++step) {
    Gf128 next{};
    for (int g = 0; g < kGroups; ++g) {
      const uint64_t at = (unit + (uint64_t{step} * kGroups + g) * kUnits) * kTileBlocks + block_a(row);
      const Gf128 a = g == 0 ? gf_add(state, gf_from_block(data[at])) : gf_from_block(data[at]);
      next = gf_add(next, gf_add(gf_multiply(a, k[2 * g]), gf_multiply(gf_from_block(data[at + 2]), k[2 * g + 1])));
    }
    state = next;
  }
  return gf_to_block(state);
}

bool same(const uint4 &a, const uint4 &b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  const unsigned runs = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 11;
  try {
    constexpr size_t kBytes = size_t{1} << 30;
    constexpr size_t kBlocks = kBytes / 16;
    const uint32_t steps = static_cast<uint32_t>(kBlocks / kTileBlocks / kUnits / kGroups);
    const uint32_t chains = kUnits * kChainsPerUnit;

    std::mt19937_64 rng(2026);
    std::vector<uint4> data(kBlocks);
    for (uint4 &block : data) {
      const uint64_t lo = rng(), hi = rng();
      block = make_uint4(static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32), static_cast<uint32_t>(hi),
                         static_cast<uint32_t>(hi >> 32));
    }
    const Gf128 h{{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()),
                   static_cast<uint32_t>(rng())}};
    // F0, G0, F1, G1 as the GCM kernel's step has them: H^64, H^62, H^32, H^30.
    Gf128 factors[kFactors];
    Gf128Columns columns[kFactors];
    std::vector<uint32_t> tables(kFactors * kGf128TableWords);
    HoleFactors holes{};
    for (int i = 0; i < kFactors; ++i) {
      factors[i] = power(h, 32 * (kGroups - i / 2) - 2 * (i % 2));
      columns[i] = gf_columns(factors[i]);
      for (int w = 0; w < kGf128TableWords; ++w) tables[i * kGf128TableWords + w] = gf_table_word(columns[i], w);
      holes.factor[i] = gf_hole_factor(factors[i]);
    }
    Gf128MmaFragments fragments[kGroups];
    for (int g = 0; g < kGroups; ++g) fragments[g] = gf_mma_fragments(factors[2 * g], factors[2 * g + 1]);

    uint4 *device_data, *device_out;
    uint32_t *device_tables;
    Gf128MmaFragments *device_fragments;
    check_cuda(cudaMalloc(&device_data, kBytes), "cudaMalloc");
    check_cuda(cudaMalloc(&device_out, chains * sizeof(uint4)), "cudaMalloc");
    check_cuda(cudaMalloc(&device_tables, tables.size() * sizeof(uint32_t)), "cudaMalloc");
    check_cuda(cudaMalloc(&device_fragments, sizeof fragments), "cudaMalloc");
    check_cuda(cudaMemcpy(device_data, data.data(), kBytes, cudaMemcpyHostToDevice), "upload");
    check_cuda(cudaMemcpy(device_tables, tables.data(), tables.size() * sizeof(uint32_t), cudaMemcpyHostToDevice),
               "upload");
    check_cuda(cudaMemcpy(device_fragments, fragments, sizeof fragments, cudaMemcpyHostToDevice), "upload");

    const unsigned chain_blocks = chains / kThreads;        // one thread per chain
    const unsigned warp_blocks = kUnits * 32 / kThreads;    // one warp per 16 chains
    struct Method {
      const char *name;
      std::function<void()> launch;
    };
    const std::vector<Method> methods = {
        {"table", [&] { ghash_table<<<chain_blocks, kThreads>>>(device_data, steps, device_tables, device_out); }},
        {"holes", [&] { ghash_holes<<<chain_blocks, kThreads>>>(device_data, steps, holes, device_out); }},
        {"bmma", [&] { ghash_bmma<<<warp_blocks, kThreads>>>(device_data, steps, device_fragments, device_out); }},
    };

    std::vector<uint4> reference;
    cudaEvent_t start, stop;
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
    for (const Method &method : methods) {
      method.launch();
      check_cuda(cudaDeviceSynchronize(), method.name);
      std::vector<uint4> result(chains);
      check_cuda(cudaMemcpy(result.data(), device_out, chains * sizeof(uint4), cudaMemcpyDeviceToHost), "download");
      size_t wrong = 0;
      if (reference.empty()) {
        for (uint32_t chain = 0; chain < chains; chain += chains / 64) {
          wrong += !same(result[chain], host_chain(data, chain, steps, columns));
        }
        reference = result;
      } else {
        for (uint32_t chain = 0; chain < chains; ++chain) wrong += !same(result[chain], reference[chain]);
      }
      std::vector<double> gbps;
      for (unsigned r = 0; r < runs; ++r) {
        check_cuda(cudaEventRecord(start), "cudaEventRecord");
        method.launch();
        check_cuda(cudaEventRecord(stop), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        gbps.push_back(double(kBytes) / (ms / 1e3) / 1e9);
      }
      std::printf("{\"method\": \"%s\", \"bytes\": %zu, \"median_gbps\": %.1f, \"min_gbps\": %.1f, "
                  "\"max_gbps\": %.1f, \"chains_wrong\": %zu}\n",
                  method.name, kBytes, median(gbps), *std::min_element(gbps.begin(), gbps.end()),
                  *std::max_element(gbps.begin(), gbps.end()), wrong);
      std::fflush(stdout);
    }
    cudaFree(device_data);
    cudaFree(device_out);
    cudaFree(device_tables);
    cudaFree(device_fragments);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "ghash_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
