// Fuzzes age's header and armor parsers. An input that opens like armor is
// dearmored (fed in pieces whose sizes come from its first byte) and the
// result parsed as a header; any other input is parsed as a header itself.
// Besides the sanitizers' checks: a refusal names its rule; accepted armor
// armors back to bytes that dearmor to the same file; an accepted header is
// the one spelling of its stanzas (encode_header writes the same bytes up
// to the MAC), so no two headers carry the same stanzas.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "age/age_armor.h"
#include "age/age_format.h"
#include "fuzz_support.h"

namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;
using warpcrypt::fuzz::require;

void check_header(std::string_view bytes) {
  age::Header header;
  bool need_more = false;
  const char *detail = nullptr;
  if (age::parse_header(bytes, &header, &need_more, &detail) != WC_OK) {
    require(detail != nullptr, "parse_header refused a header without a detail");
    return;
  }
  require(header.encoded_len <= bytes.size() && header.mac_input.size() < header.encoded_len,
          "the header's lengths are outside the input");
  age::FileKey file_key;
  std::string encoded;
  require(age::encode_header(kHostCrypto, header.stanzas, file_key, &encoded, &detail) == WC_OK,
          "an accepted header does not encode");
  require(encoded.compare(0, header.mac_input.size(), header.mac_input) == 0,
          "an accepted header is not the one spelling of its stanzas");
}

std::vector<uint8_t> dearmor(std::string_view text, size_t piece, bool *ok) {
  age::ArmorDecoder decoder;
  std::vector<uint8_t> out;
  const char *detail = nullptr;
  for (size_t at = 0; at < text.size(); at += piece) {
    if (decoder.feed(text.substr(at, piece), &out, &detail) != WC_OK) {
      require(detail != nullptr, "the armor decoder refused a piece without a detail");
      *ok = false;
      return out;
    }
  }
  *ok = decoder.finish(&detail) == WC_OK;
  require(*ok || detail != nullptr, "the armor decoder refused an ending without a detail");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  if (!age::looks_armored(input.substr(0, std::min<size_t>(input.size(), 64)))) {
    check_header(input);
    return 0;
  }
  const size_t piece = size == 0 ? 1 : data[0] % 97 + 1;
  bool ok = false;
  const std::vector<uint8_t> file = dearmor(input, piece, &ok);
  if (!ok) return 0;
  age::ArmorEncoder encoder;
  std::string armored;
  encoder.feed(file, &armored);
  encoder.finish(&armored);
  bool again = false;
  require(dearmor(armored, 4096, &again) == file && again, "accepted armor does not survive re-armoring");
  check_header(std::string_view(reinterpret_cast<const char *>(file.data()), file.size()));
  return 0;
}
