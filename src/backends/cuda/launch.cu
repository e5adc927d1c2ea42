// Dispatch: from a keyed cipher and a byte range to a kernel launch with the
// right template arguments, grid and shared memory. Returns early on zero
// length and checks every launch.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/secret_bytes.h"
#include "backends/cuda/batch_kernels.cuh"
#include "backends/cuda/block_mode_kernels.cuh"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_cipher.h"
#include "backends/cuda/keystream_kernels.cuh"
#include "backends/cuda/tuning.h"

namespace warpcrypt::cuda {

__global__ void tile_chain_kernel(uint8_t *tile_chains, const uint8_t *in, uint64_t tiles,
                                  uint64_t tile_bytes, uint4 first_chain) {
  for (uint64_t tile = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; tile < tiles;
       tile += uint64_t{gridDim.x} * blockDim.x) {
    if (tile == 0) {
      store_block(tile_chains, first_chain, false);
    } else {
      for (int i = 0; i < 16; ++i) tile_chains[16 * tile + i] = in[tile * tile_bytes - 16 + i];
    }
  }
}

namespace {

uint32_t load_le32(const uint8_t *p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint64_t load_le64(const uint8_t *p) { return uint64_t{load_le32(p)} | uint64_t{load_le32(p + 4)} << 32; }
uint64_t load_be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}
uint4 to_uint4(const uint8_t b[16]) {
  return make_uint4(load_le32(b), load_le32(b + 4), load_le32(b + 8), load_le32(b + 12));
}

bool is_aligned(const void *p, uint64_t position) {
  return (reinterpret_cast<uintptr_t>(p) - position) % 16 == 0;
}

// How many CTAs of a kernel an SM holds, asked of the driver once per device
// and kernel rather than on every launch; the first time also opts the
// kernel into more than 48 KiB of dynamic shared memory where it needs that.
template <class Kernel>
wc_status ctas_per_sm(int *per_sm, const DeviceContext &context, Kernel kernel, int threads, size_t shared_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void *>, int> known;
  const std::lock_guard lock(mutex);
  const auto key = std::make_pair(context.device, reinterpret_cast<const void *>(kernel));
  if (const auto found = known.find(key); found != known.end()) {
    *per_sm = found->second;
    return WC_OK;
  }
  constexpr size_t kDefaultSharedLimit = 48 * 1024;
  if (shared_bytes > kDefaultSharedLimit) {
    const wc_status allowed = device_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
    if (allowed != WC_OK) return allowed;
  }
  int occupancy = 1;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, kernel, threads, shared_bytes) != cudaSuccess) {
    cudaGetLastError();
    occupancy = 1;
  }
  *per_sm = known[key] = std::clamp(occupancy, 1, tuning::kMaxCtasPerSm);
  return WC_OK;
}

// Launches a persistent grid: enough CTAs to fill every SM as far as
// occupancy allows, never more than there are tiles.
template <class Kernel, class... Args>
wc_status launch(const DeviceContext &context, Kernel kernel, int threads, size_t shared_bytes,
                 uint64_t tiles, cudaStream_t stream, const Args &...args) {
  int per_sm = 1;
  const wc_status status = ctas_per_sm(&per_sm, context, kernel, threads, shared_bytes);
  if (status != WC_OK) return status;
  const uint64_t resident = uint64_t(context.multiprocessors) * per_sm;
  const int grid = static_cast<int>(std::max<uint64_t>(1, std::min(tiles, resident)));
  kernel<<<grid, threads, shared_bytes, stream>>>(args...);
  return device_status(cudaGetLastError());
}

// ---- ECB, CBC decryption, CFB decryption --------------------------------

template <class Cipher, BlockMode kMode, int kRounds, int kThreads, int kBlocksPerThread>
wc_status launch_block_mode_shaped(const DeviceContext &context, BlockJob job, const uint8_t chain[16],
                                   cudaStream_t stream) {
  constexpr uint64_t kTileBytes = uint64_t{kThreads} * kBlocksPerThread * 16;
  const uint64_t tiles = (job.len + kTileBytes - 1) / kTileBytes;
  uint8_t *tile_chains = nullptr;
  if constexpr (chains(kMode)) {
    if (cudaMallocAsync(&tile_chains, 16 * tiles, stream) != cudaSuccess) return device_status(cudaErrorMemoryAllocation);
    const int chain_threads = 256;
    const auto chain_grid = static_cast<unsigned>(std::min<uint64_t>((tiles + chain_threads - 1) / chain_threads, 65535));
    tile_chain_kernel<<<chain_grid, chain_threads, 0, stream>>>(tile_chains, job.in, tiles, kTileBytes,
                                                                to_uint4(chain));
    job.tile_chains = tile_chains;
  }
  const size_t shared = Cipher::shared_bytes(uses_inverse_cipher(kMode));
  wc_status status = launch(context, block_mode_kernel<Cipher, kMode, kRounds, kThreads, kBlocksPerThread>,
                            kThreads, shared, tiles, stream, job);
  if (tile_chains != nullptr && cudaFreeAsync(tile_chains, stream) != cudaSuccess && status == WC_OK) {
    status = device_status(cudaErrorInvalidValue);
  }
  return status;
}

template <BlockMode kMode, int kRounds>
wc_status launch_block_mode_rounds(const DeviceContext &context, Implementation implementation,
                                   const BlockJob &job, const uint8_t chain[16], cudaStream_t stream) {
  if (implementation == Implementation::reference) {
    return launch_block_mode_shaped<ReferenceAes, kMode, kRounds, tuning::kReferenceThreads, 1>(context, job, chain,
                                                                                                stream);
  }
  return launch_block_mode_shaped<TTableAes, kMode, kRounds, tuning::kAesThreads, tuning::kAesBlocksPerThread>(
      context, job, chain, stream);
}

template <BlockMode kMode>
wc_status launch_block_mode(const DeviceContext &context, const KeyedGpuCipher &keyed, const uint8_t chain[16],
                            const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream) {
  // The T-table cipher decrypts with the equivalent inverse cipher's keys;
  // the reference cipher runs the plain inverse cipher on the encryption keys.
  const bool inverse_keys = uses_inverse_cipher(kMode) && keyed.implementation == Implementation::optimized;
  BlockJob job{inverse_keys ? keyed.decrypt_keys : keyed.encrypt_keys, in, out, len, nullptr,
               is_aligned(in, 0) && is_aligned(out, 0), context.tables};
  switch (job.keys.rounds) {
    case 10: return launch_block_mode_rounds<kMode, 10>(context, keyed.implementation, job, chain, stream);
    case 12: return launch_block_mode_rounds<kMode, 12>(context, keyed.implementation, job, chain, stream);
    case 14: return launch_block_mode_rounds<kMode, 14>(context, keyed.implementation, job, chain, stream);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

// ---- CTR, Salsa20, ChaCha20 ---------------------------------------------

template <class Generator, int kThreads, int kBlocksPerThread>
wc_status launch_keystream(const DeviceContext &context, const Generator &generator, size_t shared_bytes,
                           uint64_t position, const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream) {
  constexpr uint64_t kBytes = Generator::kBlockBytes;
  const uint64_t first_block = position / kBytes;
  const uint64_t last_block = (position + len - 1) / kBytes;
  const KeystreamJob job{in, out, position, len, first_block, last_block - first_block + 1,
                         is_aligned(in, position) && is_aligned(out, position)};
  const uint64_t tiles = (job.blocks + uint64_t{kThreads} * kBlocksPerThread - 1) / (uint64_t{kThreads} * kBlocksPerThread);
  return launch(context, keystream_xor_kernel<Generator, kThreads, kBlocksPerThread>, kThreads, shared_bytes,
                tiles, stream, generator, job);
}

template <int kRounds>
wc_status launch_ctr_rounds(const DeviceContext &context, const KeyedGpuCipher &keyed, uint64_t position,
                            const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream) {
  const uint64_t high = load_be64(keyed.iv), low = load_be64(keyed.iv + 8);
  if (keyed.implementation == Implementation::reference) {
    const AesCtrGenerator<ReferenceAes, kRounds> generator{keyed.encrypt_keys, high, low, context.tables};
    return launch_keystream<decltype(generator), tuning::kReferenceThreads, 1>(
        context, generator, ReferenceAes::shared_bytes(false), position, in, out, len, stream);
  }
  const AesCtrGenerator<TTableAes, kRounds> generator{keyed.encrypt_keys, high, low, context.tables};
  return launch_keystream<decltype(generator), tuning::kAesThreads, tuning::kAesBlocksPerThread>(
      context, generator, TTableAes::shared_bytes(false), position, in, out, len, stream);
}

wc_status launch_ctr(const DeviceContext &context, const KeyedGpuCipher &keyed, uint64_t position,
                     const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream) {
  switch (keyed.encrypt_keys.rounds) {
    case 10: return launch_ctr_rounds<10>(context, keyed, position, in, out, len, stream);
    case 12: return launch_ctr_rounds<12>(context, keyed, position, in, out, len, stream);
    case 14: return launch_ctr_rounds<14>(context, keyed, position, in, out, len, stream);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

template <class Block>
wc_status launch_arx(const DeviceContext &context, const KeyedGpuCipher &keyed, uint64_t position,
                     const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream) {
  const ArxGenerator<Block> generator{keyed.arx};
  return launch_keystream<ArxGenerator<Block>, tuning::kArxThreads, tuning::kArxBlocksPerThread>(
      context, generator, 0, position, in, out, len, stream);
}

// ---- Batches ------------------------------------------------------------

template <bool kCbc, int kRounds>
wc_status launch_batch_rounds(const DeviceContext &context, const BatchJob &job, cudaStream_t stream) {
  const uint64_t ctas = (job.count + tuning::kBatchThreads - 1) / tuning::kBatchThreads;
  return launch(context, batch_encrypt_kernel<kCbc, kRounds, tuning::kBatchThreads>, tuning::kBatchThreads,
                TTableAes::shared_bytes(false), ctas, stream, job);
}

template <bool kCbc>
wc_status launch_batch(const DeviceContext &context, const BatchJob &job, cudaStream_t stream) {
  switch (job.keys.rounds) {
    case 10: return launch_batch_rounds<kCbc, 10>(context, job, stream);
    case 12: return launch_batch_rounds<kCbc, 12>(context, job, stream);
    case 14: return launch_batch_rounds<kCbc, 14>(context, job, stream);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

}  // namespace

// Every parallel mode but CFB8, whose one-byte segments would need one AES
// call per byte.
Implementation selected_implementation() {
  const char *kernels = std::getenv("WARPCRYPT_GPU_KERNELS");
  return kernels != nullptr && std::strcmp(kernels, "reference") == 0 ? Implementation::reference
                                                                      : Implementation::optimized;
}

bool gpu_supports(const wc_cipher &cipher, wc_direction direction) {
  return is_parallel(cipher, direction) && cipher.mode != Mode::cfb8;
}

KeyedGpuCipher::KeyedGpuCipher(const wc_cipher &c, wc_direction d, const KeyMaterial &key, Implementation impl)
    : cipher(&c), direction(d), implementation(impl) {
  std::copy(key.iv.begin(), key.iv.end(), iv);
  if (c.primitive == Primitive::aes) {
    encrypt_keys = aes::expand_encrypt_key(key.key.data(), key.key.size());
    decrypt_keys = aes::make_decrypt_key(encrypt_keys);
    return;
  }
  // Salsa20 and ChaCha20 constants: "expand 32-byte k", or "expand 16-byte k"
  // with a 16-byte Salsa20 key used twice.
  arx.one = 1;
  const bool short_key = key.key.size() == 16;
  const char *constant = short_key ? "expand 16-byte k" : "expand 32-byte k";
  for (int i = 0; i < 4; ++i) arx.constants[i] = load_le32(reinterpret_cast<const uint8_t *>(constant) + 4 * i);
  for (int i = 0; i < 8; ++i) arx.key[i] = load_le32(key.key.data() + 4 * (short_key ? i % 4 : i));
  if (c.primitive == Primitive::salsa20) {
    arx.nonce[0] = load_le32(iv);
    arx.nonce[1] = load_le32(iv + 4);
    arx.counter = 0;
  } else {
    arx.counter = load_le64(iv);  // OpenSSL: 32-bit counter carrying into nonce word 0
    arx.nonce[0] = load_le32(iv + 8);
    arx.nonce[1] = load_le32(iv + 12);
  }
}

KeyedGpuCipher::~KeyedGpuCipher() {
  secure_wipe(&encrypt_keys, sizeof encrypt_keys);
  secure_wipe(&decrypt_keys, sizeof decrypt_keys);
  secure_wipe(&arx, sizeof arx);
  secure_wipe(iv, sizeof iv);
}

wc_status transform_device(const KeyedGpuCipher &keyed, uint64_t position, const uint8_t chain[16],
                           const uint8_t *in, uint8_t *out, size_t len, cudaStream_t stream) {
  if (len == 0) return WC_OK;
  const DeviceContext *context = current_device_context();
  if (context == nullptr) return WC_ERR_NO_DEVICE;
  const wc_cipher &c = *keyed.cipher;
  const bool encrypt = keyed.direction == WC_ENCRYPT;
  switch (c.mode) {
    case Mode::ecb:
      return encrypt ? launch_block_mode<BlockMode::ecb_encrypt>(*context, keyed, chain, in, out, len, stream)
                     : launch_block_mode<BlockMode::ecb_decrypt>(*context, keyed, chain, in, out, len, stream);
    case Mode::cbc:
      if (encrypt) break;
      return launch_block_mode<BlockMode::cbc_decrypt>(*context, keyed, chain, in, out, len, stream);
    case Mode::cfb128:
      if (encrypt) break;
      return launch_block_mode<BlockMode::cfb_decrypt>(*context, keyed, chain, in, out, len, stream);
    case Mode::ctr:
      return launch_ctr(*context, keyed, position, in, out, len, stream);
    case Mode::keystream:
      return c.primitive == Primitive::salsa20
                 ? launch_arx<Salsa20Block>(*context, keyed, position, in, out, len, stream)
                 : launch_arx<ChaCha20Block>(*context, keyed, position, in, out, len, stream);
    case Mode::cfb8:
    case Mode::ofb:
      break;
  }
  return WC_ERR_BACKEND_UNAVAILABLE;
}

wc_status batch_encrypt_device(const KeyedGpuCipher &keyed, bool padding, const uint8_t *in, uint8_t *out,
                               const wc_batch_message *messages, size_t count, const uint8_t *ivs,
                               cudaStream_t stream) {
  if (count == 0) return WC_OK;
  const DeviceContext *context = current_device_context();
  if (context == nullptr) return WC_ERR_NO_DEVICE;
  const bool cbc = keyed.cipher->mode == Mode::cbc;
  if (!cbc && keyed.cipher->mode != Mode::cfb128) return WC_ERR_UNSUPPORTED;
  // Descriptors and IVs travel in one stream-ordered allocation. They are
  // first gathered into pageable memory, from which cudaMemcpyAsync has
  // copied everything by the time it returns, so the caller may reuse its
  // arrays at once (at the price of a wait for the stream's earlier work).
  const size_t descriptor_bytes = count * sizeof(wc_batch_message);
  std::vector<uint8_t> staged(descriptor_bytes + 16 * count);
  std::memcpy(staged.data(), messages, descriptor_bytes);
  std::memcpy(staged.data() + descriptor_bytes, ivs, 16 * count);
  uint8_t *device_meta = nullptr;
  if (cudaMallocAsync(&device_meta, descriptor_bytes + 16 * count, stream) != cudaSuccess) {
    return device_status(cudaErrorMemoryAllocation);
  }
  wc_status status =
      device_status(cudaMemcpyAsync(device_meta, staged.data(), staged.size(), cudaMemcpyHostToDevice, stream));
  if (status == WC_OK) {
    const BatchJob job{keyed.encrypt_keys, in, out, reinterpret_cast<const wc_batch_message *>(device_meta),
                       count, device_meta + descriptor_bytes, padding, context->tables};
    status = cbc ? launch_batch<true>(*context, job, stream) : launch_batch<false>(*context, job, stream);
  }
  if (cudaFreeAsync(device_meta, stream) != cudaSuccess && status == WC_OK) status = WC_ERR_DEVICE;
  return status;
}

}  // namespace warpcrypt::cuda
