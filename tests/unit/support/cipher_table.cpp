#include "support/cipher_table.h"

#include <stdexcept>

namespace wctest {

void PrintTo(const CipherSpec &spec, std::ostream *os) { *os << spec.name; }

const std::vector<CipherSpec> &all_cipher_specs() {
  static const std::vector<CipherSpec> specs = [] {
    std::vector<CipherSpec> table;
    for (size_t bits : {128, 192, 256}) {
      const std::string prefix = "aes-" + std::to_string(bits) + "-";
      const size_t key_len = bits / 8;
      table.push_back({prefix + "ecb", key_len, 0, 16, true, true, true});
      table.push_back({prefix + "cbc", key_len, 16, 16, true, true, true});
      table.push_back({prefix + "cfb", key_len, 16, 1, false, true, true});
      table.push_back({prefix + "cfb8", key_len, 16, 1, false, true, true});
      table.push_back({prefix + "ofb", key_len, 16, 1, false, false, true});
      table.push_back({prefix + "ctr", key_len, 16, 1, false, true, true});
    }
    table.push_back({"chacha20", 32, 16, 1, false, true, true});
    table.push_back({"salsa20", 32, 8, 1, false, true, false});
    table.push_back({"salsa20-128", 16, 8, 1, false, true, false});
    return table;
  }();
  return specs;
}

std::vector<CipherSpec> openssl_cipher_specs() {
  std::vector<CipherSpec> subset;
  for (const auto &spec : all_cipher_specs()) {
    if (spec.in_openssl) subset.push_back(spec);
  }
  return subset;
}

const CipherSpec &cipher_spec(const std::string &name) {
  for (const auto &spec : all_cipher_specs()) {
    if (spec.name == name) return spec;
  }
  throw std::out_of_range("no cipher spec named " + name);
}

std::string identifier_from(std::string text) {
  for (char &c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum) c = '_';
  }
  return text;
}

}  // namespace wctest
