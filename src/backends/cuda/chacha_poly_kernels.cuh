// ChaCha20-Poly1305's schemes for the AEAD kernels (aead_kernels.cuh):
// ChaChaPolyBulk and ChaChaPolyFinish, and short messages' ChaChaPolyEach.
#pragma once

#include "backends/cuda/aead_kernels.cuh"

namespace warpcrypt::cuda {

// ---- ChaCha20-Poly1305 ---------------------------------------------------

// The key with a message's nonce: RFC 8439 puts the 32-bit block counter in
// word 12 and the nonce in words 13-15; ArxKey's 64-bit counter spans words
// 12-13, so the first nonce word rides in its high half.
__device__ inline ArxKey chacha_message_key(const ArxKey &key, const uint32_t (&nonce)[4], uint32_t first_block) {
  ArxKey k = key;
  k.counter = uint64_t{nonce[0]} << 32 | first_block;
  k.nonce[0] = nonce[1];
  k.nonce[1] = nonce[2];
  return k;
}

// Block 0 of the keystream is the one-time Poly1305 key: r (clamped), s.
__device__ inline void poly1305_key(const ArxKey &key, const uint32_t (&nonce)[4], Poly *r, uint4 *s) {
  uint32_t block[16];
  arx_keystream<ChaCha20Block>(chacha_message_key(key, nonce, 0), 0, block);
  *r = poly_clamped_r(make_uint4(block[0], block[1], block[2], block[3]));
  *s = make_uint4(block[4], block[5], block[6], block[7]);
}

// base^exponent from powers[i] = base^(2^i).
__device__ inline Poly poly_power(const Poly *powers, uint32_t exponent) {
  Poly result = Poly1305Field::one();
  for (int i = 0; exponent != 0; ++i, exponent >>= 1) {
    if (exponent & 1) result = poly_multiply(result, powers[i]);
  }
  return result;
}

// r is per message, so so are all its powers: a block derives them once,
// thread 0 squaring into shared memory, each thread then raising its own
// factors from them. base[i] = B^(2^i) for i up to log2(kMaxExponent).
template <uint64_t kMaxExponent>
struct PolyPowers {
  static_assert((kMaxExponent & (kMaxExponent - 1)) == 0, "a power of two, reached by squarings alone");
  static constexpr int kBits = log2_exact(kMaxExponent) + 1;
  static constexpr int kMaxBit = kBits - 1;  // base[kMaxBit] = B^kMaxExponent
  Poly r;
  Poly base[kBits];

  // Thread 0 only: fills base[] from base[0].
  __device__ void square_up() {
    for (int i = 1; i < kBits; ++i) base[i] = poly_multiply(base[i - 1], base[i - 1]);
  }
  __device__ Poly power(uint64_t exponent) const { return poly_power(base, static_cast<uint32_t>(exponent)); }
};

__device__ inline Poly poly_fourth_power(const Poly &r) {
  const Poly square = poly_multiply(r, r);
  return poly_multiply(square, square);
}

// RFC 8439 2.8: le64(len(AAD)) || le64(len(ciphertext)), a full block.
__device__ inline Poly chacha_poly_lengths(uint64_t aad_len, uint64_t len) {
  return poly_from_block(make_uint4(static_cast<uint32_t>(aad_len), static_cast<uint32_t>(aad_len >> 32),
                                    static_cast<uint32_t>(len), static_cast<uint32_t>(len >> 32)),
                         1);
}

struct ChaChaPolyKey {
  ArxKey arx;  // key words and constants; nonce and counter come per message
};

// The bulk kernel's Poly1305 constants are computed once per CTA into
// shared memory. Threads hold in registers only those every block uses:
// a ChaCha20 block in flight with its data takes most of a thread's
// registers, and every register more costs the SM resident warps, which
// this latency-bound kernel needs.
template <uint64_t kMaxExponent>
struct ChaChaPolyConstants {
  PolyPowers<kMaxExponent> powers;  // of L = r^4; the tile step L^kMaxExponent is the last
  Poly r_squared;
  Poly r_cubed;
  Poly initial;  // the state after the associated data
};

template <int kThreads, int kBlocksPerThread>
struct ChaChaPolyBulk {
  static constexpr BulkWork kWork = BulkWork::both;
  static constexpr int kBlockBytes = 64;
  static constexpr int kHashBlocks = 4;
  using Constants = ChaChaPolyConstants<uint64_t{kBlocksPerThread} * kThreads>;
  using Powers = decltype(Constants::powers);
  static constexpr size_t kTableBytes = sizeof(Constants);
  using Field = Poly1305Field;
  using Key = ChaChaPolyKey;
  using Chains = FoldedChains<Poly1305Field, kBlocksPerThread>;

  ArxKey message_key;
  const Constants *constants;
  Poly r;
  Poly r_squared;
  Poly r_cubed;
  Poly tile_step;

  __device__ ChaChaPolyBulk(const Key &key, const AeadMessageJob &message, uint32_t *shared)
      : message_key(chacha_message_key(key.arx, message.nonce, 1)),
        constants(reinterpret_cast<const Constants *>(shared)) {
    if (threadIdx.x == 0) {
      auto &c = *reinterpret_cast<Constants *>(shared);
      uint4 s;
      poly1305_key(key.arx, message.nonce, &c.powers.r, &s);
      c.r_squared = poly_multiply(c.powers.r, c.powers.r);
      c.r_cubed = poly_multiply(c.r_squared, c.powers.r);
      // L = r^4: one keystream block holds four authenticator blocks.
      c.powers.base[0] = poly_multiply(c.r_cubed, c.powers.r);
      c.powers.square_up();
      c.initial = Poly1305Field::load(message.initial);
    }
    __syncthreads();
    r = constants->powers.r;
    r_squared = constants->r_squared;
    r_cubed = constants->r_cubed;
    tile_step = constants->powers.base[Powers::kMaxBit];
  }
  __device__ void begin_tile(uint64_t) const {}  // the keystream is a function of the block alone
  __device__ void keystream(uint64_t q, uint32_t out[16]) const { arx_keystream<ChaCha20Block>(message_key, q, out); }
  // The keystream block's four authenticator blocks weighed from its end,
  // m0 r^3 + m1 r^2 + m2 r + m3, summed before one reduction; the message's
  // first block carries the AAD state.
  __device__ PolyWide weighed(const uint4 (&text)[4], bool first) const {
    Poly m0 = poly_from_block(text[0], 1);
    if (first) m0 = poly_add(m0, constants->initial);
    const PolyWide high = poly_add(poly_products(m0, r_cubed), poly_products(poly_from_block(text[1], 1), r_squared));
    return poly_add(poly_add(high, poly_products(poly_from_block(text[2], 1), r)), poly_from_block(text[3], 1));
  }
  __device__ Poly group(const uint4 (&text)[4], bool first) const { return poly_reduce(weighed(text, first)); }
  __device__ Poly fold(const Poly &chain, const uint4 (&text)[4], bool first) const {
    return poly_reduce(poly_add(poly_products(chain, tile_step), weighed(text, first)));
  }
  __device__ Poly join(const Poly &value) const { return poly_multiply(value, constants->powers.power(kThreads)); }
  __device__ Poly lane_factor() const { return constants->powers.power(lane_exponent(threadIdx.x)); }
  __device__ Poly warp_factor() const { return constants->powers.power(warp_exponent<kThreads>(threadIdx.x)); }
};

template <int kThreads, uint64_t kSegmentBlocks>
struct ChaChaPolyFinish {
  static_assert((kSegmentBlocks & (kSegmentBlocks - 1)) == 0, "N comes from squarings alone");
  static constexpr int kCtaThreads = kThreads;  // the finish kernel's CTA
  static constexpr int kBlockBytes = 64;
  using Powers = PolyPowers<kThreads>;  // of N = r^(4 kSegmentBlocks)
  static constexpr size_t kTableBytes = sizeof(Powers);
  using Field = Poly1305Field;
  using Key = ChaChaPolyKey;

  ArxKey message_key;
  Poly r;
  uint4 s;
  Poly stride;  // N^kThreads
  Poly lane;
  Poly warp;

  __device__ ChaChaPolyFinish(const Key &key, const AeadMessageJob &message, uint32_t *shared)
      : message_key(chacha_message_key(key.arx, message.nonce, 1)) {
    auto &powers = *reinterpret_cast<Powers *>(shared);
    if (threadIdx.x == 0) {
      poly1305_key(key.arx, message.nonce, &powers.r, &s);
      Poly n = poly_fourth_power(powers.r);
      for (uint64_t e = 1; e < kSegmentBlocks; e *= 2) n = poly_multiply(n, n);
      powers.base[0] = n;
      powers.square_up();
    }
    __syncthreads();
    r = powers.r;
    stride = powers.power(kThreads);
    lane = powers.power(lane_exponent(threadIdx.x));
    warp = powers.power(warp_exponent<kThreads>(threadIdx.x));
  }
  __device__ void keystream(uint64_t q, uint32_t out[16]) const { arx_keystream<ChaCha20Block>(message_key, q, out); }
  __device__ Poly times_key(const Poly &a) const { return poly_multiply(a, r); }
  __device__ Poly step(const Poly &acc) const { return poly_multiply(acc, stride); }
  __device__ Poly lane_factor() const { return lane; }
  __device__ Poly warp_factor() const { return warp; }
  __device__ static Poly lengths(uint64_t aad_len, uint64_t len) { return chacha_poly_lengths(aad_len, len); }
  __device__ uint4 tag(const Poly &hash) const { return poly_tag(hash, s); }
};


struct ChaChaPolyEach {
  static constexpr int kBlockBytes = 64;
  static constexpr size_t kTableBytes = 0;
  using Field = Poly1305Field;
  using Key = ChaChaPolyKey;

  const Key *key;
  ArxKey message_key{};
  Poly r{};
  uint4 s{};

  __device__ ChaChaPolyEach(const Key &k, uint32_t *) : key(&k) {}
  __device__ void begin_keystream(const AeadMessageJob &message) {
    message_key = chacha_message_key(key->arx, message.nonce, 1);
  }
  // The tag pass needs no keystream but block 0, the Poly1305 key.
  __device__ Poly begin(const AeadMessageJob &message) {
    poly1305_key(key->arx, message.nonce, &r, &s);
    return Poly1305Field::load(message.initial);
  }
  __device__ void keystream(uint64_t q, uint32_t out[16]) const { arx_keystream<ChaCha20Block>(message_key, q, out); }
  __device__ Poly times_key(const Poly &a) const { return poly_multiply(a, r); }
  __device__ static Poly lengths(uint64_t aad_len, uint64_t len) { return chacha_poly_lengths(aad_len, len); }
  __device__ uint4 tag(const Poly &hash) const { return poly_tag(hash, s); }
};

}  // namespace warpcrypt::cuda
