#include "backends/cpu/aes_gcm_vaes.h"

#include <openssl/crypto.h>

#include <cstring>
#include <vector>

#include "backends/cpu/message_segments.h"
#include "core/secret_bytes.h"
#include "core/thread_pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define WARPCRYPT_VAES_GCM 1
// GCC 12 reports -Wmaybe-uninitialized and -Wuninitialized from inside its
// own AVX-512 headers (their `__Y` temporaries, which an intrinsic such as
// _mm512_broadcast_i32x4 overwrites whole), a false positive: nothing here
// reads an uninitialised value.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#else
#define WARPCRYPT_VAES_GCM 0
#endif

namespace warpcrypt::cpu {

#if WARPCRYPT_VAES_GCM
namespace {

// Every function that touches the vector units carries this, so the rest of
// the library still runs on any x86-64; nothing here runs before
// vaes_gcm_supported() said yes.
#define WARPCRYPT_VAES_ISA "aes,pclmul,sse4.1,vaes,vpclmulqdq,avx512f,avx512vl,avx512bw"
#define WARPCRYPT_VAES_TARGET __attribute__((target(WARPCRYPT_VAES_ISA), always_inline)) inline

using Block16 = uint8_t[16];

// GHASH works on byte-reversed blocks (the "reflected" form): the GCM
// polynomial's bit order then matches the carry-less multiply's, and the
// 32-bit block counter becomes the low dword, so one vpaddd steps it.
WARPCRYPT_VAES_TARGET __m128i byte_reversal() {
  return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

WARPCRYPT_VAES_TARGET __m128i reflect(__m128i block) { return _mm_shuffle_epi8(block, byte_reversal()); }

WARPCRYPT_VAES_TARGET __m512i reflect_lanes(__m512i blocks) {
  return _mm512_shuffle_epi8(blocks, _mm512_broadcast_i32x4(byte_reversal()));
}

WARPCRYPT_VAES_TARGET __m512i broadcast_block(const Block16 &block) {
  return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i *>(block)));
}

// The first n bytes (n may exceed 64) of a zmm register.
inline __mmask64 first_bytes(size_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

// --- GHASH -----------------------------------------------------------------

// A 256-bit carry-less product as its low, middle (not yet shifted by 64)
// and high 128-bit parts, per lane; summing products before reducing is
// what lets 16 blocks share one reduction.
struct Products {
  __m512i lo;
  __m512i mi;
  __m512i hi;
};

WARPCRYPT_VAES_TARGET Products no_products() {
  return {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
}

WARPCRYPT_VAES_TARGET void add_product(Products &sum, __m512i a, __m512i b) {
  sum.lo = _mm512_xor_si512(sum.lo, _mm512_clmulepi64_epi128(a, b, 0x00));
  sum.mi = _mm512_ternarylogic_epi64(sum.mi, _mm512_clmulepi64_epi128(a, b, 0x01), _mm512_clmulepi64_epi128(a, b, 0x10),
                                     0x96);
  sum.hi = _mm512_xor_si512(sum.hi, _mm512_clmulepi64_epi128(a, b, 0x11));
}

WARPCRYPT_VAES_TARGET __m128i xor_lanes(__m512i v) {
  const __m256i halves = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  return _mm_xor_si128(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
}

// Reduces lo + mi*x^64 + hi*x^128 modulo the reflected GCM polynomial
// x^128 + x^127 + x^126 + x^121 + 1, folding the low 64 bits up twice with
// one multiply by x^63 + x^62 + x^57 each (the high half of `poly`).
WARPCRYPT_VAES_TARGET __m128i reduce(__m128i lo, __m128i mi, __m128i hi) {
  const __m128i poly = _mm_set_epi64x(static_cast<long long>(0xc200000000000000ULL), 1);
  mi = _mm_ternarylogic_epi64(mi, _mm_clmulepi64_si128(poly, lo, 0x01), _mm_shuffle_epi32(lo, 0x4e), 0x96);
  return _mm_ternarylogic_epi64(hi, _mm_clmulepi64_si128(poly, mi, 0x01), _mm_shuffle_epi32(mi, 0x4e), 0x96);
}

WARPCRYPT_VAES_TARGET __m128i reduce(const Products &sum) {
  return reduce(xor_lanes(sum.lo), xor_lanes(sum.mi), xor_lanes(sum.hi));
}

WARPCRYPT_VAES_TARGET __m128i gf_multiply(__m128i a, __m128i b) {
  const __m128i mi = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
  return reduce(_mm_clmulepi64_si128(a, b, 0x00), mi, _mm_clmulepi64_si128(a, b, 0x11));
}

// The products for up to 16 reflected blocks (four to a register, zero
// past `blocks`) against H^blocks..H^1, the running hash folded into the
// first block. Spread over calls so the caller can place them between AES
// rounds.
struct GhashStep {
  const __m512i *text;
  const Block16 *powers;  // powers[4 * i] lines up with text[i]
  __m128i hash;

  WARPCRYPT_VAES_TARGET void add(Products &sum, int i) const {
    __m512i blocks = text[i];
    if (i == 0) blocks = _mm512_xor_si512(blocks, _mm512_inserti32x4(_mm512_setzero_si512(), hash, 0));
    add_product(sum, blocks, _mm512_loadu_si512(powers[4 * i]));
  }
};

WARPCRYPT_VAES_TARGET GhashStep ghash_step(const Block16 *powers, __m128i hash, const __m512i *text, size_t blocks) {
  return {text, powers + (16 - blocks), hash};
}

WARPCRYPT_VAES_TARGET __m128i ghash_blocks(const Block16 *powers, __m128i hash, const __m512i *text, size_t blocks) {
  const GhashStep step = ghash_step(powers, hash, text, blocks);
  Products sum = no_products();
  for (int i = 0; i < static_cast<int>((blocks + 3) / 4); ++i) step.add(sum, i);
  return reduce(sum);
}

// Up to 256 bytes as reflected blocks, zero-padded; returns the block count.
WARPCRYPT_VAES_TARGET size_t load_reflected(const uint8_t *data, size_t len, __m512i text[4]) {
  for (size_t i = 0; i < 4; ++i) {
    const size_t offset = 64 * i;
    text[i] = offset < len ? reflect_lanes(_mm512_maskz_loadu_epi8(first_bytes(len - offset), data + offset))
                           : _mm512_setzero_si512();
  }
  return (len + 15) / 16;
}

WARPCRYPT_VAES_TARGET __m128i ghash_bytes(const Block16 *powers, __m128i hash, const uint8_t *data, size_t len) {
  for (size_t done = 0; done < len; done += 256) {
    __m512i text[4];
    const size_t blocks = load_reflected(data + done, len - done, text);
    hash = ghash_blocks(powers, hash, text, blocks < 16 ? blocks : 16);
  }
  return hash;
}

// --- AES -------------------------------------------------------------------

WARPCRYPT_VAES_TARGET __m128i aes_block(const Block16 *round_keys, int rounds, __m128i block) {
  block = _mm_xor_si128(block, _mm_loadu_si128(reinterpret_cast<const __m128i *>(round_keys[0])));
  for (int r = 1; r < rounds; ++r) {
    block = _mm_aesenc_si128(block, _mm_loadu_si128(reinterpret_cast<const __m128i *>(round_keys[r])));
  }
  return _mm_aesenclast_si128(block, _mm_loadu_si128(reinterpret_cast<const __m128i *>(round_keys[rounds])));
}

// Encrypts `count` registers of four blocks each. With a GHASH step, its
// four multiplies go between the first AES rounds, so the carry-less
// multiplier works while the AES units do.
template <int kRounds>
WARPCRYPT_VAES_TARGET void aes_rounds(const Block16 *round_keys, __m512i *blocks, int count, const GhashStep *ghash,
                                      Products &sum) {
  const __m512i first = broadcast_block(round_keys[0]);
  for (int i = 0; i < count; ++i) blocks[i] = _mm512_xor_si512(blocks[i], first);
  for (int r = 1; r < kRounds; ++r) {
    const __m512i key = broadcast_block(round_keys[r]);
    for (int i = 0; i < count; ++i) blocks[i] = _mm512_aesenc_epi128(blocks[i], key);
    if (ghash != nullptr && r <= 4) ghash->add(sum, r - 1);
  }
  const __m512i last = broadcast_block(round_keys[kRounds]);
  for (int i = 0; i < count; ++i) blocks[i] = _mm512_aesenclast_epi128(blocks[i], last);
}

// --- GCM -------------------------------------------------------------------

// Counter blocks in reflected form, four to a register: the next one to
// use in lane 0, the three after it in lanes 1-3.
struct Counters {
  __m512i next;

  WARPCRYPT_VAES_TARGET void take(__m512i *blocks, int count) {
    const __m512i four = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 4));
    for (int i = 0; i < count; ++i) {
      blocks[i] = reflect_lanes(next);
      next = _mm512_add_epi32(next, four);
    }
  }
};

WARPCRYPT_VAES_TARGET void load_256(const uint8_t *in, __m512i text[4]) {
  for (int i = 0; i < 4; ++i) text[i] = _mm512_loadu_si512(in + 64 * i);
}

// XORs 256 bytes of `text` with the next 16 keystream blocks into `result`
// and stores it at `out`, running `ghash` (if any) between the AES rounds.
template <int kRounds>
WARPCRYPT_VAES_TARGET void crypt_256(const Block16 *round_keys, Counters &counters, const GhashStep *ghash,
                                     Products &sum, const __m512i text[4], uint8_t *out, __m512i result[4]) {
  __m512i blocks[4];
  counters.take(blocks, 4);
  aes_rounds<kRounds>(round_keys, blocks, 4, ghash, sum);
  for (int i = 0; i < 4; ++i) {
    result[i] = _mm512_xor_si512(text[i], blocks[i]);
    _mm512_storeu_si512(out + 64 * i, result[i]);
  }
}

// Encrypts or decrypts the last 1..255 bytes with masked loads and stores
// and hashes their ciphertext (sealing: what it wrote; opening: what it
// read), returning the hash.
template <int kRounds, bool kSeal>
WARPCRYPT_VAES_TARGET __m128i crypt_tail(const Block16 *round_keys, const Block16 *powers, Counters &counters,
                                         __m128i hash, const uint8_t *in, uint8_t *out, size_t len) {
  const int registers = static_cast<int>((len + 63) / 64);
  __m512i keystream[4];
  counters.take(keystream, registers);
  Products unused = no_products();
  aes_rounds<kRounds>(round_keys, keystream, registers, nullptr, unused);
  __m512i ciphertext[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                           _mm512_setzero_si512()};
  for (int i = 0; i < registers; ++i) {
    const size_t offset = 64 * static_cast<size_t>(i);
    const __mmask64 mask = first_bytes(len - offset);
    const __m512i text = _mm512_maskz_loadu_epi8(mask, in + offset);
    const __m512i result = _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(text, keystream[i]));
    _mm512_mask_storeu_epi8(out + offset, mask, result);
    ciphertext[i] = reflect_lanes(kSeal ? result : text);
  }
  return ghash_blocks(powers, hash, ciphertext, (len + 15) / 16);
}

// The counter blocks of a message, starting `first_block` blocks into its
// text: J0 + 1 + first_block .. + 3 in the four lanes. The API's length cap
// keeps the 32-bit counter from wrapping, so a plain vpaddd is enough.
WARPCRYPT_VAES_TARGET Counters counters_at(__m128i j0_block, size_t first_block) {
  const int b = static_cast<int>(first_block);
  return {_mm512_add_epi32(_mm512_broadcast_i32x4(reflect(j0_block)),
                           _mm512_set_epi32(0, 0, 0, b + 4, 0, 0, 0, b + 3, 0, 0, 0, b + 2, 0, 0, 0, b + 1))};
}

WARPCRYPT_VAES_TARGET __m128i j0_for(const uint8_t *nonce) {
  alignas(16) uint8_t j0[16] = {};
  std::memcpy(j0, nonce, kVaesGcmNonceLen);
  j0[15] = 1;
  return _mm_load_si128(reinterpret_cast<const __m128i *>(j0));
}

// Encrypts or decrypts `len` bytes with the keystream from `counters` and
// hashes their ciphertext into `hash`, which it returns. Sealing hashes each
// 256 bytes of ciphertext during the next 256 bytes' AES (it exists only
// after its own); opening hashes the ciphertext it is decrypting.
template <int kRounds, bool kSeal>
WARPCRYPT_VAES_TARGET __m128i crypt_text(const Block16 *round_keys, const Block16 *powers, Counters counters,
                                         __m128i hash, const uint8_t *in, uint8_t *out, size_t len) {
  __m512i text[4];
  __m512i result[4];
  __m512i to_hash[4];  // reflected ciphertext for the next GHASH step
  Products sum = no_products();
  size_t done = 0;
  if (kSeal && len >= 256) {  // hashed during the next step's AES, or after the loop
    load_256(in, text);
    crypt_256<kRounds>(round_keys, counters, nullptr, sum, text, out, result);
    for (int i = 0; i < 4; ++i) to_hash[i] = reflect_lanes(result[i]);
    done = 256;
  }
  for (; len - done >= 256; done += 256) {
    load_256(in + done, text);
    if (!kSeal) {
      for (int i = 0; i < 4; ++i) to_hash[i] = reflect_lanes(text[i]);
    }
    const GhashStep step = ghash_step(powers, hash, to_hash, 16);
    sum = no_products();
    crypt_256<kRounds>(round_keys, counters, &step, sum, text, out + done, result);
    hash = reduce(sum);
    if (kSeal) {
      for (int i = 0; i < 4; ++i) to_hash[i] = reflect_lanes(result[i]);
    }
  }
  if (kSeal && len >= 256) hash = ghash_blocks(powers, hash, to_hash, 16);
  if (done < len) {
    hash = crypt_tail<kRounds, kSeal>(round_keys, powers, counters, hash, in + done, out + done, len - done);
  }
  return hash;
}

// crypt_text for the key's number of rounds: the one place that turns it
// into the template argument.
template <bool kSeal>
__attribute__((target(WARPCRYPT_VAES_ISA))) __m128i crypt_text_for_rounds(const Block16 *round_keys,
                                                                          const Block16 *powers, int rounds,
                                                                          Counters counters, __m128i hash,
                                                                          const uint8_t *in, uint8_t *out, size_t len) {
  switch (rounds) {
    case 10:
      return crypt_text<10, kSeal>(round_keys, powers, counters, hash, in, out, len);
    case 12:
      return crypt_text<12, kSeal>(round_keys, powers, counters, hash, in, out, len);
    default:
      return crypt_text<14, kSeal>(round_keys, powers, counters, hash, in, out, len);
  }
}

// The tag from the hash of the AAD and text: the length block (AAD bits
// then text bits, reflected) is hashed in, and the result masked with the
// encrypted J0.
WARPCRYPT_VAES_TARGET __m128i finish_tag(const Block16 *round_keys, int rounds, const Block16 *powers, __m128i hash,
                                         __m128i j0_block, size_t aad_len, size_t len) {
  const __m128i lengths = _mm_set_epi64x(static_cast<long long>(aad_len * 8), static_cast<long long>(len * 8));
  hash = gf_multiply(_mm_xor_si128(hash, lengths), _mm_loadu_si128(reinterpret_cast<const __m128i *>(powers[15])));
  return _mm_xor_si128(reflect(hash), aes_block(round_keys, rounds, j0_block));
}

// Runs the whole message on this thread and writes the full 16-byte tag.
template <bool kSeal>
__attribute__((target(WARPCRYPT_VAES_ISA))) void crypt(const Block16 *round_keys, const Block16 *powers, int rounds,
                                                       const SegmentedMessage &m, uint8_t tag[16]) {
  const __m128i j0_block = j0_for(m.nonce);
  __m128i hash = ghash_bytes(powers, _mm_setzero_si128(), m.aad, m.aad_len);
  hash = crypt_text_for_rounds<kSeal>(round_keys, powers, rounds, counters_at(j0_block, 0), hash, m.in, m.out, m.len);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(tag),
                   finish_tag(round_keys, rounds, powers, hash, j0_block, m.aad_len, m.len));
}

// --- One message in segments ------------------------------------------------

// Segments of whole 16-block (256-byte) steps.
using Segments = MessageSegments<256>;

// One segment's text, hashed from a zero GHASH state; the hash goes to
// `hash` (a plain field element, not pre-multiplied by x).
template <bool kSeal>
__attribute__((target(WARPCRYPT_VAES_ISA))) void crypt_segment(const Block16 *round_keys, const Block16 *powers,
                                                               int rounds, const uint8_t *nonce, size_t first_block,
                                                               const uint8_t *in, uint8_t *out, size_t len,
                                                               uint8_t *hash) {
  const __m128i result = crypt_text_for_rounds<kSeal>(
      round_keys, powers, rounds, counters_at(j0_for(nonce), first_block), _mm_setzero_si128(), in, out, len);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(hash), result);
}

// H^k for k >= 1, pre-multiplied by x like the stored powers: gf_multiply of
// two such values is again one (Hx * H'x / x), so square-and-multiply over
// k's bits needs no conversion. k is a block count, not a secret.
WARPCRYPT_VAES_TARGET __m128i hash_key_power(const Block16 *powers, size_t k) {
  const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(powers[15]));
  __m128i power = h1;
  int bit = 63 - __builtin_clzll(static_cast<unsigned long long>(k));
  while (--bit >= 0) {
    power = gf_multiply(power, power);
    if ((k >> bit) & 1) power = gf_multiply(power, h1);
  }
  return power;
}

// The tag of a message whose segments were hashed apart. GHASH over the
// whole text is Y = GHASH(AAD)·H^(c+1) ⊕ Σ_j P_j·H^(blocks after segment j)
// ⊕ L·H; folding the segments in order, hash = hash·H^(blocks of segment j)
// ⊕ P_j, gives the same sum with one power per segment length, and
// finish_tag adds L·H.
__attribute__((target(WARPCRYPT_VAES_ISA))) void combine_segments(const Block16 *round_keys, int rounds,
                                                                  const Block16 *powers, const SegmentedMessage &m,
                                                                  const Segments &segments,
                                                                  const uint8_t *segment_hashes, uint8_t tag[16]) {
  __m128i hash = ghash_bytes(powers, _mm_setzero_si128(), m.aad, m.aad_len);
  const __m128i whole_segment_power = hash_key_power(powers, segments.segment_len / 16);
  for (size_t j = 0; j < segments.count; ++j) {
    const size_t blocks = (segments.length(j, m.len) + 15) / 16;
    const __m128i power = blocks * 16 == segments.segment_len ? whole_segment_power : hash_key_power(powers, blocks);
    hash = _mm_xor_si128(gf_multiply(hash, power),
                         _mm_loadu_si128(reinterpret_cast<const __m128i *>(segment_hashes + 16 * j)));
  }
  const __m128i full_tag = finish_tag(round_keys, rounds, powers, hash, j0_for(m.nonce), m.aad_len, m.len);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(tag), full_tag);
}

template <bool kSeal>
void crypt_segmented(const Block16 *round_keys, const Block16 *powers, int rounds, const SegmentedMessage &m,
                     unsigned workers, uint8_t tag[16]) {
  const Segments segments(m.len, workers < 1 ? 1 : workers);
  // Wiped after: with the ciphertext known, a segment's hash is a
  // polynomial in H that an attacker could solve for the hash key.
  std::vector<uint8_t> segment_hashes(16 * segments.count);
  ThreadPool::instance().parallel_for(segments.count, workers, [&](size_t j) {
    const size_t offset = segments.offset(j);
    crypt_segment<kSeal>(round_keys, powers, rounds, m.nonce, offset / 16, m.in + offset, m.out + offset,
                         segments.length(j, m.len), segment_hashes.data() + 16 * j);
  });
  combine_segments(round_keys, rounds, powers, m, segments, segment_hashes.data(), tag);
  secure_wipe(segment_hashes.data(), segment_hashes.size());
}

// --- Keying ----------------------------------------------------------------

// AES's SubWord (and SubWord of RotWord) through AESKEYGENASSIST rather
// than an S-box table, whose lookups would depend on the key. The word
// goes in dword 1; the instruction returns SubWord in dword 0 and
// RotWord(SubWord) in dword 1.
__attribute__((target(WARPCRYPT_VAES_ISA))) uint32_t sub_word(uint32_t word, bool rotate) {
  const __m128i assisted = _mm_aeskeygenassist_si128(_mm_set_epi32(0, 0, static_cast<int>(word), 0), 0);
  return static_cast<uint32_t>(rotate ? _mm_extract_epi32(assisted, 1) : _mm_cvtsi128_si32(assisted));
}

// FIPS 197's key expansion, word by word; returns the number of rounds.
int expand_key(std::span<const uint8_t> key, Block16 *round_keys) {
  const size_t key_words = key.size() / 4;
  const int rounds = static_cast<int>(key_words) + 6;
  const size_t words = 4 * (static_cast<size_t>(rounds) + 1);
  uint32_t w[60];
  std::memcpy(w, key.data(), key.size());
  uint32_t round_constant = 1;
  for (size_t i = key_words; i < words; ++i) {
    uint32_t t = w[i - 1];
    if (i % key_words == 0) {
      t = sub_word(t, true) ^ round_constant;
      round_constant = (round_constant << 1) ^ ((round_constant >> 7) * 0x11b);
    } else if (key_words == 8 && i % key_words == 4) {
      t = sub_word(t, false);
    }
    w[i] = w[i - key_words] ^ t;
  }
  std::memcpy(round_keys, w, 4 * words);
  secure_wipe(w, sizeof w);
  return rounds;
}

// H = AES(0), reflected and multiplied by x: the carry-less product of two
// reflected values comes out one bit position short, and one factor of x
// folded into the key once spares shifting every product. Then its powers
// up to H^16, each made the same way.
__attribute__((target(WARPCRYPT_VAES_ISA))) void hash_key_powers(const Block16 *round_keys, int rounds,
                                                                 Block16 *powers) {
  const __m128i h = reflect(aes_block(round_keys, rounds, _mm_setzero_si128()));
  uint64_t low = static_cast<uint64_t>(_mm_cvtsi128_si64(h));
  uint64_t high = static_cast<uint64_t>(_mm_extract_epi64(h, 1));
  const uint64_t carry_mask = 0 - (high >> 63);  // no branch on key bits
  high = (high << 1) | (low >> 63);
  low <<= 1;
  high ^= carry_mask & 0xc200000000000000ULL;
  low ^= carry_mask & 1;
  const __m128i h1 = _mm_set_epi64x(static_cast<long long>(high), static_cast<long long>(low));
  __m128i power = h1;
  for (int k = 1; k <= 16; ++k) {
    if (k > 1) power = gf_multiply(power, h1);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(powers[16 - k]), power);
  }
}

bool cpu_has_instructions() {
  constexpr unsigned kAes = 1u << 25, kPclmul = 1u << 1,
                     kOsxsave = 1u << 27;  // leaf 1, ecx
  constexpr unsigned kAvx512f = 1u << 16, kAvx512bw = 1u << 30,
                     kAvx512vl = 1u << 31;                     // leaf 7, ebx
  constexpr unsigned kVaes = 1u << 9, kVpclmulqdq = 1u << 10;  // leaf 7, ecx
  // XCR0: SSE, AVX, opmask, upper halves of zmm0-15, zmm16-31.
  constexpr uint32_t kZmmState = (1u << 1) | (1u << 2) | (1u << 5) | (1u << 6) | (1u << 7);
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  if ((c & (kAes | kPclmul | kOsxsave)) != (kAes | kPclmul | kOsxsave)) return false;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  if ((b & (kAvx512f | kAvx512bw | kAvx512vl)) != (kAvx512f | kAvx512bw | kAvx512vl)) return false;
  if ((c & (kVaes | kVpclmulqdq)) != (kVaes | kVpclmulqdq)) return false;
  uint32_t xcr0_low = 0, xcr0_high = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  (void)xcr0_high;  // the states above bit 31 are not needed
  return (xcr0_low & kZmmState) == kZmmState;
}

// Compares in constant time, after every byte of the text is done.
wc_status check_expected_tag(uint8_t expected[16], const uint8_t *tag, size_t tag_len) {
  const bool authentic = CRYPTO_memcmp(expected, tag, tag_len) == 0;
  secure_wipe(expected, 16);  // the right tag for a forgery
  return authentic ? WC_OK : WC_ERR_AUTH;
}

}  // namespace

bool vaes_gcm_supported() {
  static const bool supported = cpu_has_instructions();
  return supported;
}

std::unique_ptr<VaesGcmKey> VaesGcmKey::make(std::span<const uint8_t> key) {
  if (!vaes_gcm_supported() || (key.size() != 16 && key.size() != 24 && key.size() != 32)) return nullptr;
  std::unique_ptr<VaesGcmKey> keyed(new VaesGcmKey());
  keyed->rounds_ = expand_key(key, keyed->round_keys_);
  hash_key_powers(keyed->round_keys_, keyed->rounds_, keyed->powers_);
  return keyed;
}

void VaesGcmKey::seal(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                      size_t len, uint8_t *tag, size_t tag_len) const {
  uint8_t full_tag[16];
  crypt<true>(round_keys_, powers_, rounds_, {nonce, aad, aad_len, in, out, len}, full_tag);
  std::memcpy(tag, full_tag, tag_len);
}

wc_status VaesGcmKey::open(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
                           size_t len, const uint8_t *tag, size_t tag_len) const {
  uint8_t expected[16];
  crypt<false>(round_keys_, powers_, rounds_, {nonce, aad, aad_len, in, out, len}, expected);
  return check_expected_tag(expected, tag, tag_len);
}

void VaesGcmKey::seal_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                uint8_t *out, size_t len, uint8_t *tag, size_t tag_len, unsigned workers) const {
  uint8_t full_tag[16];
  crypt_segmented<true>(round_keys_, powers_, rounds_, {nonce, aad, aad_len, in, out, len}, workers, full_tag);
  std::memcpy(tag, full_tag, tag_len);
}

wc_status VaesGcmKey::open_segmented(const uint8_t *nonce, const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                     uint8_t *out, size_t len, const uint8_t *tag, size_t tag_len,
                                     unsigned workers) const {
  uint8_t expected[16];
  crypt_segmented<false>(round_keys_, powers_, rounds_, {nonce, aad, aad_len, in, out, len}, workers, expected);
  return check_expected_tag(expected, tag, tag_len);
}

#else
// No x86-64 vector code on this platform: make() returns nullptr, so the CPU
// AEAD keeps every message on OpenSSL and seal/open are never reached.

bool vaes_gcm_supported() { return false; }

std::unique_ptr<VaesGcmKey> VaesGcmKey::make(std::span<const uint8_t>) { return nullptr; }

void VaesGcmKey::seal(const uint8_t *, const uint8_t *, size_t, const uint8_t *, uint8_t *, size_t, uint8_t *,
                      size_t) const {}

wc_status VaesGcmKey::open(const uint8_t *, const uint8_t *, size_t, const uint8_t *, uint8_t *, size_t,
                           const uint8_t *, size_t) const {
  return WC_ERR_BACKEND_UNAVAILABLE;
}

void VaesGcmKey::seal_segmented(const uint8_t *, const uint8_t *, size_t, const uint8_t *, uint8_t *, size_t, uint8_t *,
                                size_t, unsigned) const {}

wc_status VaesGcmKey::open_segmented(const uint8_t *, const uint8_t *, size_t, const uint8_t *, uint8_t *, size_t,
                                     const uint8_t *, size_t, unsigned) const {
  return WC_ERR_BACKEND_UNAVAILABLE;
}

#endif

VaesGcmKey::~VaesGcmKey() {
  secure_wipe(round_keys_, sizeof round_keys_);
  secure_wipe(powers_, sizeof powers_);
}

}  // namespace warpcrypt::cpu
