// Fuzzes age's post-quantum hybrid keys and stanza
// (src/age/keys/hybrid_key.cpp, HPKE's receiver in src/backends/cpu/hpke.cpp).
// An input that opens like an age header is parsed as one, and each of its
// stanzas goes alone to the hybrid type's unwrap under a fixed identity
// (kIdentity); any other
// input is read as key text, by parse_recipient and parse_identity. Besides
// the sanitizers' checks: a refusal names its rule; a stanza that opens
// gives the file key the seed corpus wrapped (the AEAD admits no other); an
// accepted key is the one spelling of its bytes (it formats back to the
// input), and a recipient accepted as hybrid holds 1216 bytes.
//
// The seed corpus (corpus/age_pq) is written by make_age_pq_corpus.py from
// the Python reference of tests/cli/test_age_pq_reference.py.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "age/age_format.h"
#include "age/age_keys.h"
#include "age/key_table.h"
#include "fuzz_support.h"

namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;
using warpcrypt::fuzz::require;

// make_age_pq_corpus.py's identity (bytes 0..31) and file key (16 x 0x42).
age::Identity fixed_identity() {
  age::Identity identity;
  identity.type = age::KeyType::hybrid;
  for (size_t i = 0; i < identity.secret_key.size(); ++i) identity.secret_key[i] = static_cast<uint8_t>(i);
  return identity;
}
const age::Identity kIdentity = fixed_identity();
constexpr uint8_t kFileKeyByte = 0x42;

void check_stanzas(std::string_view bytes) {
  age::Header header;
  bool need_more = false;
  const char *detail = nullptr;
  if (age::parse_header(bytes, &header, &need_more, &detail) != WC_OK) return;
  const age::KeyTypeEntry &hybrid = age::key_type(age::KeyType::hybrid);
  const std::vector<const age::Identity *> identities = {&kIdentity};
  for (const age::Stanza &stanza : header.stanzas) {
    age::Header alone;
    alone.stanzas = {stanza};
    age::FileKey file_key;
    detail = nullptr;
    const wc_status status = hybrid.unwrap(kHostCrypto, identities, alone, &file_key, &detail);
    require(status == WC_OK || status == WC_ERR_NO_IDENTITY || status == WC_ERR_FORMAT,
            "the hybrid unwrap answered an unexpected status");
    if (status == WC_ERR_FORMAT) require(detail != nullptr, "the hybrid unwrap refused a stanza without a detail");
    if (status == WC_OK) {
      require(stanza.type == hybrid.stanza, "a stanza of another type opened");
      require(std::all_of(file_key.bytes.begin(), file_key.bytes.end(), [](uint8_t b) { return b == kFileKeyByte; }),
              "a stanza opened to a file key nobody wrapped");
    }
  }
}

void check_keys(std::string_view text) {
  const char *detail = nullptr;
  age::Recipient recipient;
  const wc_status recipient_status = age::parse_recipient(text, &recipient, &detail);
  if (recipient_status != WC_OK) {
    require(detail != nullptr, "parse_recipient refused without a detail");
  } else if (recipient.type == age::KeyType::hybrid) {
    require(recipient.hybrid_public_key.size() == warpcrypt::hpke_public_key_len(warpcrypt::HpkeKem::mlkem768_x25519),
            "a hybrid recipient of the wrong size");
    std::string spelled;
    require(age::format_recipient(recipient, &spelled, &detail) == WC_OK && spelled == text,
            "an accepted age1pq1 recipient is not its one spelling");
  }
  detail = nullptr;
  age::Identity identity;
  const wc_status identity_status = age::parse_identity(text, &identity, &detail);
  if (identity_status != WC_OK) {
    require(detail != nullptr, "parse_identity refused without a detail");
  } else if (identity.type == age::KeyType::hybrid) {
    std::string spelled;
    require(age::format_identity(identity, &spelled, &detail) == WC_OK && spelled == text,
            "an accepted PQ identity is not its one spelling");
    age::Recipient derived;
    require(age::recipient_of(kHostCrypto, identity, &derived, &detail) == WC_OK, "a PQ identity has no recipient");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  if (input.starts_with("age-encryption.org/")) {
    check_stanzas(input);
  } else {
    check_keys(input);
  }
  return 0;
}
