// One-message AES-GCM throughput: warpcrypt's CPU AEAD (wc_aead_key_seal /
// _open, which on a CPU with VAES and VPCLMULQDQ runs
// src/backends/cpu/aes_gcm_vaes.cpp) against the OpenSSL EVP AES-GCM this
// process links on one thread, keyed once and given a new nonce per
// message, as the CPU AEAD used it before. 12-byte nonces, 16 bytes of
// AAD, 16-byte tags. Prints GB/s (10^9 bytes of message per second), the
// best of five rounds of about 0.2 s each, for AES-128/256 at 64 B, 1 KiB,
// 16 KiB, 256 KiB, 1 MiB and 4 MiB, and the same comparison for
// ChaCha20-Poly1305 (src/backends/cpu/chacha20_poly1305_segmented.cpp from
// 256 KiB on more than one thread) at 64 KiB, 1 MiB and 16 MiB.
//
// --threads N gives warpcrypt N threads (default 1, one core as OpenSSL;
// 0 means every usable CPU): a lone message of 256 KiB or more then runs
// in segments on up to N of them.
//
//   c++ -O2 -std=c++20 -Iinclude -o aes_gcm_bench bench/aes_gcm_bench.cpp \
//       build/src/libwarpcrypt.a -lcrypto -lsodium -pthread
//   ./aes_gcm_bench [--threads N]
#include <openssl/evp.h>
#include <warpcrypt/warpcrypt.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void require(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "aes_gcm_bench: %s failed\n", what);
    std::exit(1);
  }
}

// Best GB/s over five rounds of `call`, each round repeating it for ~0.2 s.
double best_gbps(size_t bytes_per_call, const std::function<void()> &call) {
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    size_t calls = 0;
    const Clock::time_point start = Clock::now();
    double seconds = 0;
    do {
      for (int i = 0; i < 16; ++i) call();
      calls += 16;
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    } while (seconds < 0.2);
    best = std::max(best, static_cast<double>(calls * bytes_per_call) / seconds / 1e9);
  }
  return best;
}

struct Message {
  std::vector<uint8_t> in, out, tag = std::vector<uint8_t>(16), nonce = std::vector<uint8_t>(12, 7),
                                aad = std::vector<uint8_t>(16, 3);
};

double warpcrypt_gbps(const std::string &name, const std::vector<uint8_t> &key, Message &m, bool seal,
                      unsigned threads) {
  wc_options options;
  wc_options_init(&options);
  options.backend = WC_BACKEND_CPU;
  options.threads = threads;
  wc_aead_key *keyed = nullptr;
  require(wc_aead_key_new(&keyed, &options, wc_aead_by_name(name.c_str()), key.data(), key.size()) == WC_OK,
          "wc_aead_key_new");
  wc_aead_message message{m.out.data(),   m.in.data(),  m.in.size(),  m.nonce.data(),
                          m.nonce.size(), m.aad.data(), m.aad.size(), m.tag.data()};
  require(wc_aead_key_seal(keyed, &message, 1, 16) == WC_OK, "wc_aead_key_seal");
  std::vector<uint8_t> ciphertext = m.out;
  wc_aead_message opening{m.in.data(),    ciphertext.data(), m.in.size(),  m.nonce.data(),
                          m.nonce.size(), m.aad.data(),      m.aad.size(), m.tag.data()};
  wc_status result = WC_OK;
  const double gbps = best_gbps(m.in.size(), [&] {
    if (seal) {
      require(wc_aead_key_seal(keyed, &message, 1, 16) == WC_OK, "seal");
    } else {
      require(wc_aead_key_open(keyed, &result, &opening, 1, 16) == WC_OK, "open");
    }
  });
  wc_aead_key_free(keyed);
  return gbps;
}

double openssl_gbps(const std::string &name, const std::vector<uint8_t> &key, Message &m, bool seal) {
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  const int enc = seal ? 1 : 0;
  require(
      cipher != nullptr && ctx != nullptr && EVP_CipherInit_ex2(ctx, cipher, key.data(), nullptr, enc, nullptr) == 1,
      "EVP keying");
  int n = 0;
  if (!seal) {  // a valid tag to check
    EVP_CIPHER_CTX *sealer = EVP_CIPHER_CTX_new();
    require(EVP_EncryptInit_ex2(sealer, cipher, key.data(), m.nonce.data(), nullptr) == 1 &&
                EVP_EncryptUpdate(sealer, nullptr, &n, m.aad.data(), static_cast<int>(m.aad.size())) == 1 &&
                EVP_EncryptUpdate(sealer, m.out.data(), &n, m.in.data(), static_cast<int>(m.in.size())) == 1 &&
                EVP_EncryptFinal_ex(sealer, m.out.data(), &n) == 1 &&
                EVP_CIPHER_CTX_ctrl(sealer, EVP_CTRL_AEAD_GET_TAG, 16, m.tag.data()) == 1,
            "EVP sealing");
    EVP_CIPHER_CTX_free(sealer);
  }
  std::vector<uint8_t> text = seal ? m.in : m.out;
  std::vector<uint8_t> result(text.size());
  const double gbps = best_gbps(text.size(), [&] {
    bool ok = EVP_CipherInit_ex2(ctx, nullptr, nullptr, m.nonce.data(), enc, nullptr) == 1 &&
              EVP_CipherUpdate(ctx, nullptr, &n, m.aad.data(), static_cast<int>(m.aad.size())) == 1 &&
              EVP_CipherUpdate(ctx, result.data(), &n, text.data(), static_cast<int>(text.size())) == 1;
    if (!seal) ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, m.tag.data()) == 1;
    ok = ok && EVP_CipherFinal_ex(ctx, result.data(), &n) == 1;
    if (seal) ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, m.tag.data()) == 1;
    require(ok, "EVP message");
  });
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
  return gbps;
}

// The --threads value, or exits with a usage line.
unsigned threads_from_args(int argc, char **argv) {
  if (argc == 1) return 1;
  char *end = nullptr;
  const unsigned long threads = argc == 3 && std::string(argv[1]) == "--threads" ? std::strtoul(argv[2], &end, 10) : 0;
  if (end == nullptr || *end != '\0' || end == argv[2] || threads > 4096) {
    std::fprintf(stderr, "usage: aes_gcm_bench [--threads N]\n");
    std::exit(2);
  }
  return static_cast<unsigned>(threads);
}

}  // namespace

int main(int argc, char **argv) {
  const unsigned threads = threads_from_args(argc, argv);
  std::printf("warpcrypt on %u thread(s) (0: every usable CPU), OpenSSL on 1\n", threads);
  std::printf("%-17s %-8s %8s %14s %14s %7s\n", "aead", "call", "bytes", "warpcrypt GB/s", "OpenSSL GB/s", "ratio");
  struct Case {
    std::string name;
    size_t key_len;
    std::vector<size_t> sizes;
  };
  const std::vector<size_t> gcm_sizes = {64, 1024, 16384, size_t{256} << 10, size_t{1} << 20, size_t{4} << 20};
  const std::vector<Case> cases = {{"aes-128-gcm", 16, gcm_sizes},
                                   {"aes-256-gcm", 32, gcm_sizes},
                                   {"chacha20-poly1305", 32, {size_t{64} << 10, size_t{1} << 20, size_t{16} << 20}}};
  for (const auto &[name, key_len, sizes] : cases) {
    const std::vector<uint8_t> key(key_len, 0x42);
    for (size_t size : sizes) {
      for (bool seal : {true, false}) {
        Message m;
        m.in.assign(size, 0x5c);
        m.out.assign(size, 0);
        const double ours = warpcrypt_gbps(name, key, m, seal, threads);
        const double theirs = openssl_gbps(name, key, m, seal);
        std::printf("%-17s %-8s %8zu %14.2f %14.2f %7.2f\n", name.c_str(), seal ? "seal" : "open", size, ours, theirs,
                    ours / theirs);
      }
    }
  }
  return 0;
}
