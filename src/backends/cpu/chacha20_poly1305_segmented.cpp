#include "backends/cpu/chacha20_poly1305_segmented.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <vector>

#include "backends/cpu/evp_cipher.h"
#include "backends/cpu/message_segments.h"
#include "core/thread_pool.h"

namespace warpcrypt::cpu {
namespace {

// --- Poly1305 arithmetic mod p = 2^130 - 5 ----------------------------------

constexpr uint64_t kMask44 = (uint64_t{1} << 44) - 1;
constexpr uint64_t kMask42 = (uint64_t{1} << 42) - 1;
__extension__ typedef unsigned __int128 u128;  // a 64x64-bit product

uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// A residue mod p in limbs of 44, 44 and 42 bits. Between reductions a limb
// may run a few bits over its width; every product below stays far inside
// 128 bits for limbs under 2^46, so no step needs a data-dependent branch.
struct FieldElement {
  uint64_t limb[3] = {0, 0, 0};
};

// 128 bits (two little-endian words) as a field element, plus `high` times
// 2^128 (Poly1305's marker bit for a whole block, 0 otherwise).
FieldElement from_words(uint64_t lo, uint64_t hi, uint64_t high) {
  return {{lo & kMask44, ((lo >> 44) | (hi << 20)) & kMask44, ((hi >> 24) & kMask42) | (high << 40)}};
}

FieldElement add(const FieldElement &a, const FieldElement &b) {
  return {{a.limb[0] + b.limb[0], a.limb[1] + b.limb[1], a.limb[2] + b.limb[2]}};
}

// A product a·b before reduction: limb sums at 2^0, 2^44 and 2^88, each
// under 2^94 for the limb bounds above, so four such sums still fit in 128
// bits. 2^132 = 4·2^130 ≡ 20, so a limb product that lands at 2^132 or
// above folds back times 20.
struct WideProduct {
  u128 d0, d1, d2;
};

WideProduct product(const FieldElement &a, const FieldElement &b) {
  const uint64_t b1_folded = b.limb[1] * 20;
  const uint64_t b2_folded = b.limb[2] * 20;
  return {u128{a.limb[0]} * b.limb[0] + u128{a.limb[1]} * b2_folded + u128{a.limb[2]} * b1_folded,
          u128{a.limb[0]} * b.limb[1] + u128{a.limb[1]} * b.limb[0] + u128{a.limb[2]} * b2_folded,
          u128{a.limb[0]} * b.limb[2] + u128{a.limb[1]} * b.limb[1] + u128{a.limb[2]} * b.limb[0]};
}

WideProduct operator+(const WideProduct &a, const WideProduct &b) { return {a.d0 + b.d0, a.d1 + b.d1, a.d2 + b.d2}; }

// Back to limbs, partly reduced (the second limb may exceed 44 bits by a
// few units).
FieldElement reduce(WideProduct d) {
  FieldElement r;
  d.d1 += static_cast<uint64_t>(d.d0 >> 44);
  r.limb[0] = static_cast<uint64_t>(d.d0) & kMask44;
  d.d2 += static_cast<uint64_t>(d.d1 >> 44);
  r.limb[1] = static_cast<uint64_t>(d.d1) & kMask44;
  const uint64_t over = static_cast<uint64_t>(d.d2 >> 42);  // 2^130 ≡ 5
  r.limb[2] = static_cast<uint64_t>(d.d2) & kMask42;
  r.limb[0] += over * 5;
  r.limb[1] += r.limb[0] >> 44;
  r.limb[0] &= kMask44;
  return r;
}

FieldElement multiply(const FieldElement &a, const FieldElement &b) { return reduce(product(a, b)); }

// r^k for k >= 1 by square-and-multiply; k is a block count, not a secret.
FieldElement power(const FieldElement &r, size_t k) {
  FieldElement result = r;
  for (int bit = 62 - __builtin_clzll(static_cast<unsigned long long>(k)); bit >= 0; --bit) {
    result = multiply(result, result);
    if ((k >> bit) & 1) result = multiply(result, r);
  }
  return result;
}

// The one-time key's r (clamped as RFC 8439 §2.5 says), its powers up to
// r^4 for hashing four blocks a step, and s.
struct OneTimeKey {
  FieldElement r;
  FieldElement r_powers[4];  // r, r^2, r^3, r^4
  uint64_t s[2];

  explicit OneTimeKey(const uint8_t key[kPoly1305KeyLen])
      : r(from_words(load_le64(key) & 0x0ffffffc0fffffff, load_le64(key + 8) & 0x0ffffffc0ffffffc, 0)),
        s{load_le64(key + 16), load_le64(key + 24)} {
    r_powers[0] = r;
    for (int k = 1; k < 4; ++k) r_powers[k] = multiply(r_powers[k - 1], r);
  }
  ~OneTimeKey() { secure_wipe(this, sizeof *this); }
  OneTimeKey(const OneTimeKey &) = delete;
  OneTimeKey &operator=(const OneTimeKey &) = delete;
};

// A whole 16-byte block with Poly1305's 2^128 marker.
FieldElement whole_block(const uint8_t *block) { return from_words(load_le64(block), load_le64(block + 8), 1); }

// h = (h + block)·r for each whole block. Four blocks a step as
// (h + b1)·r^4 + b2·r^3 + b3·r^2 + b4·r, the same sum with four independent
// products and one reduction, so the multiplier is not waiting on the
// previous block's carries.
// The loop works on local copies: through the references the compiler
// would have to assume the stores to h change the powers.
void absorb_blocks(FieldElement &h, const OneTimeKey &key, const uint8_t *blocks, size_t count) {
  FieldElement acc = h;
  FieldElement r[4];
  std::copy(std::begin(key.r_powers), std::end(key.r_powers), r);
  for (; count >= 4; count -= 4, blocks += 64) {
    acc = reduce(product(add(acc, whole_block(blocks)), r[3]) + product(whole_block(blocks + 16), r[2]) +
                 product(whole_block(blocks + 32), r[1]) + product(whole_block(blocks + 48), r[0]));
  }
  for (; count > 0; --count, blocks += 16) acc = multiply(add(acc, whole_block(blocks)), r[0]);
  h = acc;
  secure_wipe(r, sizeof r);
  secure_wipe(&acc, sizeof acc);
}

// RFC 8439 §2.8's padded input: whole blocks, and a partial last one
// zero-filled to 16 bytes and hashed as a whole block.
void absorb_padded(FieldElement &h, const OneTimeKey &key, const uint8_t *bytes, size_t len) {
  absorb_blocks(h, key, bytes, len / 16);
  if (len % 16 == 0) return;
  uint8_t last[16] = {};
  std::memcpy(last, bytes + len / 16 * 16, len % 16);
  absorb_blocks(h, key, last, 1);
  secure_wipe(last, sizeof last);
}

// (h mod p) + s mod 2^128. h is reduced fully with masks, not a
// comparison, so the time does not depend on whether h >= p.
void finish_tag(FieldElement h, const uint64_t s[2], uint8_t tag[kPoly1305TagLen]) {
  for (int pass = 0; pass < 2; ++pass) {
    h.limb[2] += h.limb[1] >> 44;
    h.limb[1] &= kMask44;
    h.limb[0] += (h.limb[2] >> 42) * 5;
    h.limb[2] &= kMask42;
    h.limb[1] += h.limb[0] >> 44;
    h.limb[0] &= kMask44;
  }
  // Now h < 2^130 + small; g = h + 5 - 2^130 is h - p, which is the residue
  // exactly when it does not borrow.
  uint64_t g0 = h.limb[0] + 5;
  uint64_t g1 = h.limb[1] + (g0 >> 44);
  g0 &= kMask44;
  const uint64_t g2 = h.limb[2] + (g1 >> 44) - (uint64_t{1} << 42);
  g1 &= kMask44;
  const uint64_t use_g = (g2 >> 63) - 1;  // all ones unless g2 went negative
  const uint64_t h0 = (h.limb[0] & ~use_g) | (g0 & use_g);
  const uint64_t h1 = (h.limb[1] & ~use_g) | (g1 & use_g);
  const uint64_t h2 = (h.limb[2] & ~use_g) | (g2 & use_g & kMask42);
  const u128 sum = ((u128{h0 | (h1 << 44)}) | (u128{(h1 >> 20) | (h2 << 24)} << 64)) + ((u128{s[1]} << 64) | s[0]);
  store_le64(tag, static_cast<uint64_t>(sum));
  store_le64(tag + 8, static_cast<uint64_t>(sum >> 64));
  secure_wipe(&h, sizeof h);
}

// --- ChaCha20 from OpenSSL --------------------------------------------------

constexpr size_t kChaChaBlockLen = 64;
constexpr size_t kNonceLen = 12;

// A ChaCha20 context at block `counter` of the message under `nonce`;
// OpenSSL's 16-byte IV is the little-endian 32-bit counter, then the nonce.
CtxPtr chacha20_at(const uint8_t *key, const uint8_t *nonce, uint32_t counter) {
  uint8_t iv[16];
  for (int i = 0; i < 4; ++i) iv[i] = static_cast<uint8_t>(counter >> (8 * i));
  std::memcpy(iv + 4, nonce, kNonceLen);
  CtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_EncryptInit_ex2(ctx.get(), EVP_chacha20(), key, iv, nullptr) != 1) return nullptr;
  return ctx;
}

// Bytes a segment encrypts and hashes at a time: small enough that the
// ciphertext is still in L1/L2 when Poly1305 reads it, whole ChaCha blocks.
constexpr size_t kChunkLen = size_t{16} << 10;

// One segment, starting `offset` bytes (whole ChaCha blocks) into the text:
// ChaCha20 from block 1 + offset/64 (block 0 is Poly1305's key) and
// Poly1305 of its ciphertext from a zero accumulator into `hash`. Opening
// hashes each chunk before decrypting it, so in-place works.
template <bool kSeal>
bool crypt_segment(const uint8_t *key, const OneTimeKey &mac_key, const SegmentedMessage &m, size_t offset,
                   size_t len, FieldElement &hash) {
  const CtxPtr ctx = chacha20_at(key, m.nonce, static_cast<uint32_t>(1 + offset / kChaChaBlockLen));
  if (!ctx) return false;
  FieldElement h;
  for (size_t done = 0; done < len; done += kChunkLen) {
    const size_t chunk = std::min(kChunkLen, len - done);
    const uint8_t *in = m.in + offset + done;
    uint8_t *out = m.out + offset + done;
    if (!kSeal) absorb_padded(h, mac_key, in, chunk);
    if (!update_all(ctx.get(), in, out, chunk)) return false;
    if (kSeal) absorb_padded(h, mac_key, out, chunk);
  }
  hash = h;
  secure_wipe(&h, sizeof h);
  return true;
}

// The whole message's tag from the segments' accumulators. Poly1305 over
// the text is Σ_j A_j·r^(blocks after segment j); folding the segments in
// order, h = h·r^(blocks of segment j) + A_j, starting from the AAD's
// padded hash, gives that sum, and the lengths block comes last.
void combine_segments(const OneTimeKey &mac_key, const SegmentedMessage &m,
                      const MessageSegments<kChaChaBlockLen> &segments,
                      const std::vector<FieldElement> &segment_hashes, uint8_t tag[kPoly1305TagLen]) {
  FieldElement h;
  absorb_padded(h, mac_key, m.aad, m.aad_len);
  FieldElement whole_segment_power = power(mac_key.r, segments.segment_len / 16);
  for (size_t j = 0; j < segments.count; ++j) {
    const size_t blocks = (segments.length(j, m.len) + 15) / 16;
    if (blocks * 16 == segments.segment_len) {
      h = add(multiply(h, whole_segment_power), segment_hashes[j]);
    } else {
      FieldElement last_power = power(mac_key.r, blocks);
      h = add(multiply(h, last_power), segment_hashes[j]);
      secure_wipe(&last_power, sizeof last_power);
    }
  }
  uint8_t lengths[16];
  store_le64(lengths, m.aad_len);
  store_le64(lengths + 8, m.len);
  absorb_blocks(h, mac_key, lengths, 1);
  finish_tag(h, mac_key.s, tag);
  secure_wipe(&whole_segment_power, sizeof whole_segment_power);
  secure_wipe(&h, sizeof h);
}

template <bool kSeal>
bool crypt_segmented(const uint8_t *key, const SegmentedMessage &m, unsigned workers, uint8_t tag[kPoly1305TagLen]) {
  // Poly1305's one-time key is the first 32 bytes of ChaCha20 block 0.
  uint8_t key_block[kPoly1305KeyLen] = {};
  const CtxPtr block0 = chacha20_at(key, m.nonce, 0);
  if (!block0 || !update_all(block0.get(), key_block, key_block, sizeof key_block)) {
    secure_wipe(key_block, sizeof key_block);
    return false;
  }
  const OneTimeKey mac_key(key_block);
  secure_wipe(key_block, sizeof key_block);

  const MessageSegments<kChaChaBlockLen> segments(m.len, workers < 1 ? 1 : workers);
  // Wiped after: with the ciphertext known, an accumulator is a polynomial
  // in r that an attacker could solve for r.
  std::vector<FieldElement> segment_hashes(segments.count);
  std::atomic<bool> failed{false};
  ThreadPool::instance().parallel_for(segments.count, workers, [&](size_t j) {
    if (!crypt_segment<kSeal>(key, mac_key, m, segments.offset(j), segments.length(j, m.len), segment_hashes[j])) {
      failed.store(true);
    }
  });
  if (!failed.load()) combine_segments(mac_key, m, segments, segment_hashes, tag);
  secure_wipe(segment_hashes.data(), segment_hashes.size() * sizeof(FieldElement));
  return !failed.load();
}

}  // namespace

void poly1305(const uint8_t key[kPoly1305KeyLen], const uint8_t *message, size_t len, uint8_t tag[kPoly1305TagLen]) {
  const OneTimeKey mac_key(key);
  FieldElement h;
  absorb_blocks(h, mac_key, message, len / 16);
  if (len % 16 != 0) {
    // A short last block is marked by a 1 byte right after it, not 2^128.
    uint8_t last[16] = {};
    std::memcpy(last, message + len / 16 * 16, len % 16);
    last[len % 16] = 1;
    h = multiply(add(h, from_words(load_le64(last), load_le64(last + 8), 0)), mac_key.r);
    secure_wipe(last, sizeof last);
  }
  finish_tag(h, mac_key.s, tag);
  secure_wipe(&h, sizeof h);
}

std::unique_ptr<ChaCha20Poly1305Key> ChaCha20Poly1305Key::make(std::span<const uint8_t> key) {
  if (key.size() != 32) return nullptr;
  return std::unique_ptr<ChaCha20Poly1305Key>(new ChaCha20Poly1305Key(key));
}

wc_status ChaCha20Poly1305Key::seal_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                                              const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag, size_t tag_len,
                                              unsigned workers) const {
  uint8_t full_tag[kPoly1305TagLen];
  if (!crypt_segmented<true>(key_.data(), {nonce, aad, aad_len, in, out, len}, workers, full_tag)) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  std::memcpy(tag, full_tag, tag_len);
  return WC_OK;
}

wc_status ChaCha20Poly1305Key::open_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
                                              const uint8_t *in, uint8_t *out, size_t len, const uint8_t *tag,
                                              size_t tag_len, unsigned workers) const {
  uint8_t expected[kPoly1305TagLen];
  if (!crypt_segmented<false>(key_.data(), {nonce, aad, aad_len, in, out, len}, workers, expected)) {
    return WC_ERR_CRYPTO_LIBRARY;
  }
  // Compared in constant time, after every byte of the text is done.
  const bool authentic = CRYPTO_memcmp(expected, tag, tag_len) == 0;
  secure_wipe(expected, sizeof expected);  // the right tag for a forgery
  return authentic ? WC_OK : WC_ERR_AUTH;
}

}  // namespace warpcrypt::cpu
