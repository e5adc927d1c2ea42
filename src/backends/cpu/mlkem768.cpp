// ML-KEM-768 as FIPS 203 writes it, coefficients kept fully reduced in
// [0, q). Constant time: no branch and no table index depends on a secret.
// Reduction is by multiplication (Barrett) and a masked subtraction, the
// compression's division by q is a multiplication with a masked correction,
// and decapsulation compares and selects its shared secret with masks. The
// only data-dependent loop, the matrix sampling's rejection, reads the
// public seed rho.
#include "backends/cpu/mlkem768.h"

#include <algorithm>
#include <array>

#include "backends/cpu/keccak.h"
#include "core/secret_bytes.h"

#ifdef WARPCRYPT_MLKEM_VALGRIND
#include <valgrind/memcheck.h>
#endif

namespace warpcrypt::cpu {
namespace {

constexpr unsigned kN = 256;
constexpr uint32_t kQ = 3329;
constexpr unsigned kK = 3;
constexpr unsigned kEta = 2;  // eta1 = eta2 = 2 for ML-KEM-768
constexpr unsigned kDu = 10;
constexpr unsigned kDv = 4;
constexpr size_t kPolyBytes = 384;  // ByteEncode_12 of one polynomial
constexpr size_t kVectorBytes = kK * kPolyBytes;
constexpr size_t kCiphertextUBytes = kK * kN * kDu / 8;

using Poly = std::array<uint16_t, kN>;
using PolyVector = std::array<Poly, kK>;
using Matrix = std::array<PolyVector, kK>;

// rho is derived from the secret seed d but is public (it is part of the
// encapsulation key). The constant-time check (tests/unit/mlkem_ct_check.cpp)
// builds this file with WARPCRYPT_MLKEM_VALGRIND so that rho, once derived,
// is declared public to valgrind and the rejection sampling on it is not
// reported.
void declassify([[maybe_unused]] std::span<const uint8_t> bytes) {
#ifdef WARPCRYPT_MLKEM_VALGRIND
  VALGRIND_MAKE_MEM_DEFINED(bytes.data(), bytes.size());
#endif
}

// Wipes a working value that held secret coefficients or bytes when it goes
// out of scope.
template <typename T>
struct Wiped {
  T value{};
  Wiped() = default;
  Wiped(const Wiped &) = delete;
  Wiped &operator=(const Wiped &) = delete;
  ~Wiped() { secure_wipe(&value, sizeof(value)); }
};

// All-ones when x is negative as a 32-bit two's complement value, else zero.
uint32_t negative_mask(uint32_t x) { return static_cast<uint32_t>(-static_cast<int32_t>(x >> 31)); }

// x in [0, 2q) to [0, q).
uint16_t reduce_once(uint32_t x) {
  const uint32_t minus_q = x - kQ;
  return static_cast<uint16_t>(minus_q + (negative_mask(minus_q) & kQ));
}

// floor(x / q) for x < 2^26. The estimate from floor(2^32 / q) is low by at
// most one; the masked correction adds that one back.
uint32_t divide_by_q(uint32_t x) {
  constexpr uint64_t kReciprocal = (uint64_t{1} << 32) / kQ;
  uint32_t quotient = static_cast<uint32_t>((x * kReciprocal) >> 32);
  const uint32_t remainder_minus_q = x - quotient * kQ - kQ;
  quotient += 1 & ~negative_mask(remainder_minus_q);
  return quotient;
}

uint16_t reduce(uint32_t x) { return static_cast<uint16_t>(x - divide_by_q(x) * kQ); }
uint16_t add_mod(uint16_t a, uint16_t b) { return reduce_once(uint32_t{a} + b); }
uint16_t sub_mod(uint16_t a, uint16_t b) { return reduce_once(uint32_t{a} + kQ - b); }
uint16_t mul_mod(uint16_t a, uint16_t b) { return reduce(uint32_t{a} * b); }

constexpr uint32_t power_mod(uint32_t base, unsigned exponent) {
  uint32_t result = 1;
  for (unsigned i = 0; i < exponent; ++i) result = result * base % kQ;
  return result;
}

constexpr unsigned bit_reverse7(unsigned x) {
  unsigned reversed = 0;
  for (unsigned bit = 0; bit < 7; ++bit) reversed |= ((x >> bit) & 1) << (6 - bit);
  return reversed;
}

// zeta = 17, the primitive 256th root of unity mod q: the NTT's zeta^BitRev7(i)
// and the base-case multiplication's gamma_i = zeta^(2 BitRev7(i) + 1).
constexpr unsigned kZeta = 17;
constexpr std::array<uint16_t, 128> kNttZetas = [] {
  std::array<uint16_t, 128> zetas{};
  for (unsigned i = 0; i < 128; ++i) zetas[i] = static_cast<uint16_t>(power_mod(kZeta, bit_reverse7(i)));
  return zetas;
}();
constexpr std::array<uint16_t, 128> kBaseCaseGammas = [] {
  std::array<uint16_t, 128> gammas{};
  for (unsigned i = 0; i < 128; ++i) gammas[i] = static_cast<uint16_t>(power_mod(kZeta, 2 * bit_reverse7(i) + 1));
  return gammas;
}();
constexpr uint16_t kInverse128 = 3303;  // 128^-1 mod q

// Algorithm 9.
void ntt(Poly &f) {
  unsigned zeta_index = 1;
  for (unsigned len = 128; len >= 2; len /= 2) {
    for (unsigned start = 0; start < kN; start += 2 * len) {
      const uint16_t zeta = kNttZetas[zeta_index++];
      for (unsigned j = start; j < start + len; ++j) {
        const uint16_t t = mul_mod(zeta, f[j + len]);
        f[j + len] = sub_mod(f[j], t);
        f[j] = add_mod(f[j], t);
      }
    }
  }
}

// Algorithm 10.
void inverse_ntt(Poly &f) {
  unsigned zeta_index = 127;
  for (unsigned len = 2; len <= 128; len *= 2) {
    for (unsigned start = 0; start < kN; start += 2 * len) {
      const uint16_t zeta = kNttZetas[zeta_index--];
      for (unsigned j = start; j < start + len; ++j) {
        const uint16_t t = f[j];
        f[j] = add_mod(t, f[j + len]);
        f[j + len] = mul_mod(zeta, sub_mod(f[j + len], t));
      }
    }
  }
  for (uint16_t &coefficient : f) coefficient = mul_mod(coefficient, kInverse128);
}

// Algorithms 11 and 12, accumulated: sum += a * b in the NTT domain.
void multiply_add_ntt(Poly &sum, const Poly &a, const Poly &b) {
  for (unsigned i = 0; i < 128; ++i) {
    const uint16_t a0 = a[2 * i], a1 = a[2 * i + 1], b0 = b[2 * i], b1 = b[2 * i + 1];
    const uint16_t c0 = add_mod(mul_mod(a0, b0), mul_mod(mul_mod(a1, b1), kBaseCaseGammas[i]));
    const uint16_t c1 = add_mod(mul_mod(a0, b1), mul_mod(a1, b0));
    sum[2 * i] = add_mod(sum[2 * i], c0);
    sum[2 * i + 1] = add_mod(sum[2 * i + 1], c1);
  }
}

void add_poly(Poly &sum, const Poly &addend) {
  for (unsigned i = 0; i < kN; ++i) sum[i] = add_mod(sum[i], addend[i]);
}

// Compress_d (section 4.2.1): round(2^d x / q) mod 2^d.
uint16_t compress(uint16_t x, unsigned d) {
  return static_cast<uint16_t>(divide_by_q((uint32_t{x} << d) + kQ / 2) & ((1u << d) - 1));
}

// Decompress_d: round(q y / 2^d).
uint16_t decompress(uint16_t y, unsigned d) { return static_cast<uint16_t>((uint32_t{y} * kQ + (1u << (d - 1))) >> d); }

// ByteEncode_d (algorithm 5): the low d bits of each coefficient, least
// significant bit first.
void byte_encode(std::span<uint8_t> out, const Poly &f, unsigned d) {
  uint32_t buffer = 0;
  unsigned buffered_bits = 0;
  size_t written = 0;
  for (uint16_t coefficient : f) {
    buffer |= uint32_t{coefficient} << buffered_bits;
    buffered_bits += d;
    while (buffered_bits >= 8) {
      out[written++] = static_cast<uint8_t>(buffer);
      buffer >>= 8;
      buffered_bits -= 8;
    }
  }
}

// ByteDecode_d (algorithm 6) for d < 12: each coefficient is d bits.
void byte_decode(Poly &f, std::span<const uint8_t> in, unsigned d) {
  uint32_t buffer = 0;
  unsigned buffered_bits = 0;
  size_t read = 0;
  for (uint16_t &coefficient : f) {
    while (buffered_bits < d) {
      buffer |= uint32_t{in[read++]} << buffered_bits;
      buffered_bits += 8;
    }
    coefficient = static_cast<uint16_t>(buffer & ((1u << d) - 1));
    buffer >>= d;
    buffered_bits -= d;
  }
}

// ByteDecode_12: 12-bit values taken modulo q. Each is below 2q, so one
// masked subtraction reduces it.
void byte_decode12(Poly &f, std::span<const uint8_t> in) {
  byte_decode(f, in, 12);
  for (uint16_t &coefficient : f) coefficient = reduce_once(coefficient);
}

void encode_vector12(std::span<uint8_t> out, const PolyVector &v) {
  for (unsigned i = 0; i < kK; ++i) byte_encode(out.subspan(i * kPolyBytes, kPolyBytes), v[i], 12);
}

void decode_vector12(PolyVector &v, std::span<const uint8_t> in) {
  for (unsigned i = 0; i < kK; ++i) byte_decode12(v[i], in.subspan(i * kPolyBytes, kPolyBytes));
}

// SampleNTT (algorithm 7) from SHAKE128(rho || j || i): three bytes give two
// 12-bit candidates, kept where below q. rho is public, so the rejection's
// branches leak nothing.
void sample_ntt(Poly &a, std::span<const uint8_t, 32> rho, uint8_t j, uint8_t i) {
  KeccakSponge xof(kShake128Rate, kShakeDomain);
  xof.absorb(rho);
  const std::array<uint8_t, 2> indices = {j, i};
  xof.absorb(indices);
  std::array<uint8_t, kShake128Rate> block{};
  unsigned filled = 0;
  while (filled < kN) {
    xof.squeeze(block);
    for (size_t offset = 0; offset + 3 <= block.size() && filled < kN; offset += 3) {
      const uint16_t d1 = static_cast<uint16_t>(block[offset] | ((block[offset + 1] & 0x0F) << 8));
      const uint16_t d2 = static_cast<uint16_t>((block[offset + 1] >> 4) | (block[offset + 2] << 4));
      if (d1 < kQ) a[filled++] = d1;
      if (d2 < kQ && filled < kN) a[filled++] = d2;
    }
  }
}

// A-hat with A[i][j] = SampleNTT(rho || j || i) (algorithm 13, lines 3-7).
void generate_matrix(Matrix &a, std::span<const uint8_t, 32> rho) {
  for (uint8_t i = 0; i < kK; ++i)
    for (uint8_t j = 0; j < kK; ++j) sample_ntt(a[i][j], rho, j, i);
}

// SamplePolyCBD_2 (algorithm 8) of PRF_2(seed, counter) = SHAKE256(seed ||
// counter, 128 bytes): each coefficient is the difference of two sums of
// two bits, taken mod q.
void sample_cbd(Poly &f, std::span<const uint8_t, 32> seed, uint8_t counter) {
  Wiped<std::array<uint8_t, 33>> input;
  std::copy(seed.begin(), seed.end(), input.value.begin());
  input.value[32] = counter;
  Wiped<std::array<uint8_t, 64 * kEta>> bytes;
  shake256(bytes.value, input.value);
  for (unsigned i = 0; i < kN; ++i) {
    // Coefficient i takes bits 4i .. 4i + 3.
    const uint8_t nibble = static_cast<uint8_t>(bytes.value[i / 2] >> (4 * (i % 2)));
    const uint16_t x = (nibble & 1) + ((nibble >> 1) & 1);
    const uint16_t y = ((nibble >> 2) & 1) + ((nibble >> 3) & 1);
    f[i] = sub_mod(x, y);
  }
}

struct PkeEncryptionKey {
  PolyVector t_hat;
  Matrix a_hat;
};

// Reads ek into t-hat and A-hat (algorithm 14, lines 2-8).
void load_encryption_key(PkeEncryptionKey &key, std::span<const uint8_t, kMlkem768EncapsulationKeyLen> ek) {
  decode_vector12(key.t_hat, ek.first(kVectorBytes));
  generate_matrix(key.a_hat, ek.subspan<kVectorBytes, 32>());
}

// kK polynomials from the CBD of `seed` with consecutive counters, each
// taken to the NTT domain (K-PKE's s-hat, e-hat and y-hat).
void sample_ntt_vector(PolyVector &vector, std::span<const uint8_t, 32> seed, uint8_t &counter) {
  for (Poly &f : vector) {
    sample_cbd(f, seed, counter++);
    ntt(f);
  }
}

// K-PKE.Encrypt (algorithm 14) with the key already loaded.
void pke_encrypt(std::span<uint8_t, kMlkem768CiphertextLen> c, const PkeEncryptionKey &key,
                 std::span<const uint8_t, 32> message, std::span<const uint8_t, 32> r) {
  Wiped<PolyVector> y_hat;
  Wiped<PolyVector> u;
  Wiped<Poly> v;
  Wiped<Poly> noise;
  uint8_t counter = 0;
  sample_ntt_vector(y_hat.value, r, counter);
  for (unsigned i = 0; i < kK; ++i) {
    u.value[i] = {};
    for (unsigned j = 0; j < kK; ++j) multiply_add_ntt(u.value[i], key.a_hat[j][i], y_hat.value[j]);
    inverse_ntt(u.value[i]);
    sample_cbd(noise.value, r, counter++);  // e1[i]
    add_poly(u.value[i], noise.value);
  }
  for (unsigned j = 0; j < kK; ++j) multiply_add_ntt(v.value, key.t_hat[j], y_hat.value[j]);
  inverse_ntt(v.value);
  sample_cbd(noise.value, r, counter);  // e2
  add_poly(v.value, noise.value);
  byte_decode(noise.value, message, 1);  // mu = Decompress_1(ByteDecode_1(m))
  for (uint16_t &bit : noise.value) bit = decompress(bit, 1);
  add_poly(v.value, noise.value);

  for (unsigned i = 0; i < kK; ++i) {
    for (uint16_t &coefficient : u.value[i]) coefficient = compress(coefficient, kDu);
    byte_encode(c.subspan(i * kN * kDu / 8, kN * kDu / 8), u.value[i], kDu);
  }
  for (uint16_t &coefficient : v.value) coefficient = compress(coefficient, kDv);
  byte_encode(c.subspan(kCiphertextUBytes), v.value, kDv);
}

// K-PKE.Decrypt (algorithm 15).
void pke_decrypt(std::span<uint8_t, 32> message, std::span<const uint8_t> dk_pke,
                 std::span<const uint8_t, kMlkem768CiphertextLen> c) {
  Wiped<PolyVector> s_hat;
  Wiped<Poly> u;
  Wiped<Poly> w;
  decode_vector12(s_hat.value, dk_pke);
  for (unsigned i = 0; i < kK; ++i) {
    byte_decode(u.value, c.subspan(i * kN * kDu / 8, kN * kDu / 8), kDu);
    for (uint16_t &coefficient : u.value) coefficient = decompress(coefficient, kDu);
    ntt(u.value);
    multiply_add_ntt(w.value, s_hat.value[i], u.value);
  }
  inverse_ntt(w.value);
  byte_decode(u.value, c.subspan(kCiphertextUBytes), kDv);
  for (unsigned i = 0; i < kN; ++i) u.value[i] = compress(sub_mod(decompress(u.value[i], kDv), w.value[i]), 1);
  byte_encode(message, u.value, 1);
}

// G (SHA3-512) of a || b.
void hash_g(std::span<uint8_t, 64> out, std::span<const uint8_t, 32> a, std::span<const uint8_t> b) {
  Wiped<std::array<uint8_t, 64>> input;
  std::copy(a.begin(), a.end(), input.value.begin());
  std::copy(b.begin(), b.end(), input.value.begin() + 32);
  sha3_512(out, std::span<const uint8_t>(input.value).first(32 + b.size()));
}

constexpr size_t kDkPkeOffset = 0;
constexpr size_t kDkEkOffset = kDkPkeOffset + kVectorBytes;
constexpr size_t kDkHashOffset = kDkEkOffset + kMlkem768EncapsulationKeyLen;
constexpr size_t kDkZOffset = kDkHashOffset + 32;
static_assert(kDkZOffset + 32 == kMlkem768DecapsulationKeyLen);

}  // namespace

void mlkem768_keygen(std::span<uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                     std::span<uint8_t, kMlkem768DecapsulationKeyLen> decapsulation_key,
                     std::span<const uint8_t, kMlkem768SeedLen> seed) {
  // K-PKE.KeyGen (algorithm 13): (rho, sigma) = G(d || k).
  Wiped<std::array<uint8_t, 64>> rho_sigma;
  const std::array<uint8_t, 1> k = {kK};
  hash_g(rho_sigma.value, seed.first<32>(), k);
  const std::span<const uint8_t, 32> rho = std::span<const uint8_t>(rho_sigma.value).first<32>();
  const std::span<const uint8_t, 32> sigma = std::span<const uint8_t>(rho_sigma.value).last<32>();
  declassify(rho);

  Wiped<Matrix> a_hat;
  generate_matrix(a_hat.value, rho);
  Wiped<PolyVector> s_hat;
  Wiped<PolyVector> e_hat;
  Wiped<PolyVector> t_hat;
  uint8_t counter = 0;
  sample_ntt_vector(s_hat.value, sigma, counter);
  sample_ntt_vector(e_hat.value, sigma, counter);
  for (unsigned i = 0; i < kK; ++i) {
    t_hat.value[i] = e_hat.value[i];
    for (unsigned j = 0; j < kK; ++j) multiply_add_ntt(t_hat.value[i], a_hat.value[i][j], s_hat.value[j]);
  }
  encode_vector12(encapsulation_key.first(kVectorBytes), t_hat.value);
  std::copy(rho.begin(), rho.end(), encapsulation_key.begin() + kVectorBytes);

  // dk = dk_pke || ek || H(ek) || z (algorithm 16).
  encode_vector12(decapsulation_key.subspan(kDkPkeOffset, kVectorBytes), s_hat.value);
  std::copy(encapsulation_key.begin(), encapsulation_key.end(), decapsulation_key.begin() + kDkEkOffset);
  sha3_256(decapsulation_key.subspan<kDkHashOffset, 32>(), encapsulation_key);
  std::copy(seed.begin() + 32, seed.end(), decapsulation_key.begin() + kDkZOffset);
}

wc_status mlkem768_encaps(std::span<uint8_t, kMlkem768CiphertextLen> ciphertext,
                          std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                          std::span<const uint8_t, kMlkem768EncapsulationKeyLen> encapsulation_key,
                          std::span<const uint8_t, kMlkemRandomnessLen> randomness) {
  // Section 7.2's modulus check: ByteEncode_12(ByteDecode_12(ek)) == ek,
  // which is every 12-bit value below q. The key is public, so this may
  // branch.
  PkeEncryptionKey key;
  load_encryption_key(key, encapsulation_key);
  std::array<uint8_t, kVectorBytes> reencoded{};
  encode_vector12(reencoded, key.t_hat);
  if (!std::equal(reencoded.begin(), reencoded.end(), encapsulation_key.begin())) return WC_ERR_FORMAT;

  // (K, r) = G(m || H(ek)).
  std::array<uint8_t, 32> ek_hash{};
  sha3_256(ek_hash, encapsulation_key);
  Wiped<std::array<uint8_t, 64>> key_and_r;
  hash_g(key_and_r.value, randomness, ek_hash);
  pke_encrypt(ciphertext, key, randomness, std::span<const uint8_t>(key_and_r.value).last<32>());
  std::copy_n(key_and_r.value.begin(), 32, shared_secret.begin());
  return WC_OK;
}

wc_status mlkem768_decaps(std::span<uint8_t, kMlkemSharedSecretLen> shared_secret,
                          std::span<const uint8_t, kMlkem768DecapsulationKeyLen> decapsulation_key,
                          std::span<const uint8_t, kMlkem768CiphertextLen> ciphertext) {
  const auto dk_pke = decapsulation_key.subspan<kDkPkeOffset, kVectorBytes>();
  const auto ek = decapsulation_key.subspan<kDkEkOffset, kMlkem768EncapsulationKeyLen>();
  const auto ek_hash = decapsulation_key.subspan<kDkHashOffset, 32>();
  const auto z = decapsulation_key.subspan<kDkZOffset, 32>();

  // Section 7.3's hash check; ek and its hash are public.
  std::array<uint8_t, 32> computed_hash{};
  sha3_256(computed_hash, ek);
  if (!std::equal(computed_hash.begin(), computed_hash.end(), ek_hash.begin())) return WC_ERR_FORMAT;

  Wiped<std::array<uint8_t, 32>> message;
  pke_decrypt(message.value, dk_pke, ciphertext);
  Wiped<std::array<uint8_t, 64>> key_and_r;
  hash_g(key_and_r.value, message.value, ek_hash);

  // K-bar = J(z || c), the implicit-rejection secret.
  Wiped<std::array<uint8_t, 32>> rejection_key;
  {
    KeccakSponge j(kShake256Rate, kShakeDomain);
    j.absorb(z);
    j.absorb(ciphertext);
    j.squeeze(rejection_key.value);
  }

  PkeEncryptionKey key;
  load_encryption_key(key, ek);
  Wiped<std::array<uint8_t, kMlkem768CiphertextLen>> reencrypted;
  pke_encrypt(reencrypted.value, key, message.value, std::span<const uint8_t>(key_and_r.value).last<32>());

  // Fold every byte's difference into one value, then turn "any
  // difference" into an all-ones mask without a branch.
  uint32_t difference = 0;
  for (size_t i = 0; i < kMlkem768CiphertextLen; ++i) difference |= uint32_t{reencrypted.value[i]} ^ ciphertext[i];
  const uint8_t reject_mask = static_cast<uint8_t>(negative_mask(0u - difference));
  for (size_t i = 0; i < kMlkemSharedSecretLen; ++i)
    shared_secret[i] =
        static_cast<uint8_t>((key_and_r.value[i] & ~reject_mask) | (rejection_key.value[i] & reject_mask));
  return WC_OK;
}

}  // namespace warpcrypt::cpu
