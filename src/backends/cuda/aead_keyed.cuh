// The host side of the AEAD kernels for one key: the constants the key gives
// them, each message's preparation (J0, the AAD's authenticator state), and
// the launches. Split by role, as the kernels are:
//  - aead_keyed.cu: keying, preparing messages, and queueing batches
//    (descriptors, scratch) onto the launches of either construction;
//  - aead_gcm_launch.cu and aead_chacha_launch.cu: each construction's
//    launches, the only files that instantiate its kernels;
//  - aead_gpu.cu: the AeadCipher over it, host memory through the device.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>

#include "core/aead_backend.h"
#include "core/secret_bytes.h"
#include "backends/cuda/aead_kernels.cuh"
#include "backends/cuda/gcm_kernels.cuh"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_cipher.h"
#include "backends/cuda/tuning.h"

namespace warpcrypt::cuda {

namespace aead_shape {
inline constexpr int kThreads = tuning::kAeadThreads;
inline constexpr int kGcmFinishThreads = tuning::kAeadAesFinishThreads;
inline constexpr int kEachThreads = tuning::kAeadEachThreads;
inline constexpr int kAesBlocksPerThread = tuning::kAesBlocksPerThread;
inline constexpr int kChaChaBlocksPerThread = tuning::kAeadArxBlocksPerThread;
inline constexpr int kGcmTiles = tuning::kAeadAesTilesPerSegment;
inline constexpr int kGcmCtasPerSm = tuning::kAeadAesBlocksPerSm;
inline constexpr int kGhashPassCtasPerSm = tuning::kAeadGhashPassBlocksPerSm;
inline constexpr uint64_t kGcmSegmentBlocks = uint64_t{kThreads} * kAesBlocksPerThread * kGcmTiles;
inline constexpr uint64_t kChaChaSegmentBlocks =
    uint64_t{kThreads} * kChaChaBlocksPerThread * tuning::kAeadArxTilesPerSegment;
}  // namespace aead_shape

// What a GCM key gives the kernels, computed once: the hash key H and the
// powers of it the split needs (ChaCha20's are its key words, ArxKey). All
// of it travels in kernel parameters, so nothing per key lives on the
// device.
struct GcmConstants {
  aes::RoundKeys keys;
  Gf128 h;
  Gf128Columns h_columns;  // for hashing nonces and AAD on the host
  GcmWarpSteps warp_steps;  // the bulk kernel on GPUs with .b1 tensor cores
  Ladder<GhashField, aead_shape::kThreads> warp_ladder;
  GcmEachWarpSteps each_steps;  // and the tag pass of short messages there
  GcmThreadSteps thread_steps;  // the bulk kernel on those without
  Ladder<GhashField, aead_shape::kThreads> thread_ladder;
  Gf128Columns finish_stride;
  Ladder<GhashField, aead_shape::kGcmFinishThreads> finish_ladder;
};

class KeyedGpuAead {
 public:
  // The key's constants derived; WC_ERR_CRYPTO_LIBRARY if OpenSSL fails.
  static wc_status make(std::unique_ptr<KeyedGpuAead> *out, const wc_aead &aead, std::span<const uint8_t> key);
  ~KeyedGpuAead();
  KeyedGpuAead(const KeyedGpuAead &) = delete;
  KeyedGpuAead &operator=(const KeyedGpuAead &) = delete;

  // Queues `messages` (device memory) on `stream`. Opening writes each
  // message's verdict to verified[i]. A batch's descriptors go up from
  // `pinned`, page-locked memory the stream owns until it has passed this
  // work, where it holds them; else from pageable memory, a copy that waits
  // for the stream's earlier work (its upload of the messages) before the
  // host may go on.
  wc_status queue(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, int32_t *verified,
                  cudaStream_t stream, std::span<uint8_t> pinned = {}) const;

  // Queues a strided batch (checked, device memory, the device current).
  // Short messages' passes compute each message's job from the layout; the
  // segments of long ones need descriptors to find their message, written
  // on the device.
  wc_status queue_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                          cudaStream_t stream) const;

  // One message's job, without its place among a launch's segments: the
  // nonce's counter words and the AAD's authenticator state, computed here
  // on the host. `verified` is null when sealing.
  wc_status prepare_job(AeadMessageJob *job, const wc_aead_message &m, int32_t *verified) const;

  // The kernels' cut: a keystream block, a segment of them, and the
  // segments of a `len`-byte message (every keystream block but the last).
  uint64_t block_bytes() const { return gcm() ? 16 : 64; }
  uint64_t segment_bytes() const {
    return block_bytes() * (gcm() ? aead_shape::kGcmSegmentBlocks : aead_shape::kChaChaSegmentBlocks);
  }
  uint64_t segment_count(uint64_t len) const {
    return aead_segments(len, block_bytes(), segment_bytes() / block_bytes());
  }
  size_t segment_value_bytes() const { return gcm() ? sizeof(Gf128) : sizeof(Poly); }

  // Queues the bulk kernel over `bulk_segments` segments from
  // launch.segment_offset, then, if `finish`, the finish kernel over every
  // message of the launch; the device must be current.
  wc_status queue_kernels(const AeadLaunch &launch, uint64_t bulk_segments, bool finish, cudaStream_t stream) const;

 private:
  KeyedGpuAead(const wc_aead &aead, std::span<const uint8_t> key) : aead_(aead), key_(key) {}
  wc_status prepare();
  bool gcm() const { return aead_.kind == AeadKind::gcm; }
  std::span<const uint8_t> key() const { return {key_.data(), key_.size()}; }

  // Preparing a message: J0 and the AAD's GHASH (aead_keyed.cu), or the
  // nonce's words and the AAD's Poly1305 state.
  wc_status prepare_gcm(AeadMessageJob &job, const wc_aead_message &m) const;
  wc_status prepare_chacha(AeadMessageJob &job, const wc_aead_message &m) const;

  // The two passes over every message of `launch` (all of them short, the
  // longest `longest` bytes), on grids no larger than the device holds at
  // once: each CTA loads its tables once.
  wc_status queue_each(AeadLaunch launch, uint64_t longest, cudaStream_t stream) const;
  // Each construction's launches (aead_gcm_launch.cu, aead_chacha_launch.cu).
  wc_status queue_gcm_each(const DeviceContext &context, const AeadLaunch &launch, cudaStream_t stream) const;
  wc_status queue_chacha_each(const DeviceContext &context, const AeadLaunch &launch, cudaStream_t stream) const;
  wc_status launch_gcm(const DeviceContext &context, const AeadLaunch &launch, uint64_t segments, bool finish,
                       cudaStream_t stream) const;
  template <int kRounds>
  wc_status launch_gcm_rounds(const DeviceContext &context, const AeadLaunch &launch, uint64_t segments,
                              bool finish, cudaStream_t stream) const;
  template <int kRounds>
  wc_status queue_gcm_each_rounds(const DeviceContext &context, const AeadLaunch &launch, cudaStream_t stream) const;
  wc_status launch_chacha(const AeadLaunch &launch, uint64_t segments, bool finish, cudaStream_t stream) const;

  const wc_aead &aead_;
  SecretBytes key_;
  std::unique_ptr<GcmConstants> gcm_;
  bool tensor_ghash_ = true;  // where the device has .b1 tensor cores
  ArxKey arx_{};
};

// ---- What both constructions' launches share ------------------------------

inline unsigned grid_for(uint64_t wanted, const DeviceContext &context, int ctas_per_sm) {
  return static_cast<unsigned>(
      std::min<uint64_t>(wanted, uint64_t{static_cast<unsigned>(context.multiprocessors)} * ctas_per_sm));
}

// Kernels asking for more than 48 KiB of dynamic shared memory must say so
// once per device; they also ask for the largest shared-memory carveout,
// without which three AES-GCM blocks (72 KiB each) would not fit an SM.
wc_status allow_dynamic_shared(const void *kernel, size_t bytes);

// Sealing: keystream, then tags. Opening: tags and verdicts first, which
// the keystream pass reads to release only authentic plaintext. A CTA of
// the tag pass takes `tag_messages_per_cta` messages at a time.
template <class Scheme, int kBlocksPerSm, class TagKernel>
wc_status queue_each_passes(const DeviceContext &context, const typename Scheme::Key &key, const AeadLaunch &launch,
                            TagKernel tag, uint64_t tag_messages_per_cta, cudaStream_t stream) {
  constexpr int kEachThreads = aead_shape::kEachThreads;
  const auto keystream = aead_each_keystream_kernel<Scheme, kEachThreads, kBlocksPerSm>;
  for (const void *kernel : {reinterpret_cast<const void *>(keystream), reinterpret_cast<const void *>(tag)}) {
    const wc_status allowed = allow_dynamic_shared(kernel, Scheme::kTableBytes);
    if (allowed != WC_OK) return allowed;
  }
  const uint64_t messages_per_turn = kEachThreads / launch.each_items;
  const unsigned keystream_grid =
      grid_for((launch.message_count + messages_per_turn - 1) / messages_per_turn, context, kBlocksPerSm);
  const unsigned tag_grid = grid_for(
      (uint64_t{launch.message_count} + tag_messages_per_cta - 1) / tag_messages_per_cta, context, kBlocksPerSm);
  for (const bool keystream_pass : {launch.seal, !launch.seal}) {
    if (keystream_pass) {
      keystream<<<keystream_grid, kEachThreads, Scheme::kTableBytes, stream>>>(key, launch);
    } else {
      tag<<<tag_grid, kEachThreads, Scheme::kTableBytes, stream>>>(key, launch);
    }
    const wc_status status = device_status(cudaGetLastError());
    if (status != WC_OK) return status;
  }
  return WC_OK;
}

// The bulk kernel, one CTA per segment (none where the launch has none).
template <class Bulk, int kBlocksPerThread, int kTiles, int kBlocksPerSm>
wc_status launch_bulk(const typename Bulk::Key &key, const AeadLaunch &launch, uint64_t segments,
                      cudaStream_t stream) {
  constexpr int kThreads = aead_shape::kThreads;
  if (segments == 0) return WC_OK;
  const auto bulk = aead_bulk_kernel<Bulk, kThreads, kBlocksPerThread, kTiles, kBlocksPerSm>;
  const size_t shared = Bulk::kTableBytes + kThreads / 32 * sizeof(typename Bulk::Field::Element);
  const wc_status allowed = allow_dynamic_shared(reinterpret_cast<const void *>(bulk), shared);
  if (allowed != WC_OK) return allowed;
  bulk<<<static_cast<unsigned>(segments), kThreads, shared, stream>>>(key, launch);
  return device_status(cudaGetLastError());
}

// The finish kernel, one CTA per message, where the launch ends its messages.
template <class Finish, uint64_t kSegmentBlocks>
wc_status launch_finish(const typename Finish::Key &key, const AeadLaunch &launch, bool finish, cudaStream_t stream) {
  if (!finish) return WC_OK;
  const auto finish_kernel = aead_finish_kernel<Finish, Finish::kCtaThreads, kSegmentBlocks>;
  const size_t shared = Finish::kTableBytes + Finish::kCtaThreads / 32 * sizeof(typename Finish::Field::Element);
  const wc_status allowed = allow_dynamic_shared(reinterpret_cast<const void *>(finish_kernel), shared);
  if (allowed != WC_OK) return allowed;
  finish_kernel<<<launch.message_count, Finish::kCtaThreads, shared, stream>>>(key, launch);
  return device_status(cudaGetLastError());
}

}  // namespace warpcrypt::cuda
