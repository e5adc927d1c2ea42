// Dispatch for the AEAD kernels, and the host side around them: per-key
// constants, per-message preparation (J0, the AAD's authenticator state),
// device-pointer messages, and host-memory messages copied through the GPU.
#include "backends/cuda/aead_gpu.h"

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/memory_ranges.h"
#include "core/secret_bytes.h"
#include "backends/cuda/aead_kernels.cuh"
#include "backends/cuda/device_context.h"
#include "backends/cuda/gpu_backend.h"
#include "backends/cuda/gpu_cipher.h"
#include "backends/cuda/lane_buffers.h"
#include "backends/cuda/tuning.h"

namespace warpcrypt::cuda {
namespace {

constexpr int kThreads = tuning::kAeadThreads;
constexpr int kGcmFinishThreads = tuning::kAeadAesFinishThreads;
constexpr int kEachThreads = tuning::kAeadEachThreads;
constexpr int kDescribeThreads = 256;  // the strided batch's descriptors: a load and a store each
constexpr int kAesBlocksPerThread = tuning::kAesBlocksPerThread;
constexpr int kChaChaBlocksPerThread = tuning::kAeadArxBlocksPerThread;
constexpr int kGcmTiles = tuning::kAeadAesTilesPerSegment;
constexpr int kGcmCtasPerSm = tuning::kAeadAesBlocksPerSm;
constexpr int kGhashPassCtasPerSm = tuning::kAeadGhashPassBlocksPerSm;
constexpr uint64_t kGcmSegmentBlocks = uint64_t{kThreads} * kAesBlocksPerThread * kGcmTiles;
constexpr uint64_t kChaChaSegmentBlocks =
    uint64_t{kThreads} * kChaChaBlocksPerThread * tuning::kAeadArxTilesPerSegment;

// ---- Host arithmetic on the kernels' own types ---------------------------

uint32_t load_be32(const uint8_t *p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint32_t load_le32(const uint8_t *p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Up to 16 bytes as a block of four little-endian words, zero-padded.
uint4 padded_block(const uint8_t *bytes, size_t len) {
  uint8_t block[16] = {};
  std::memcpy(block, bytes, std::min<size_t>(len, 16));
  return make_uint4(load_le32(block), load_le32(block + 4), load_le32(block + 8), load_le32(block + 12));
}

Gf128 gf_power(Gf128 base, uint64_t exponent) {
  Gf128 result = GhashField::one();
  for (; exponent != 0; exponent >>= 1) {
    if (exponent & 1) result = gf_multiply(result, base);
    base = gf_multiply(base, base);
  }
  return result;
}

// reduce_block's factors over `base`, each lane factor times `scale`.
template <int kBlockThreads>
Ladder<GhashField, kBlockThreads> gf_ladder(const Gf128 &base, const Gf128 &scale = GhashField::one()) {
  Ladder<GhashField, kBlockThreads> ladder{};
  ladder.lane[31] = scale;
  for (int l = 30; l >= 0; --l) ladder.lane[l] = gf_multiply(ladder.lane[l + 1], base);
  const Gf128 base32 = gf_power(base, 32);
  constexpr int kWarps = kBlockThreads / 32;
  ladder.warp[kWarps - 1] = GhashField::one();
  for (int w = kWarps - 2; w >= 0; --w) ladder.warp[w] = gf_multiply(ladder.warp[w + 1], base32);
  return ladder;
}

// GHASH's Horner rule over zero-padded blocks: acc = (acc + block) * H.
Gf128 ghash_absorb(Gf128 acc, const Gf128Columns &h, const uint8_t *bytes, size_t len) {
  for (size_t at = 0; at < len; at += 16) acc = gf_multiply(gf_add(acc, gf_from_block(padded_block(bytes + at, len - at))), h);
  return acc;
}

// Poly1305's: acc = (acc + block + 2^128) * r.
Poly poly_absorb(Poly acc, const Poly &r, const uint8_t *bytes, size_t len) {
  for (size_t at = 0; at < len; at += 16) {
    acc = poly_multiply(poly_add(acc, poly_from_block(padded_block(bytes + at, len - at), 1)), r);
  }
  return acc;
}

// One block of a cipher OpenSSL runs on the host, for the few values the
// host needs before a launch: E(K, 0^128) = H, and ChaCha20 block 0.
bool host_keystream(const char *openssl_name, std::span<const uint8_t> key, const uint8_t *iv, uint8_t *out,
                    size_t len) {
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, openssl_name, nullptr);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  std::vector<uint8_t> zeros(len);
  int written = 0;
  const bool ok = cipher != nullptr && ctx != nullptr &&
                  EVP_EncryptInit_ex2(ctx, cipher, key.data(), iv, nullptr) == 1 &&
                  EVP_EncryptUpdate(ctx, out, &written, zeros.data(), static_cast<int>(len)) == 1;
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
  return ok;
}

// ---- Keys ----------------------------------------------------------------

// GCM's bulk GHASH runs on the tensor cores where the device has them,
// unless the environment says WARPCRYPT_GPU_GHASH=tables: then through the
// nibble tables GPUs before sm_80 use, so that tests and benchmarks can
// check and time that path on any GPU. Read at each keying, as
// WARPCRYPT_GPU_KERNELS is.
bool ghash_tables_requested() {
  const char *ghash = std::getenv("WARPCRYPT_GPU_GHASH");
  return ghash != nullptr && std::strcmp(ghash, "tables") == 0;
}

// What a key gives the kernels, computed once: GCM's hash key H and the
// powers of it the split needs; ChaCha20's key words. All of it travels in
// kernel parameters, so nothing per key lives on the device.
struct GcmConstants {
  aes::RoundKeys keys;
  Gf128 h;
  Gf128Columns h_columns;  // for hashing nonces and AAD on the host
  GcmWarpSteps warp_steps;  // the bulk kernel on GPUs with .b1 tensor cores
  Ladder<GhashField, kThreads> warp_ladder;
  GcmEachWarpSteps each_steps;  // and the tag pass of short messages there
  GcmThreadSteps thread_steps;  // the bulk kernel on those without
  Ladder<GhashField, kThreads> thread_ladder;
  Gf128Columns finish_stride;
  Ladder<GhashField, kGcmFinishThreads> finish_ladder;
};

class KeyedGpuAead {
 public:
  KeyedGpuAead(const wc_aead &aead, std::span<const uint8_t> key) : aead_(aead), key_(key) {}
  ~KeyedGpuAead() {
    if (gcm_) secure_wipe(gcm_.get(), sizeof *gcm_);
    secure_wipe(&arx_, sizeof arx_);
  }
  KeyedGpuAead(const KeyedGpuAead &) = delete;
  KeyedGpuAead &operator=(const KeyedGpuAead &) = delete;

  // Derives the key's constants; WC_ERR_CRYPTO_LIBRARY if OpenSSL fails.
  wc_status prepare() {
    const uint8_t zeros[16] = {};
    if (aead_.kind == AeadKind::chacha20_poly1305) {
      const KeyedGpuCipher chacha(*find_cipher("chacha20"), WC_ENCRYPT, KeyMaterial{key(), {zeros, 16}},
                                  Implementation::optimized);
      arx_ = chacha.arx;
      return WC_OK;
    }
    gcm_ = std::make_unique<GcmConstants>();
    tensor_ghash_ = !ghash_tables_requested();
    const KeyedGpuCipher aes(*find_cipher(ctr_cipher_name()), WC_ENCRYPT, KeyMaterial{key(), {zeros, 16}},
                             Implementation::optimized);
    gcm_->keys = aes.encrypt_keys;
    uint8_t h_bytes[16];
    if (!host_keystream(ecb_cipher_name(), key(), nullptr, h_bytes, 16)) return WC_ERR_CRYPTO_LIBRARY;
    GcmConstants &c = *gcm_;
    c.h = gf_from_block(padded_block(h_bytes, 16));
    secure_wipe(h_bytes, sizeof h_bytes);
    c.h_columns = gf_columns(c.h);
    for (int g = 0; g < kGcmMmaGroups; ++g) {
      const uint64_t distance = uint64_t{kThreads} * (kGcmMmaGroups - g);  // to the step's end
      c.warp_steps.group[g] = gf_mma_fragments(gf_power(c.h, distance), gf_power(c.h, distance - 2));
    }
    c.warp_ladder = gf_ladder<kThreads>(c.h, gf_power(gf_inverse(c.h), kThreads));
    for (int g = 0; g < kGcmEachGroups; ++g) {
      const auto distance = static_cast<uint64_t>(2 * (kGcmEachGroups - g));  // to the step's end, counting its last block
      c.each_steps.group[g] = gf_mma_fragments(gf_power(c.h, distance), gf_power(c.h, distance - 1));
    }
    c.each_steps.h = gf_hole_factor(c.h);
    c.thread_steps.tile_step = gf_columns(gf_power(c.h, uint64_t{kAesBlocksPerThread} * kThreads));
    c.thread_steps.slot_step = gf_columns(gf_power(c.h, kThreads));
    c.thread_ladder = gf_ladder<kThreads>(c.h);
    const Gf128 segment_weight = gf_power(c.h, kGcmSegmentBlocks);
    c.finish_stride = gf_columns(gf_power(segment_weight, kGcmFinishThreads));
    c.finish_ladder = gf_ladder<kGcmFinishThreads>(segment_weight);
    return WC_OK;
  }

  // Queues `messages` (device memory) on `stream`. Opening writes each
  // message's verdict to verified[i]. A batch's descriptors go up from
  // `pinned`, page-locked memory the stream owns until it has passed this
  // work, where it holds them; else from pageable memory, a copy that waits
  // for the stream's earlier work (its upload of the messages) before the
  // host may go on.
  wc_status queue(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, int32_t *verified,
                  cudaStream_t stream, std::span<uint8_t> pinned = {}) const {
    if (messages.empty()) return WC_OK;
    // One finish block per message, and grid sizes are ints.
    if (messages.size() > static_cast<size_t>(INT32_MAX)) return WC_ERR_INVALID_ARGUMENT;
    if (current_device_context() == nullptr) return WC_ERR_NO_DEVICE;

    // Short messages take the two passes of queue_each; the others are cut
    // into segments.
    std::vector<AeadMessageJob> each_jobs, segment_jobs;
    uint64_t segments = 0;
    uint64_t longest_each = 0;
    for (size_t i = 0; i < messages.size(); ++i) {
      AeadMessageJob job;
      const wc_status status = prepare_job(&job, messages[i], seal ? nullptr : verified + i);
      if (status != WC_OK) return status;
      if (messages[i].len <= tuning::kAeadEachMaxBytes) {
        each_jobs.push_back(job);
        longest_each = std::max<uint64_t>(longest_each, messages[i].len);
        continue;
      }
      job.first_segment = segments;
      segments += segment_count(messages[i].len);
      segment_jobs.push_back(job);
    }
    // One message of a kind travels in the kernel parameters; more go up in
    // front of the segment values' scratch.
    auto descriptor_bytes = [](const std::vector<AeadMessageJob> &jobs) {
      return jobs.size() > 1 ? jobs.size() * sizeof(AeadMessageJob) : 0;
    };
    const size_t each_bytes = descriptor_bytes(each_jobs);
    const size_t jobs_bytes = each_bytes + descriptor_bytes(segment_jobs);
    const size_t scratch_bytes = jobs_bytes + segments * segment_value_bytes();
    uint8_t *scratch = nullptr;
    if (scratch_bytes != 0 && cudaMallocAsync(&scratch, scratch_bytes, stream) != cudaSuccess) {
      return device_status(cudaErrorMemoryAllocation);
    }
    const bool pinned_descriptors = jobs_bytes <= pinned.size();
    auto describe = [&](const std::vector<AeadMessageJob> &jobs, uint8_t *at, AeadLaunch *launch) {
      *launch = AeadLaunch{nullptr, jobs.front(), static_cast<uint32_t>(jobs.size()), 0, scratch + jobs_bytes,
                           static_cast<uint32_t>(tag_len), seal};
      if (jobs.size() == 1) return WC_OK;
      launch->messages = reinterpret_cast<const AeadMessageJob *>(at);
      const size_t bytes = jobs.size() * sizeof(AeadMessageJob);
      // From pageable memory the copy is done when cudaMemcpyAsync returns,
      // so `jobs` may go out of scope at once.
      const void *from = jobs.data();
      if (pinned_descriptors) {
        from = std::memcpy(pinned.data() + (at - scratch), jobs.data(), bytes);
      }
      return device_status(cudaMemcpyAsync(at, from, bytes, cudaMemcpyHostToDevice, stream));
    };
    wc_status status = WC_OK;
    AeadLaunch launch;
    if (!each_jobs.empty()) {
      status = describe(each_jobs, scratch, &launch);
      if (status == WC_OK) status = queue_each(launch, longest_each, stream);
    }
    if (!segment_jobs.empty() && status == WC_OK) {
      status = describe(segment_jobs, scratch + each_bytes, &launch);
      if (status == WC_OK) status = queue_kernels(launch, segments, true, stream);
    }
    if (scratch != nullptr && cudaFreeAsync(scratch, stream) != cudaSuccess && status == WC_OK) status = WC_ERR_DEVICE;
    return status;
  }

  // Queues a strided batch (checked, device memory, the device current).
  // Short messages' passes compute each message's job from the layout; the
  // segments of long ones need descriptors to find their message, written
  // on the device.
  wc_status queue_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                          cudaStream_t stream) const {
    const DeviceContext *context = current_device_context();
    if (context == nullptr) return WC_ERR_NO_DEVICE;
    const bool each = batch.len <= tuning::kAeadEachMaxBytes;
    const uint64_t per_message = each ? 0 : segment_count(batch.len);
    const StridedBatch strided{batch.in,     batch.out,          batch.len,  batch.stride,
                               batch.nonces, batch.nonce_stride, batch.tags, batch.tag_stride,
                               verified,     batch.count,        per_message,
                               aead_.kind == AeadKind::gcm};
    AeadLaunch launch{nullptr, AeadMessageJob{}, static_cast<uint32_t>(batch.count), 0, nullptr,
                      static_cast<uint32_t>(tag_len), seal};
    if (each) {
      launch.strided = strided;
      return queue_each(launch, batch.len, stream);
    }
    const uint64_t segments = per_message * batch.count;
    const size_t jobs_bytes = batch.count * sizeof(AeadMessageJob);
    uint8_t *scratch = nullptr;
    if (cudaMallocAsync(&scratch, jobs_bytes + segments * segment_value_bytes(), stream) != cudaSuccess) {
      return device_status(cudaErrorMemoryAllocation);
    }
    auto *jobs = reinterpret_cast<AeadMessageJob *>(scratch);
    const unsigned grid =
        grid_for((batch.count + kDescribeThreads - 1) / kDescribeThreads, *context, tuning::kMaxCtasPerSm);
    describe_strided_kernel<<<grid, kDescribeThreads, 0, stream>>>(strided, jobs);
    wc_status status = device_status(cudaGetLastError());
    launch.messages = jobs;
    launch.segment_values = scratch + jobs_bytes;
    if (status == WC_OK) status = queue_kernels(launch, segments, true, stream);
    if (cudaFreeAsync(scratch, stream) != cudaSuccess && status == WC_OK) status = WC_ERR_DEVICE;
    return status;
  }

  // One message's job, without its place among a launch's segments: the
  // nonce's counter words and the AAD's authenticator state, computed here
  // on the host. `verified` is null when sealing.
  wc_status prepare_job(AeadMessageJob *job, const wc_aead_message &m, int32_t *verified) const {
    *job = AeadMessageJob{m.in, m.out, m.tag, verified, m.len, m.aad_len, 0, 0, {}, {},
                          reinterpret_cast<uintptr_t>(m.in) % 16 == 0 && reinterpret_cast<uintptr_t>(m.out) % 16 == 0};
    return aead_.kind == AeadKind::gcm ? prepare_gcm(*job, m) : prepare_chacha(*job, m);
  }

  // The kernels' cut: a keystream block, a segment of them, and the
  // segments of a `len`-byte message (every keystream block but the last).
  uint64_t block_bytes() const { return aead_.kind == AeadKind::gcm ? 16 : 64; }
  uint64_t segment_bytes() const {
    return block_bytes() * (aead_.kind == AeadKind::gcm ? kGcmSegmentBlocks : kChaChaSegmentBlocks);
  }
  uint64_t segment_count(uint64_t len) const {
    return aead_segments(len, block_bytes(), segment_bytes() / block_bytes());
  }
  size_t segment_value_bytes() const { return aead_.kind == AeadKind::gcm ? sizeof(Gf128) : sizeof(Poly); }

  // Queues the bulk kernel over `bulk_segments` segments from
  // launch.segment_offset, then, if `finish`, the finish kernel over every
  // message of the launch; the device must be current.
  wc_status queue_kernels(const AeadLaunch &launch, uint64_t bulk_segments, bool finish, cudaStream_t stream) const {
    if (aead_.kind == AeadKind::chacha20_poly1305) return launch_chacha(launch, bulk_segments, finish, stream);
    const DeviceContext *context = current_device_context();
    if (context == nullptr) return WC_ERR_NO_DEVICE;
    return launch_gcm(*context, launch, bulk_segments, finish, stream);
  }

 private:
  // The two passes over every message of `launch` (all of them short, the
  // longest `longest` bytes), on grids no larger than the device holds at
  // once: each CTA loads its tables once.
  wc_status queue_each(AeadLaunch launch, uint64_t longest, cudaStream_t stream) const {
    const DeviceContext *context = current_device_context();
    if (context == nullptr) return WC_ERR_NO_DEVICE;
    launch.each_items = static_cast<uint32_t>(
        std::max<uint64_t>(1, (longest + tuning::kAeadEachItemBytes - 1) / tuning::kAeadEachItemBytes));
    if (aead_.kind == AeadKind::chacha20_poly1305) {
      return queue_passes<ChaChaPolyEach, tuning::kAeadArxBlocksPerSm>(
          *context, ChaChaPolyKey{arx_}, launch,
          aead_each_tag_kernel<ChaChaPolyEach, kEachThreads, tuning::kAeadArxBlocksPerSm>, kEachThreads, stream);
    }
    switch (gcm_->keys.rounds) {
      case 10: return queue_gcm_each<10>(*context, launch, stream);
      case 12: return queue_gcm_each<12>(*context, launch, stream);
      case 14: return queue_gcm_each<14>(*context, launch, stream);
    }
    return WC_ERR_INVALID_ARGUMENT;
  }

  template <int kRounds>
  wc_status queue_gcm_each(const DeviceContext &context, const AeadLaunch &launch, cudaStream_t stream) const {
    const AesCtrGenerator<TTableAes, kRounds> cipher{gcm_->keys, 0, 0, context.tables};
    if (context.binary_tensor_cores && tensor_ghash_) {
      using Scheme = GcmEach<kRounds, true>;
      return queue_passes<Scheme, kGcmCtasPerSm>(context, typename Scheme::Key{cipher, gcm_->each_steps}, launch,
                                                 aead_each_gcm_tag_kernel<kRounds, kEachThreads, kGcmCtasPerSm>,
                                                 kEachThreads / 32 * 16, stream);
    }
    using Scheme = GcmEach<kRounds, false>;
    return queue_passes<Scheme, kGcmCtasPerSm>(context, typename Scheme::Key{cipher, gcm_->h_columns}, launch,
                                               aead_each_tag_kernel<Scheme, kEachThreads, kGcmCtasPerSm>,
                                               kEachThreads, stream);
  }

  // Sealing: keystream, then tags. Opening: tags and verdicts first, which
  // the keystream pass reads to release only authentic plaintext. A CTA of
  // the tag pass takes `tag_messages_per_cta` messages at a time.
  template <class Scheme, int kBlocksPerSm, class TagKernel>
  wc_status queue_passes(const DeviceContext &context, const typename Scheme::Key &key, const AeadLaunch &launch,
                         TagKernel tag, uint64_t tag_messages_per_cta, cudaStream_t stream) const {
    const auto keystream = aead_each_keystream_kernel<Scheme, kEachThreads, kBlocksPerSm>;
    for (const wc_status allowed :
         {allow_dynamic_shared(keystream, Scheme::kTableBytes), allow_dynamic_shared(tag, Scheme::kTableBytes)}) {
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

  static unsigned grid_for(uint64_t wanted, const DeviceContext &context, int ctas_per_sm) {
    return static_cast<unsigned>(std::min<uint64_t>(wanted, uint64_t{static_cast<unsigned>(context.multiprocessors)} *
                                                                ctas_per_sm));
  }

  std::span<const uint8_t> key() const { return {key_.data(), key_.size()}; }

  const char *ctr_cipher_name() const {
    return aead_.key_len == 16 ? "aes-128-ctr" : aead_.key_len == 24 ? "aes-192-ctr" : "aes-256-ctr";
  }
  const char *ecb_cipher_name() const {
    return aead_.key_len == 16 ? "AES-128-ECB" : aead_.key_len == 24 ? "AES-192-ECB" : "AES-256-ECB";
  }

  // SP 800-38D 7.1: J0 = IV || 0^31 || 1 for 96-bit IVs, otherwise
  // GHASH(IV || 0-padding || [len(IV)]_64 in bits); the AAD's GHASH state.
  wc_status prepare_gcm(AeadMessageJob &job, const wc_aead_message &m) const {
    const GcmConstants &c = *gcm_;
    if (m.nonce_len == kAeadNonceLen) {
      job.nonce[0] = load_be32(m.nonce);
      job.nonce[1] = load_be32(m.nonce + 4);
      job.nonce[2] = load_be32(m.nonce + 8);
      job.nonce[3] = 1;
    } else {
      Gf128 j0 = ghash_absorb(Gf128{}, c.h_columns, m.nonce, m.nonce_len);
      const uint64_t bits = uint64_t{m.nonce_len} * 8;
      j0 = gf_multiply(gf_add(j0, Gf128{{0, 0, static_cast<uint32_t>(bits >> 32), static_cast<uint32_t>(bits)}}),
                       c.h_columns);
      std::copy(j0.w, j0.w + 4, job.nonce);
    }
    const Gf128 state = ghash_absorb(Gf128{}, c.h_columns, m.aad, m.aad_len);
    std::copy(state.w, state.w + 4, job.initial);
    return WC_OK;
  }

  // The nonce's words, and the AAD's Poly1305 state, which needs this
  // message's r: ChaCha20 block 0 on the host, only when there is AAD.
  wc_status prepare_chacha(AeadMessageJob &job, const wc_aead_message &m) const {
    for (int i = 0; i < 3; ++i) job.nonce[i] = load_le32(m.nonce + 4 * i);
    if (m.aad_len == 0) return WC_OK;
    uint8_t iv[16] = {};  // OpenSSL's ChaCha20 IV: block counter 0, then the nonce
    std::memcpy(iv + 4, m.nonce, kAeadNonceLen);
    uint8_t one_time_key[32];
    if (!host_keystream("ChaCha20", key(), iv, one_time_key, sizeof one_time_key)) return WC_ERR_CRYPTO_LIBRARY;
    const Poly r = poly_clamped_r(padded_block(one_time_key, 16));
    secure_wipe(one_time_key, sizeof one_time_key);
    const Poly state = poly_absorb(Poly{}, r, m.aad, m.aad_len);
    std::copy(state.limb, state.limb + 5, job.initial);
    return WC_OK;
  }

  wc_status launch_gcm(const DeviceContext &context, const AeadLaunch &launch, uint64_t segments, bool finish,
                       cudaStream_t stream) const {
    switch (gcm_->keys.rounds) {
      case 10: return launch_gcm_rounds<10>(context, launch, segments, finish, stream);
      case 12: return launch_gcm_rounds<12>(context, launch, segments, finish, stream);
      case 14: return launch_gcm_rounds<14>(context, launch, segments, finish, stream);
    }
    return WC_ERR_INVALID_ARGUMENT;
  }

  template <int kRounds>
  wc_status launch_gcm_rounds(const DeviceContext &context, const AeadLaunch &launch, uint64_t segments, bool finish,
                              cudaStream_t stream) const {
    const GcmConstants &c = *gcm_;
    using Finish = GcmFinish<kRounds, kGcmFinishThreads>;
    const typename Finish::Key finish_key{{c.keys, 0, 0, context.tables}, c.h, c.finish_stride, c.finish_ladder};
    const AesCtrGenerator<TTableAes, kRounds> cipher{c.keys, 0, 0, context.tables};
    if (context.binary_tensor_cores && tensor_ghash_) {
      using Keystream = GcmBulk<kRounds, kThreads, kAesBlocksPerThread, true, BulkWork::keystream>;
      using Hash = GcmBulk<kRounds, kThreads, kAesBlocksPerThread, true, BulkWork::hash>;
      const typename Keystream::Key bulk_key{cipher, c.warp_steps, c.warp_ladder};
      // Sealing hashes the ciphertext the keystream pass wrote; opening
      // hashes the ciphertext before the keystream pass overwrites it in
      // place. The passes run one after the other: on two streams, in pieces
      // of the message, they slowed each other down (docs/lab-notes/performance-history.md).
      for (const bool keystream_pass : {launch.seal, !launch.seal}) {
        const wc_status status =
            keystream_pass
                ? launch_bulk<Keystream, kAesBlocksPerThread, kGcmTiles, kGcmCtasPerSm>(bulk_key, launch, segments,
                                                                                      stream)
                : launch_bulk<Hash, kAesBlocksPerThread, kGcmTiles, kGhashPassCtasPerSm>(bulk_key, launch, segments,
                                                                                       stream);
        if (status != WC_OK) return status;
      }
      return launch_finish<Finish, kGcmSegmentBlocks>(finish_key, launch, finish, stream);
    }
    using Bulk = GcmBulk<kRounds, kThreads, kAesBlocksPerThread, false, BulkWork::both>;
    const typename Bulk::Key bulk_key{cipher, c.thread_steps, c.thread_ladder};
    const wc_status status =
        launch_bulk<Bulk, kAesBlocksPerThread, kGcmTiles, kGcmCtasPerSm>(bulk_key, launch, segments, stream);
    return status != WC_OK ? status : launch_finish<Finish, kGcmSegmentBlocks>(finish_key, launch, finish, stream);
  }

  wc_status launch_chacha(const AeadLaunch &launch, uint64_t segments, bool finish, cudaStream_t stream) const {
    using Bulk = ChaChaPolyBulk<kThreads, kChaChaBlocksPerThread>;
    using Finish = ChaChaPolyFinish<tuning::kAeadArxFinishThreads, kChaChaSegmentBlocks>;
    const ChaChaPolyKey chacha_key{arx_};
    const wc_status status =
        launch_bulk<Bulk, kChaChaBlocksPerThread, tuning::kAeadArxTilesPerSegment, tuning::kAeadArxBlocksPerSm>(
            chacha_key, launch, segments, stream);
    return status != WC_OK ? status : launch_finish<Finish, kChaChaSegmentBlocks>(chacha_key, launch, finish, stream);
  }

  // The bulk kernel, one CTA per segment (none where the launch has none).
  template <class Bulk, int kBlocksPerThread, int kTiles, int kBlocksPerSm>
  static wc_status launch_bulk(const typename Bulk::Key &key, const AeadLaunch &launch, uint64_t segments,
                               cudaStream_t stream) {
    if (segments == 0) return WC_OK;
    const auto bulk = aead_bulk_kernel<Bulk, kThreads, kBlocksPerThread, kTiles, kBlocksPerSm>;
    const size_t shared = Bulk::kTableBytes + kThreads / 32 * sizeof(typename Bulk::Field::Element);
    const wc_status allowed = allow_dynamic_shared(bulk, shared);
    if (allowed != WC_OK) return allowed;
    bulk<<<static_cast<unsigned>(segments), kThreads, shared, stream>>>(key, launch);
    return device_status(cudaGetLastError());
  }

  // The finish kernel, one CTA per message, where the launch ends its messages.
  template <class Finish, uint64_t kSegmentBlocks>
  static wc_status launch_finish(const typename Finish::Key &key, const AeadLaunch &launch, bool finish,
                                 cudaStream_t stream) {
    if (!finish) return WC_OK;
    const auto finish_kernel = aead_finish_kernel<Finish, Finish::kCtaThreads, kSegmentBlocks>;
    const size_t shared = Finish::kTableBytes + Finish::kCtaThreads / 32 * sizeof(typename Finish::Field::Element);
    const wc_status allowed = allow_dynamic_shared(finish_kernel, shared);
    if (allowed != WC_OK) return allowed;
    finish_kernel<<<launch.message_count, Finish::kCtaThreads, shared, stream>>>(key, launch);
    return device_status(cudaGetLastError());
  }

  // Kernels asking for more than 48 KiB of dynamic shared memory must say so
  // once per device; they also ask for the largest shared-memory carveout,
  // without which three AES-GCM blocks (72 KiB each) would not fit an SM.
  template <class Kernel>
  static wc_status allow_dynamic_shared(Kernel kernel, size_t bytes) {
    constexpr size_t kDefaultLimit = 48 * 1024;
    if (bytes <= kDefaultLimit) return WC_OK;
    static std::mutex mutex;
    static std::map<std::pair<int, const void *>, bool> allowed;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return device_status(cudaErrorInvalidDevice);
    const std::lock_guard lock(mutex);
    bool &done = allowed[{device, reinterpret_cast<const void *>(kernel)}];
    if (!done) {
      wc_status status = device_status(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
      if (status == WC_OK) {
        status = device_status(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                                    cudaSharedmemCarveoutMaxShared));
      }
      if (status != WC_OK) return status;
      done = true;
    }
    return WC_OK;
  }

  const wc_aead &aead_;
  SecretBytes key_;
  std::unique_ptr<GcmConstants> gcm_;
  bool tensor_ghash_ = true;  // where the device has .b1 tensor cores
  ArxKey arx_{};
};

// A lane for host memory: leased pinned and device buffers on a stream of
// their own, and what the host does once the stream has passed the work
// queued on it (copy a piece's tag or an opening's verdicts out).
struct HostLane {
  std::unique_ptr<LeasedBuffers> buffers;
  std::function<void()> collect;

  // Waits for the lane's work and collects it.
  wc_status finish() {
    const wc_status status = buffers->wait();
    if (status == WC_OK && collect) collect();
    collect = nullptr;
    return status;
  }
};

// A lane's buffers: the device buffer holds a group's ranges or a piece
// (8 MiB, tuning.h); the pinned one only what the host reads or writes
// itself, a group's descriptors and verdicts or a piece's trailer. Host
// memory is copied straight from and to where it is, so page-locked memory
// moves at the bus's rate, and pageable memory, which the driver copies
// through staging of its own, slower: whoever wants more stages it in
// page-locked memory first (engine/staged_aead.h).
constexpr size_t kLaneBytes = tuning::kAeadHostLaneBytes;
constexpr size_t kLanePinnedBytes = size_t{64} << 10;
// A piece's trailer: 16 bytes of tag, then a verdict.
constexpr size_t kTrailerBytes = 16 + sizeof(int32_t);

size_t round_up16(size_t n) { return (n + 15) / 16 * 16; }

wc_status verdict(const uint8_t *word) {
  int32_t value = 0;
  std::memcpy(&value, word, sizeof value);
  return value == 1 ? WC_OK : WC_ERR_AUTH;
}

// A long message's pieces on one device: runs of whole segments, as many
// as a lane holds, that run on the device's lanes at once, each piece's
// segment values going to one array in that device's memory; the finish
// kernel runs with the last piece, which holds the tail, after the others.
class MessagePieces {
 public:
  // With the device current: pieces of at most `piece_bytes`, or one
  // segment and the tail where that is more, and at most what a lane holds.
  static wc_status make(std::unique_ptr<MessagePieces> *out, const KeyedGpuAead &keyed, const wc_aead_message &m,
                        size_t tag_len, bool seal, size_t piece_bytes = kLaneBytes) {
    auto pieces = std::unique_ptr<MessagePieces>(new MessagePieces(keyed, m, tag_len, seal, piece_bytes));
    wc_status status = keyed.prepare_job(&pieces->job_, m, nullptr);
    if (status == WC_OK) {
      status = device_status(
          cudaMalloc(&pieces->values_, std::max<uint64_t>(pieces->segments_, 1) * keyed.segment_value_bytes()));
    }
    if (status == WC_OK) *out = std::move(pieces);
    return status;
  }
  // cudaFree waits for the device: every piece, and the finish kernel that
  // read the values, are done by then.
  ~MessagePieces() { cudaFree(values_); }
  MessagePieces(const MessagePieces &) = delete;
  MessagePieces &operator=(const MessagePieces &) = delete;

  const std::vector<uint64_t> &cuts() const { return cuts_; }
  size_t piece_len(size_t k) const { return (k + 1 < cuts_.size() ? cuts_[k + 1] : message_.len) - cuts_[k]; }

  // Queues piece k on `lane` (the device current): its bytes up from `in`,
  // its kernels, its output down to `out`. The last piece's finish kernel
  // first waits for the work queued so far on `others`, the lanes the other
  // pieces went to; once the lane has passed it, its collect copies the tag
  // out (sealing) or sets *result (opening).
  wc_status queue(HostLane &lane, size_t k, const uint8_t *in, uint8_t *out, wc_status *result,
                  std::span<const HostLane> others) const {
    const bool last = k + 1 == cuts_.size();
    const size_t len = piece_len(k);
    LeasedBuffers &buffers = *lane.buffers;
    cudaStream_t stream = buffers.stream();
    uint8_t *device = buffers.device();
    uint8_t *trailer = buffers.pinned();
    const size_t trailer_at = round_up16(len);
    buffers.mark_device_used(trailer_at + kTrailerBytes);
    buffers.mark_pinned_used(kTrailerBytes);

    wc_status status = device_status(cudaMemcpyAsync(device, in, len, cudaMemcpyHostToDevice, stream));
    if (status == WC_OK && last && !seal_) {
      std::memcpy(trailer, message_.tag, tag_len_);
      status = device_status(cudaMemcpyAsync(device + trailer_at, trailer, 16, cudaMemcpyHostToDevice, stream));
    }
    AeadMessageJob piece = job_;
    piece.in = piece.out = device;
    piece.base = cuts_[k];
    piece.tag = device + trailer_at;
    piece.verified = seal_ ? nullptr : reinterpret_cast<int32_t *>(device + trailer_at + 16);
    piece.aligned = true;
    const uint64_t first_segment = k * segments_per_piece_;
    const uint64_t end_segment = std::min(segments_, first_segment + segments_per_piece_);
    const AeadLaunch launch{nullptr, piece, 1, first_segment, values_, static_cast<uint32_t>(tag_len_), seal_};
    if (status == WC_OK) status = keyed_.queue_kernels(launch, end_segment - first_segment, false, stream);
    if (status == WC_OK && last) {
      for (const HostLane &other : others) {
        if (&other == &lane || other.buffers == nullptr || status != WC_OK) continue;
        status = buffers.order_after(*other.buffers);
      }
      if (status == WC_OK) status = keyed_.queue_kernels(launch, 0, true, stream);
    }
    if (status == WC_OK) status = device_status(cudaMemcpyAsync(out, device, len, cudaMemcpyDeviceToHost, stream));
    if (status == WC_OK && last) {
      status = device_status(
          cudaMemcpyAsync(trailer, device + trailer_at, kTrailerBytes, cudaMemcpyDeviceToHost, stream));
      lane.collect = [trailer, tag = message_.tag, tag_len = tag_len_, seal = seal_, result] {
        if (seal) {
          std::memcpy(tag, trailer, tag_len);
        } else {
          *result = verdict(trailer + 16);
        }
      };
    }
    return status;
  }

 private:
  MessagePieces(const KeyedGpuAead &keyed, const wc_aead_message &m, size_t tag_len, bool seal, size_t piece_bytes)
      : keyed_(keyed), message_(m), tag_len_(tag_len), seal_(seal), segments_(keyed.segment_count(m.len)) {
    const uint64_t block_bytes = keyed.block_bytes();
    const uint64_t segment_bytes = keyed.segment_bytes();
    const uint64_t bulk_bytes = aead_bulk_blocks(m.len, block_bytes) * block_bytes;
    // Room for a run of segments and the tail, which is at most a block.
    const uint64_t most = std::min<uint64_t>(std::max<uint64_t>(piece_bytes, block_bytes), kLaneBytes - kTrailerBytes);
    const uint64_t room = most - block_bytes;
    segments_per_piece_ = std::max<uint64_t>(1, room / segment_bytes);
    // Segments are aligned on the end of the bulk run; the first may be short.
    for (uint64_t first = 0; first == 0 || first < segments_; first += segments_per_piece_) {
      const uint64_t from_end = (segments_ - first) * segment_bytes;
      cuts_.push_back(from_end > bulk_bytes ? 0 : bulk_bytes - from_end);
    }
  }

  const KeyedGpuAead &keyed_;
  wc_aead_message message_;
  size_t tag_len_;
  bool seal_;
  uint64_t segments_;
  uint64_t segments_per_piece_ = 0;
  std::vector<uint64_t> cuts_;
  AeadMessageJob job_{};
  void *values_ = nullptr;
};

// MessagePieces for a caller that runs them (AeadCipher::pieces): each
// piece on a lane of its own, leased for the run, which returns once the
// lane has passed it.
class GpuPieces final : public AeadPieces {
 public:
  GpuPieces(int device, std::unique_ptr<MessagePieces> pieces) : device_(device), pieces_(std::move(pieces)) {}
  ~GpuPieces() override {
    const CurrentDevice on_device(device_);
    pieces_.reset();
  }

  const std::vector<uint64_t> &cuts() const override { return pieces_->cuts(); }

  wc_status run(size_t k, const uint8_t *in, uint8_t *out) override {
    const CurrentDevice on_device(device_);
    wc_status status = on_device.status();
    HostLane lane;
    if (status == WC_OK) status = LeasedBuffers::acquire(&lane.buffers, device_, kLaneBytes, kLanePinnedBytes);
    wc_status checked = WC_OK;  // the last piece's verdict, when opening
    if (status == WC_OK) status = pieces_->queue(lane, k, in, out, &checked, {});
    if (status == WC_OK) status = lane.finish();
    return status != WC_OK ? status : checked;
  }

 private:
  int device_;
  std::unique_ptr<MessagePieces> pieces_;
};

// Host memory through the GPU as the plain ciphers' lanes move it: leased
// buffers on several streams per device, so that one lane's upload overlaps
// another's kernels and a third's download. Messages that fit a lane travel
// in groups, one launch per group, the groups going to the devices in turn
// (and each call starting on the next device); a longer message travels in
// pieces (MessagePieces) on one device, one piece per lane in turn. A
// group's messages' bytes are gathered into ranges (HostRanges) and copied
// straight from and to the host.
class GpuAead final : public AeadCipher {
 public:
  GpuAead(std::unique_ptr<KeyedGpuAead> keyed, std::vector<int> devices)
      : keyed_(std::move(keyed)), devices_(std::move(devices)) {}

  wc_backend backend() const override { return WC_BACKEND_GPU; }

  wc_status seal(std::span<const wc_aead_message> messages, size_t tag_len) const override {
    return run(messages, tag_len, true, nullptr);
  }

  wc_status open(std::span<const wc_aead_message> messages, size_t tag_len, wc_status *results) const override {
    return run(messages, tag_len, false, results);
  }

  wc_status pieces(std::unique_ptr<AeadPieces> *out, const wc_aead_message &message, size_t tag_len, bool seal,
                   size_t piece_bytes) const override {
    std::vector<DeviceLanes> devices;
    wc_status status = list_devices(&devices);
    if (status != WC_OK) return status;
    const int device = devices[next_device_.fetch_add(1, std::memory_order_relaxed) % devices.size()].device;
    const CurrentDevice on_device(device);
    status = on_device.status();
    std::unique_ptr<MessagePieces> pieces;
    if (status == WC_OK) status = MessagePieces::make(&pieces, *keyed_, message, tag_len, seal, piece_bytes);
    if (status == WC_OK) *out = std::make_unique<GpuPieces>(device, std::move(pieces));
    return status;
  }

  // Every message of a batch lives on one device; the first one's buffers
  // say which.
  wc_status queue_device(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, int32_t *verified,
                         wc_cuda_stream stream) const override {
    if (messages.empty()) return WC_OK;
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    const WorkDevice on_device(cuda_stream, {messages[0].in, messages[0].out, messages[0].tag, verified});
    if (on_device.status() != WC_OK) return on_device.status();
    return keyed_->queue(messages, tag_len, seal, verified, cuda_stream);
  }

  wc_status queue_device_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                                 wc_cuda_stream stream) const override {
    if (batch.count == 0) return WC_OK;
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    const WorkDevice on_device(cuda_stream, {batch.in, batch.out, batch.tags, batch.nonces, verified});
    if (on_device.status() != WC_OK) return on_device.status();
    return keyed_->queue_strided(batch, tag_len, seal, verified, cuda_stream);
  }

 private:
  // One device's lanes, taken in turn.
  struct DeviceLanes {
    int device = 0;
    std::vector<HostLane> lanes;
    size_t next = 0;
  };

  // Host memory a group's kernels reach by copies straight from or to it:
  // the messages' ranges of one direction (read by the kernels, or written),
  // merged where they touch, so that a window of chunks is one copy. Each is
  // placed in the lane's device buffer at its host address's offset modulo
  // 16, so the kernels' aligned loads stay aligned.
  class HostRanges {
   public:
    void add(const uint8_t *host, size_t len) { added_.push_back({host, host + len}); }

    // Merges the ranges (merged_ranges) and places them from device offset
    // `at` on; returns the offset past the last.
    size_t place(size_t at) {
      for (const ByteRange &range : merged_ranges(std::move(added_))) {
        at += (reinterpret_cast<uintptr_t>(range.begin) - at) % 16;
        ranges_.push_back({range.begin, range.end, at});
        at += static_cast<size_t>(range.end - range.begin);
      }
      return at;
    }

    // Once placed: where host byte `host` of a range lies in `device`.
    uint8_t *on_device(const uint8_t *host, uint8_t *device) const {
      auto after = std::upper_bound(ranges_.begin(), ranges_.end(), host,
                                    [](const uint8_t *p, const Range &range) { return p < range.begin; });
      const Range &range = *(after - 1);
      return device + range.at + (host - range.begin);
    }

    wc_status upload(uint8_t *device, cudaStream_t stream) const {
      return copy(device, cudaMemcpyHostToDevice, stream);
    }
    wc_status download(uint8_t *device, cudaStream_t stream) const {
      return copy(device, cudaMemcpyDeviceToHost, stream);
    }

   private:
    struct Range {
      const uint8_t *begin;
      const uint8_t *end;
      size_t at;  // its place in the device buffer
    };

    wc_status copy(uint8_t *device, cudaMemcpyKind kind, cudaStream_t stream) const {
      for (const Range &range : ranges_) {
        uint8_t *on = device + range.at;
        const size_t len = static_cast<size_t>(range.end - range.begin);
        auto *host = const_cast<uint8_t *>(range.begin);  // written only by downloads, of written ranges
        const cudaError_t error = kind == cudaMemcpyHostToDevice ? cudaMemcpyAsync(on, host, len, kind, stream)
                                                                 : cudaMemcpyAsync(host, on, len, kind, stream);
        if (error != cudaSuccess) return device_status(error);
      }
      return WC_OK;
    }

    std::vector<ByteRange> added_;
    std::vector<Range> ranges_;  // once placed
  };

  // What a message needs of a lane's device buffer, at most: its input,
  // output and tag, each in a range that may start 15 bytes on, and a
  // verdict. A group's messages together may take the rest but 15 bytes:
  // its verdicts start on 16 bytes, up to 15 bytes after its ranges.
  static size_t lane_bytes(const wc_aead_message &m) { return 2 * m.len + 3 * 15 + kTrailerBytes; }
  static constexpr size_t kGroupBudget = kLaneBytes - 15;
  // A group's verdicts and descriptors fill at most the pinned buffer.
  static constexpr size_t kGroupMessages = (kLanePinnedBytes - 16) / (sizeof(int32_t) + sizeof(AeadMessageJob));

  wc_status run(std::span<const wc_aead_message> messages, size_t tag_len, bool seal, wc_status *results) const {
    std::vector<DeviceLanes> devices;
    wc_status status = list_devices(&devices);
    size_t turn = next_device_.fetch_add(1, std::memory_order_relaxed);
    for (size_t first = 0; first < messages.size() && status == WC_OK;) {
      DeviceLanes &device = devices[turn++ % devices.size()];
      const CurrentDevice on_device(device.device);
      status = on_device.status();
      if (status != WC_OK) break;
      if (lane_bytes(messages[first]) > kGroupBudget) {
        status = run_pieces(device, messages[first], tag_len, seal, results ? results + first : nullptr);
        ++first;
        continue;
      }
      size_t end = first;
      size_t bytes = 0;
      while (end < messages.size() && lane_bytes(messages[end]) <= kGroupBudget - bytes &&
             end - first < kGroupMessages) {
        bytes += lane_bytes(messages[end]);
        ++end;
      }
      HostLane &lane = next_lane_of(device, &status);
      if (status == WC_OK) {
        status = run_group(lane, messages.subspan(first, end - first), tag_len, seal,
                           results ? results + first : nullptr);
      }
      first = end;
    }
    for (DeviceLanes &device : devices) {
      for (HostLane &lane : device.lanes) {
        if (lane.buffers == nullptr) continue;
        const wc_status finished = lane.finish();
        if (status == WC_OK) status = finished;
      }
    }
    if (status == WC_OK && !seal) status = combined_open_status({results, messages.size()});
    return status;
  }

  // The devices of the list, or the caller's current device where the list
  // is empty, their lanes not yet leased.
  wc_status list_devices(std::vector<DeviceLanes> *devices) const {
    std::vector<int> ordinals = devices_;
    if (ordinals.empty()) {
      int current = 0;
      const wc_status status = device_status(cudaGetDevice(&current));
      if (status != WC_OK) return status;
      ordinals.push_back(current);
    }
    for (int ordinal : ordinals) devices->emplace_back().device = ordinal;
    return WC_OK;
  }

  // The device's next lane in turn, once its stream has passed its earlier
  // work and the host has collected that work's results. Up to
  // kAeadHostLanes lanes on the device, each leased when work first goes to
  // it: a call of one group leases one lane on one device.
  static HostLane &next_lane_of(DeviceLanes &device, wc_status *status) {
    if (device.lanes.empty()) device.lanes.resize(tuning::kAeadHostLanes);
    HostLane &lane = device.lanes[device.next++ % device.lanes.size()];
    if (*status != WC_OK) return lane;
    *status = lane.buffers == nullptr
                  ? LeasedBuffers::acquire(&lane.buffers, device.device, kLaneBytes, kLanePinnedBytes)
                  : lane.finish();
    return lane;
  }

  // A group's ranges go to the device and back as they are. The lane's
  // pinned buffer holds only an opening's verdicts, coming back, and the
  // messages' descriptors, going up.
  wc_status run_group(HostLane &lane, std::span<const wc_aead_message> messages, size_t tag_len, bool seal,
                      wc_status *results) const {
    LeasedBuffers &buffers = *lane.buffers;
    HostRanges reads, writes;
    for (const wc_aead_message &m : messages) {
      reads.add(m.in, m.len);
      writes.add(m.out, m.len);
      (seal ? writes : reads).add(m.tag, tag_len);
    }
    const size_t verdicts_at = round_up16(writes.place(reads.place(0)));
    const size_t verdict_bytes = seal ? 0 : sizeof(int32_t) * messages.size();
    const size_t descriptors_at = round_up16(verdict_bytes);
    buffers.mark_device_used(verdicts_at + verdict_bytes);
    buffers.mark_pinned_used(kLanePinnedBytes);
    uint8_t *device = buffers.device();
    std::vector<wc_aead_message> on_device(messages.begin(), messages.end());
    for (wc_aead_message &m : on_device) {
      m.in = m.len != 0 ? reads.on_device(m.in, device) : device;
      m.out = m.len != 0 ? writes.on_device(m.out, device) : device;
      m.tag = (seal ? writes : reads).on_device(m.tag, device);
    }
    cudaStream_t stream = buffers.stream();
    auto *verdicts = reinterpret_cast<int32_t *>(device + verdicts_at);
    wc_status status = reads.upload(device, stream);
    const std::span<uint8_t> descriptors(buffers.pinned() + descriptors_at, kLanePinnedBytes - descriptors_at);
    if (status == WC_OK) {
      status = keyed_->queue(on_device, tag_len, seal, seal ? nullptr : verdicts, stream, descriptors);
    }
    if (status == WC_OK) status = writes.download(device, stream);
    if (status == WC_OK && !seal) {
      status = device_status(
          cudaMemcpyAsync(buffers.pinned(), verdicts, verdict_bytes, cudaMemcpyDeviceToHost, stream));
    }
    if (status != WC_OK || seal) return status;
    lane.collect = [count = messages.size(), pinned = buffers.pinned(), results] {
      for (size_t i = 0; i < count; ++i) results[i] = verdict(pinned + sizeof(int32_t) * i);
    };
    return WC_OK;
  }

  // A long message's pieces on the device's lanes in turn (the device
  // current).
  wc_status run_pieces(DeviceLanes &device, const wc_aead_message &m, size_t tag_len, bool seal,
                       wc_status *result) const {
    std::unique_ptr<MessagePieces> pieces;
    wc_status status = MessagePieces::make(&pieces, *keyed_, m, tag_len, seal);
    for (size_t k = 0; status == WC_OK && k < pieces->cuts().size(); ++k) {
      HostLane &lane = next_lane_of(device, &status);
      const uint64_t at = pieces->cuts()[k];
      if (status == WC_OK) status = pieces->queue(lane, k, m.in + at, m.out + at, result, device.lanes);
    }
    return status;
  }

  std::unique_ptr<KeyedGpuAead> keyed_;
  std::vector<int> devices_;
  mutable std::atomic<size_t> next_device_{0};  // where the next call starts
};

wc_status make_keyed(std::unique_ptr<KeyedGpuAead> *out, const wc_aead &aead, std::span<const uint8_t> key) {
  auto keyed = std::make_unique<KeyedGpuAead>(aead, key);
  const wc_status status = keyed->prepare();
  if (status == WC_OK) *out = std::move(keyed);
  return status;
}

}  // namespace

wc_status make_aead(std::unique_ptr<AeadCipher> *out, const wc_aead &aead, std::span<const uint8_t> key,
                    std::span<const int> devices) {
  if (device_count() == 0) return WC_ERR_NO_DEVICE;
  std::unique_ptr<KeyedGpuAead> keyed;
  const wc_status status = make_keyed(&keyed, aead, key);
  if (status == WC_OK) {
    *out = std::make_unique<GpuAead>(std::move(keyed), std::vector<int>(devices.begin(), devices.end()));
  }
  return status;
}

}  // namespace warpcrypt::cuda

