// Keying the AEAD kernels, preparing messages on the host, and queueing a
// batch's launches (aead_keyed.cuh).
#include "backends/cuda/aead_keyed.cuh"

#include <openssl/evp.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace warpcrypt::cuda {
namespace {

using namespace aead_shape;

constexpr int kDescribeThreads = 256;  // the strided batch's descriptors: a load and a store each

// A strided batch's descriptors, written on the device for the kernels of
// long messages, which find a segment's message among them.
__global__ void describe_strided_kernel(const __grid_constant__ StridedBatch batch, AeadMessageJob *jobs) {
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < batch.count;
       i += uint64_t{gridDim.x} * blockDim.x) {
    jobs[i] = batch.message(i);
  }
}

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

// GCM's bulk GHASH runs on the tensor cores where the device has them,
// unless the environment says WARPCRYPT_GPU_GHASH=tables: then through the
// nibble tables GPUs before sm_80 use, so that tests and benchmarks can
// check and time that path on any GPU. Read at each keying, as
// WARPCRYPT_GPU_KERNELS is.
bool ghash_tables_requested() {
  const char *ghash = std::getenv("WARPCRYPT_GPU_GHASH");
  return ghash != nullptr && std::strcmp(ghash, "tables") == 0;
}

const char *ctr_cipher_name(size_t key_len) {
  return key_len == 16 ? "aes-128-ctr" : key_len == 24 ? "aes-192-ctr" : "aes-256-ctr";
}
const char *ecb_cipher_name(size_t key_len) {
  return key_len == 16 ? "AES-128-ECB" : key_len == 24 ? "AES-192-ECB" : "AES-256-ECB";
}

}  // namespace

// ---- Keys ----------------------------------------------------------------

wc_status KeyedGpuAead::make(std::unique_ptr<KeyedGpuAead> *out, const wc_aead &aead, std::span<const uint8_t> key) {
  std::unique_ptr<KeyedGpuAead> keyed(new KeyedGpuAead(aead, key));
  const wc_status status = keyed->prepare();
  if (status == WC_OK) *out = std::move(keyed);
  return status;
}

KeyedGpuAead::~KeyedGpuAead() {
  if (gcm_) secure_wipe(gcm_.get(), sizeof *gcm_);
  secure_wipe(&arx_, sizeof arx_);
}

wc_status KeyedGpuAead::prepare() {
  const uint8_t zeros[16] = {};
  if (!gcm()) {
    const KeyedGpuCipher chacha(*find_cipher("chacha20"), WC_ENCRYPT, KeyMaterial{key(), {zeros, 16}},
                                Implementation::optimized);
    arx_ = chacha.arx;
    return WC_OK;
  }
  gcm_ = std::make_unique<GcmConstants>();
  tensor_ghash_ = !ghash_tables_requested();
  const KeyedGpuCipher aes(*find_cipher(ctr_cipher_name(aead_.key_len)), WC_ENCRYPT, KeyMaterial{key(), {zeros, 16}},
                           Implementation::optimized);
  gcm_->keys = aes.encrypt_keys;
  uint8_t h_bytes[16];
  if (!host_keystream(ecb_cipher_name(aead_.key_len), key(), nullptr, h_bytes, 16)) return WC_ERR_CRYPTO_LIBRARY;
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

// ---- Messages --------------------------------------------------------------

wc_status KeyedGpuAead::prepare_job(AeadMessageJob *job, const wc_aead_message &m, int32_t *verified) const {
  *job = AeadMessageJob{m.in, m.out, m.tag, verified, m.len, m.aad_len, 0, 0, {}, {},
                        reinterpret_cast<uintptr_t>(m.in) % 16 == 0 && reinterpret_cast<uintptr_t>(m.out) % 16 == 0};
  return gcm() ? prepare_gcm(*job, m) : prepare_chacha(*job, m);
}

// SP 800-38D 7.1: J0 = IV || 0^31 || 1 for 96-bit IVs, otherwise
// GHASH(IV || 0-padding || [len(IV)]_64 in bits); the AAD's GHASH state.
wc_status KeyedGpuAead::prepare_gcm(AeadMessageJob &job, const wc_aead_message &m) const {
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
wc_status KeyedGpuAead::prepare_chacha(AeadMessageJob &job, const wc_aead_message &m) const {
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

// ---- Batches -----------------------------------------------------------------

wc_status KeyedGpuAead::queue(std::span<const wc_aead_message> messages, size_t tag_len, bool seal,
                              int32_t *verified, cudaStream_t stream, std::span<uint8_t> pinned) const {
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

wc_status KeyedGpuAead::queue_strided(const wc_aead_strided &batch, size_t tag_len, bool seal, int32_t *verified,
                                      cudaStream_t stream) const {
  const DeviceContext *context = current_device_context();
  if (context == nullptr) return WC_ERR_NO_DEVICE;
  const bool each = batch.len <= tuning::kAeadEachMaxBytes;
  const uint64_t per_message = each ? 0 : segment_count(batch.len);
  const StridedBatch strided{batch.in,     batch.out,          batch.len,  batch.stride,
                             batch.nonces, batch.nonce_stride, batch.tags, batch.tag_stride,
                             verified,     batch.count,        per_message,
                             gcm()};
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

wc_status KeyedGpuAead::queue_kernels(const AeadLaunch &launch, uint64_t bulk_segments, bool finish,
                                      cudaStream_t stream) const {
  if (!gcm()) return launch_chacha(launch, bulk_segments, finish, stream);
  const DeviceContext *context = current_device_context();
  if (context == nullptr) return WC_ERR_NO_DEVICE;
  return launch_gcm(*context, launch, bulk_segments, finish, stream);
}

wc_status KeyedGpuAead::queue_each(AeadLaunch launch, uint64_t longest, cudaStream_t stream) const {
  const DeviceContext *context = current_device_context();
  if (context == nullptr) return WC_ERR_NO_DEVICE;
  launch.each_items = static_cast<uint32_t>(
      std::max<uint64_t>(1, (longest + tuning::kAeadEachItemBytes - 1) / tuning::kAeadEachItemBytes));
  return gcm() ? queue_gcm_each(*context, launch, stream) : queue_chacha_each(*context, launch, stream);
}

wc_status allow_dynamic_shared(const void *kernel, size_t bytes) {
  constexpr size_t kDefaultLimit = 48 * 1024;
  if (bytes <= kDefaultLimit) return WC_OK;
  static std::mutex mutex;
  static std::map<std::pair<int, const void *>, bool> allowed;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return device_status(cudaErrorInvalidDevice);
  const std::lock_guard lock(mutex);
  bool &done = allowed[{device, kernel}];
  if (!done) {
    wc_status status = device_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    if (status == WC_OK) {
      status = device_status(
          cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    }
    if (status != WC_OK) return status;
    done = true;
  }
  return WC_OK;
}

}  // namespace warpcrypt::cuda
