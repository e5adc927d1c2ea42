// AES-GCM's schemes for the AEAD kernels (aead_kernels.cuh): the bulk and
// finish passes' GcmBulk and GcmFinish, and short messages' GcmEach with
// its tag pass on the tensor cores.
#pragma once

#include "backends/cuda/aead_kernels.cuh"

namespace warpcrypt::cuda {

// ---- GCM -----------------------------------------------------------------

// J0's counter part: GCM increments only its low 32 bits (inc32), so block
// q of the message is encrypted under high || low96 || (j0 + 1 + q mod 2^32).
struct GcmCounter {
  uint64_t high;
  uint64_t low;  // the low 32 bits cleared
  uint32_t j0;

  __device__ explicit GcmCounter(const uint32_t (&nonce)[4])
      : high(uint64_t{nonce[0]} << 32 | nonce[1]), low(uint64_t{nonce[2]} << 32), j0(nonce[3]) {}
  __device__ uint64_t block(uint64_t q) const { return low | static_cast<uint32_t>(j0 + 1 + q); }
  __device__ uint64_t pre_counter() const { return low | j0; }
};

// What GCM's chains step by. Warp chains (gf_mma_absorb; GPUs from sm_80
// on) take kGcmMmaGroups slots of a tile per step (tuning.h), so that one
// packing of the tensor cores' sums serves 32 kGcmMmaGroups blocks. Blocks a
// and b of a chain lie two apart and a slot's group kThreads on from the one
// before, so slot g of a step is weighed by [H^d ; H^(d - 2)], d = kThreads
// (kGcmMmaGroups - g). Thread chains (nibble tables; sm_75, whose tensor
// cores lack the .b1 AND): H^(kBlocksPerThread kThreads) steps each chain,
// H^kThreads joins them.
inline constexpr int kGcmMmaGroups = tuning::kAeadGhashGroupsPerStep;
struct GcmWarpSteps {
  Gf128MmaFragments group[kGcmMmaGroups];
};
struct GcmThreadSteps {
  Gf128Columns tile_step;
  Gf128Columns slot_step;
};

template <int kRounds, int kThreads, bool kTensorCores>
struct GcmBulkKey {
  AesCtrGenerator<TTableAes, kRounds> cipher;  // its IV is unused: counters come from J0
  std::conditional_t<kTensorCores, GcmWarpSteps, GcmThreadSteps> steps;
  // Over H; for warp chains scaled by H^-kThreads, the factor the last step
  // of every chain adds to what the segment's end needs.
  Ladder<GhashField, kThreads> ladder;
};

// The bulk of a GCM message, or one of its passes (`kBulkWork`): warp chains
// run in a pass of their own, the thread chains of GPUs without .b1 tensor
// cores with the keystream.
template <int kRounds, int kThreads, int kBlocksPerThread, bool kTensorCores, BulkWork kBulkWork>
struct GcmBulk {
  static constexpr BulkWork kWork = kBulkWork;
  static constexpr bool kCipher = bulk_keystream(kWork);
  static constexpr bool kHash = bulk_hash(kWork);
  static constexpr int kBlockBytes = 16;
  static constexpr int kHashBlocks = 1;
  // The AES T-table, then the chains' step: the mma fragments, or the tile
  // step's nibble tables; each where the pass needs it.
  static constexpr uint32_t kStepAt = kCipher ? TTableAes::kTableBytes / sizeof(uint32_t) : 0;
  static constexpr size_t kStepWords =
      !kHash ? 0 : kTensorCores ? sizeof(GcmWarpSteps) / sizeof(uint32_t) : size_t{kGf128TableWords};
  static constexpr size_t kTableBytes = kStepAt * sizeof(uint32_t) + kStepWords * sizeof(uint32_t);
  using Field = GhashField;
  using Key = GcmBulkKey<kRounds, kThreads, kTensorCores>;
  using Chains = std::conditional_t<kTensorCores, WarpChains<kBlocksPerThread, kGcmMmaGroups>,
                                    ThreadChains<GhashField, kBlocksPerThread>>;

  const Key *key;
  const uint32_t *step;  // in shared memory
  typename AesCtrGenerator<TTableAes, kRounds>::State state;
  GcmCounter counter;
  Gf128 initial;
  uint4 initial_block;  // the same as memory words, for warp chains

  __device__ GcmBulk(const Key &k, const AeadMessageJob &message, uint32_t *shared)
      : key(&k),
        step(shared + kStepAt),
        counter(message.nonce),
        initial(GhashField::load(message.initial)),
        initial_block(gf_to_block(initial)) {
    for (int i = threadIdx.x; i < static_cast<int>(kStepWords); i += kThreads) {
      if constexpr (kTensorCores) {
        shared[kStepAt + i] = (&k.steps.group[0].word[0][0][0])[i];
      } else {
        shared[kStepAt + i] = gf_table_word(k.steps.tile_step, i);
      }
    }
    if constexpr (kCipher) {
      key->cipher.prepare(state, shared);  // its closing barrier covers the step too
    } else {
      __syncthreads();
    }
  }
  // Before each tile: the warp's blocks are first + k kThreads + lane.
  __device__ void begin_tile(uint64_t first) {
    if constexpr (kCipher) {
      key->cipher.template begin_tile<kThreads, kBlocksPerThread>(
          state, first, [&](uint64_t q) { return Counter128{counter.high, counter.block(q)}; });
    }
  }
  __device__ void keystream(uint64_t q, uint32_t out[4]) { key->cipher.encrypt_counter_in_tile(state, counter.block(q), out); }
  // Warp chains: this lane's block (none before the message), the first
  // block carrying the AAD state; a step's arranged groups.
  __device__ uint4 warp_block(const uint4 (&text)[1], bool present, bool first) const {
    uint4 block = make_uint4(0, 0, 0, 0);
    if (present) block = text[0];
    return first ? block ^ initial_block : block;
  }
  __device__ void absorb_warp(Gf128WarpChains &chains, const uint32_t (&arranged)[kGcmMmaGroups][4]) const {
    gf_mma_absorb(chains, arranged, reinterpret_cast<const Gf128MmaFragments *>(step));
  }
  // Thread chains: the block's value, the first carrying the AAD state.
  __device__ Gf128 group(const uint4 (&text)[1], bool first) const {
    const Gf128 block = gf_from_block(text[0]);
    return first ? gf_add(block, initial) : block;
  }
  __device__ void step_each(Gf128 (&chains)[kBlocksPerThread]) const {
#pragma unroll
    for (int c = 0; c < kBlocksPerThread; ++c) chains[c] = gf_multiply(chains[c], step);
  }
  __device__ Gf128 join(const Gf128 &value) const { return gf_multiply(value, key->steps.slot_step); }
  __device__ Gf128 lane_factor() const { return key->ladder.lane[threadIdx.x % 32]; }
  __device__ Gf128 warp_factor() const { return key->ladder.warp[threadIdx.x / 32]; }
};

// SP 800-38D: [len(A)]_64 || [len(C)]_64, in bits.
__device__ inline Gf128 gcm_lengths(uint64_t aad_len, uint64_t len) {
  return {{static_cast<uint32_t>(aad_len >> 29), static_cast<uint32_t>(aad_len << 3), static_cast<uint32_t>(len >> 29),
           static_cast<uint32_t>(len << 3)}};
}

template <int kRounds, int kThreads>
struct GcmFinishKey {
  AesCtrGenerator<ReferenceAes, kRounds> cipher;  // one block per message: the byte-wise cipher will do
  Gf128 h;
  Gf128Columns stride;                  // N^kThreads, N = H^kSegmentBlocks: the segments' run step
  Ladder<GhashField, kThreads> ladder;  // over N
};

template <int kRounds, int kThreads>
struct GcmFinish {
  static constexpr int kCtaThreads = kThreads;  // the finish kernel's CTA
  static constexpr int kBlockBytes = 16;
  static constexpr size_t kTableBytes = ReferenceAes::shared_bytes(false);
  using Field = GhashField;
  using Key = GcmFinishKey<kRounds, kThreads>;

  const Key *key;
  typename AesCtrGenerator<ReferenceAes, kRounds>::State state;
  GcmCounter counter;

  __device__ GcmFinish(const Key &k, const AeadMessageJob &message, uint32_t *shared)
      : key(&k), counter(message.nonce) {
    key->cipher.prepare(state, shared);
  }
  __device__ void keystream(uint64_t q, uint32_t out[4]) { key->cipher.encrypt_counter(state, counter.high, counter.block(q), out); }
  // Few blocks per message come here: two varying factors will do.
  __device__ Gf128 times_key(const Gf128 &a) const { return gf_multiply(a, key->h); }
  __device__ Gf128 step(const Gf128 &acc) const { return gf_multiply(acc, key->stride); }
  __device__ Gf128 lane_factor() const { return key->ladder.lane[threadIdx.x % 32]; }
  __device__ Gf128 warp_factor() const { return key->ladder.warp[threadIdx.x / 32]; }
  __device__ static Gf128 lengths(uint64_t aad_len, uint64_t len) { return gcm_lengths(aad_len, len); }
  // T = E(K, J0) xor the GHASH value, as memory words.
  __device__ uint4 tag(const Gf128 &hash) {
    uint32_t mask[4];
    key->cipher.encrypt_counter(state, counter.high, counter.pre_counter(), mask);
    const uint4 y = gf_to_block(hash);
    return make_uint4(mask[0] ^ y.x, mask[1] ^ y.y, mask[2] ^ y.z, mask[3] ^ y.w);
  }
};



// GCM's tag pass hashes on the tensor cores where the bulk does (sm_80 on):
// a warp takes 16 messages at once, one per chain (aead_each_gcm_tag_kernel),
// each step four consecutive blocks of every message in two groups of two,
// weighed [H^4 ; H^3] and [H^2 ; H]. Two groups keep the fragments at the
// nibble tables' 8 KiB, so the pass still holds three CTAs per SM beside
// the T-table the tags' E(K, J0) needs.
inline constexpr int kGcmEachGroups = 2;
struct GcmEachWarpSteps {
  Gf128MmaFragments group[kGcmEachGroups];
  GfHoleFactor h;  // the lengths block's product, once per message
};

template <int kRounds, bool kTensorCores>
struct GcmEachKey {
  AesCtrGenerator<TTableAes, kRounds> cipher;  // its IV is unused: counters come from J0
  std::conditional_t<kTensorCores, GcmEachWarpSteps, Gf128Columns> h;
};

template <int kRounds, bool kTensorCores>
struct GcmEach {
  static constexpr int kBlockBytes = 16;
  // The AES T-table, then H's nibble tables (conflict-free, see gf128) or
  // the warp steps' fragments, 8 KiB either way.
  static constexpr uint32_t kHashTableAt = TTableAes::kTableBytes / sizeof(uint32_t);
  static constexpr size_t kHashWords = kTensorCores ? sizeof(Gf128MmaFragments) * kGcmEachGroups / sizeof(uint32_t)
                                                    : size_t{kGf128TableWords};
  static_assert(kHashWords == kGf128TableWords, "the fragments take the tables' place");
  static constexpr size_t kTableBytes = TTableAes::kTableBytes + kHashWords * sizeof(uint32_t);
  using Field = GhashField;
  using Key = GcmEachKey<kRounds, kTensorCores>;

  const Key *key;
  const uint32_t *hash_table;
  typename AesCtrGenerator<TTableAes, kRounds>::State state;
  GcmCounter counter{{0, 0, 0, 0}};

  // Every thread of the CTA: loads the tables, ending with a barrier.
  __device__ GcmEach(const Key &k, uint32_t *shared) : key(&k), hash_table(shared + kHashTableAt) {
    for (int i = threadIdx.x; i < static_cast<int>(kHashWords); i += blockDim.x) {
      if constexpr (kTensorCores) {
        shared[kHashTableAt + i] = (&k.h.group[0].word[0][0][0])[i];
      } else {
        shared[kHashTableAt + i] = gf_table_word(k.h, i);
      }
    }
    key->cipher.prepare(state, shared);
  }
  __device__ const Gf128MmaFragments *fragments() const {
    return reinterpret_cast<const Gf128MmaFragments *>(hash_table);
  }
  __device__ void begin_keystream(const AeadMessageJob &message) { counter = GcmCounter(message.nonce); }
  __device__ Gf128 begin(const AeadMessageJob &message) {
    begin_keystream(message);
    return GhashField::load(message.initial);
  }
  __device__ void keystream(uint64_t q, uint32_t out[4]) { key->cipher.encrypt_counter(state, counter.high, counter.block(q), out); }
  __device__ Gf128 times_key(const Gf128 &a) const {
    if constexpr (kTensorCores) {
      return gf_multiply(a, key->h.h);
    } else {
      return gf_multiply(a, hash_table);
    }
  }
  __device__ static Gf128 lengths(uint64_t aad_len, uint64_t len) { return gcm_lengths(aad_len, len); }
  __device__ uint4 tag(const Gf128 &hash) {
    uint32_t mask[4];
    key->cipher.encrypt_counter(state, counter.high, counter.pre_counter(), mask);
    const uint4 y = gf_to_block(hash);
    return make_uint4(mask[0] ^ y.x, mask[1] ^ y.y, mask[2] ^ y.z, mask[3] ^ y.w);
  }
};

// Block `index` of `len` bytes of text, the last one zero-padded.
__device__ __forceinline__ uint4 text_block(const uint8_t *text, uint64_t len, uint64_t index, bool aligned) {
  const uint64_t at = index * 16;
  if (len - at >= 16) return load_block(text + at, aligned);
  uint8_t last[16] = {};
  for (uint64_t i = at; i < len; ++i) last[i - at] = text[i];
  return load_block(last, false);
}

// GCM's tag pass on the tensor cores (GcmEachKey): the warp's 16 messages of
// a turn end together, so a message shorter than the warp's longest starts
// with zero blocks, which add nothing to its chain while it is still zero;
// the AAD state joins the message's first block. Lane 4q + i takes message
// q + 8 (i % 2), block a of each group where i < 2, block b where i >= 2
// (gf_mma_arrange's layout), and lanes 4q and 4q + 1 end with their
// message's GHASH, which they finish as the serial pass does.
template <int kRounds, int kThreads, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    aead_each_gcm_tag_kernel(const __grid_constant__ GcmEachKey<kRounds, true> key,
                             const __grid_constant__ AeadLaunch launch) {
  constexpr uint32_t kMessagesPerWarp = 16;
  constexpr uint64_t kStepBlocks = 2 * kGcmEachGroups;
  constexpr uint64_t kWarps = kThreads / 32;
  extern __shared__ uint32_t shared[];
  GcmEach<kRounds, true> scheme(key, shared);
  const int lane = threadIdx.x % 32;
  const uint32_t chain = lane / 4 + 8 * (lane % 2);
  const int role = lane % 4 / 2;  // block a or b of each group
  for (uint64_t first = (uint64_t{blockIdx.x} * kWarps + threadIdx.x / 32) * kMessagesPerWarp;
       first < launch.message_count; first += uint64_t{gridDim.x} * kWarps * kMessagesPerWarp) {
    const bool present = first + chain < launch.message_count;
    const AeadMessageJob message = present ? launch.message(static_cast<uint32_t>(first + chain)) : AeadMessageJob{};
    // The ciphertext: the keystream pass's output when sealing, the input
    // when opening.
    const uint8_t *ciphertext = launch.seal ? message.out : message.in;
    const uint64_t blocks = (message.len + 15) / 16;
    uint32_t steps = static_cast<uint32_t>((blocks + kStepBlocks - 1) / kStepBlocks);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) steps = max(steps, __shfl_xor_sync(0xffffffffu, steps, offset));
    const Gf128 initial = GhashField::load(message.initial);
    const uint4 initial_block = gf_to_block(initial);
    const int64_t lead = int64_t{steps} * kStepBlocks - static_cast<int64_t>(blocks);
    Gf128WarpChains chains;
    for (uint32_t step = 0; step < steps; ++step) {
      uint32_t arranged[kGcmEachGroups][4];
#pragma unroll
      for (int g = 0; g < kGcmEachGroups; ++g) {
        const int64_t index = int64_t{step} * kStepBlocks + 2 * g + role - lead;
        uint4 block = make_uint4(0, 0, 0, 0);
        if (index >= 0) block = text_block(ciphertext, message.len, static_cast<uint64_t>(index), message.aligned);
        if (index == 0) block = block ^ initial_block;
        gf_mma_arrange(block, arranged[g]);
      }
      gf_mma_absorb(chains, arranged, scheme.fragments());
    }
    const Gf128 hash = gf_mma_chain_value(chains);
    if (present && lane % 4 < 2) {
      scheme.begin(message);
      finish_tag(scheme, message, launch, blocks != 0 ? hash : initial);
    }
  }
}

}  // namespace warpcrypt::cuda
