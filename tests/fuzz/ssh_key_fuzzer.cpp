// Fuzzes the SSH key parsers of age/ssh_keys.h. The input's first byte
// picks what the rest is (its value modulo 3): an authorized_keys line
// (parse_ssh_public_key), an OpenSSH private key file
// (parse_openssh_key_file), which, when parsed, is opened as well:
// unencrypted ones for free, encrypted ones with the passphrase "fuzz" when
// their bcrypt rounds are few (the seeds use one round: more would spend the
// run in the KDF, which is no parser), or a PEM private key file
// (parse_pem_key_file), opened with "fuzz" too (legacy PEM encryption's KDF
// is one MD5), its DER read by HostCrypto. Every form also goes through the
// age_keys dispatch (-R and -i files).
// Besides the sanitizers' checks: a refusal names its reason and is one of
// the statuses the header promises; an accepted key is of its type's shape.
//
// The seeds of corpus/ssh_key were made with ssh-keygen (-t ed25519 and
// -t rsa -b 2048, with -N "" and with -N fuzz -a 1, and -t ecdsa; PEM: -t
// rsa -m PEM with -N "" and with -N fuzz, its public line after it) and
// openssl genpkey (ed25519, PKCS#8), each file prefixed with its selector
// byte (0: public line, 1: OpenSSH private file, 2: PEM private file).
#include <cstdint>
#include <string_view>
#include <vector>

#include "age/age_keys.h"
#include "age/ssh_keys.h"
#include "core/host_crypto.h"
#include "fuzz_support.h"

namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;
using warpcrypt::fuzz::require;

constexpr uint32_t kMostRoundsToOpen = 2;

void check_key_shape(const age::SshPublicKey &key) {
  require(!key.wire.empty(), "an accepted key has no blob");
  if (key.type == age::SshKeyType::rsa) {
    require(key.rsa.n.size() >= age::kMinRsaModulusBytes && !key.rsa.e.empty(), "an accepted RSA key is too short");
    require(key.rsa.n[0] != 0 && key.rsa.e[0] != 0, "an accepted RSA integer has a leading zero");
  }
}

void fuzz_public_line(std::string_view text) {
  age::SshPublicKey key;
  const char *detail = nullptr;
  const wc_status status = age::parse_ssh_public_key(text, &key, &detail);
  if (status == WC_OK) {
    check_key_shape(key);
  } else {
    require(status == WC_ERR_FORMAT || status == WC_ERR_UNSUPPORTED, "a public line refused with another status");
    require(detail != nullptr, "a public line refused without a detail");
  }
  std::vector<age::Recipient> recipients;
  detail = nullptr;
  if (age::parse_recipients_file(text, &recipients, &detail) != WC_OK) {
    require(detail != nullptr, "a recipients file refused without a detail");
  }
}

void fuzz_identities_file(std::string_view text) {
  std::vector<age::Identity> identities;
  const char *detail = nullptr;
  if (age::parse_identities_file(text, &identities, &detail) != WC_OK) {
    require(detail != nullptr, "an identity file refused without a detail");
  }
}

void fuzz_private_file(std::string_view text) {
  age::OpensshKeyFile file;
  const char *detail = nullptr;
  const wc_status status = age::parse_openssh_key_file(text, &file, &detail);
  if (status != WC_OK) {
    require(status == WC_ERR_FORMAT || status == WC_ERR_UNSUPPORTED, "a key file refused with another status");
    require(detail != nullptr, "a key file refused without a detail");
  } else {
    check_key_shape(file.public_key);
    require(!file.encrypted() || (file.rounds >= 1 && file.rounds <= age::kMaxBcryptRounds),
            "an accepted encrypted key's rounds are out of bounds");
    if (!file.encrypted() || file.rounds <= kMostRoundsToOpen) {
      age::SshPrivateKey key;
      const std::string_view passphrase = "fuzz";
      const wc_status opened = age::open_openssh_key_file(
          kHostCrypto, file, {reinterpret_cast<const uint8_t *>(passphrase.data()), passphrase.size()}, &key, &detail);
      require(opened == WC_OK || opened == WC_ERR_FORMAT || opened == WC_ERR_AUTH,
              "opening a key file failed with another status");
      require(opened == WC_OK || detail != nullptr, "opening a key file failed without a detail");
    }
  }
  fuzz_identities_file(text);
}

void fuzz_pem_file(std::string_view text) {
  age::PemKeyFile file;
  const char *detail = nullptr;
  const wc_status status = age::parse_pem_key_file(text, &file, &detail);
  if (status != WC_OK) {
    require(status == WC_ERR_FORMAT || status == WC_ERR_UNSUPPORTED, "a PEM key file refused with another status");
    require(detail != nullptr, "a PEM key file refused without a detail");
  } else {
    require(file.cipher == nullptr || !file.iv.empty(), "an accepted encrypted PEM key has no IV");
    age::SshPrivateKey key;
    const std::string_view passphrase = "fuzz";
    const wc_status opened = age::open_pem_key_file(
        kHostCrypto, file, {reinterpret_cast<const uint8_t *>(passphrase.data()), passphrase.size()}, &key, &detail);
    require(opened == WC_OK || opened == WC_ERR_FORMAT || opened == WC_ERR_AUTH || opened == WC_ERR_UNSUPPORTED,
            "opening a PEM key file failed with another status");
    require(opened == WC_OK || detail != nullptr, "opening a PEM key file failed without a detail");
    if (opened == WC_OK) check_key_shape(key.public_key);
  }
  fuzz_identities_file(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char *>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      fuzz_public_line(rest);
      break;
    case 1:
      fuzz_private_file(rest);
      break;
    default:
      fuzz_pem_file(rest);
  }
  return 0;
}
