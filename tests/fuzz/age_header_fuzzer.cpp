// Fuzzes age's header and armor parsers. An input that opens like armor is
// dearmored (fed in pieces whose sizes come from its first byte) and the
// result parsed as a header; any other input is parsed as a header itself.
// Besides the sanitizers' checks: a refusal names its rule; accepted armor
// armors back to bytes that dearmor to the same file; an accepted header is
// the one spelling of its stanzas (encode_header writes the same bytes up
// to the MAC), so no two headers carry the same stanzas. Every input also
// goes to wc_age_inspect_fd (age-inspect's call), through a memory file:
// it must agree with the parsers here on whether the input is armored and
// which stanzas its header holds, name the rule when it refuses, and give
// sizes that add up to the input.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "age/age_armor.h"
#include "age/age_format.h"
#include "fuzz_support.h"
#include "warpcrypt/age.h"

namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;
using warpcrypt::fuzz::require;

// The header parsed from `bytes`, or nothing.
bool check_header(std::string_view bytes, age::Header *parsed = nullptr) {
  age::Header header;
  bool need_more = false;
  const char *detail = nullptr;
  if (age::parse_header(bytes, &header, &need_more, &detail) != WC_OK) {
    require(detail != nullptr, "parse_header refused a header without a detail");
    return false;
  }
  require(header.encoded_len <= bytes.size() && header.mac_input.size() < header.encoded_len,
          "the header's lengths are outside the input");
  age::FileKey file_key;
  std::string encoded;
  require(age::encode_header(kHostCrypto, header.stanzas, file_key, &encoded, &detail) == WC_OK,
          "an accepted header does not encode");
  require(encoded.compare(0, header.mac_input.size(), header.mac_input) == 0,
          "an accepted header is not the one spelling of its stanzas");
  if (parsed != nullptr) *parsed = std::move(header);
  return true;
}

// wc_age_inspect_fd on the input. `header` is what the parsers above made of
// the (dearmored) file, when they accepted it; `binary_len` that file's
// length.
void check_inspect(std::string_view input, bool armored, const age::Header *header, size_t binary_len) {
  const int fd = memfd_create("age-inspect-fuzz", MFD_CLOEXEC);
  require(fd >= 0, "memfd_create failed");
  size_t written = 0;
  while (written < input.size()) {
    const ssize_t n = write(fd, input.data() + written, input.size() - written);
    require(n > 0, "writing the memory file failed");
    written += static_cast<size_t>(n);
  }
  require(lseek(fd, 0, SEEK_SET) == 0, "lseek failed");
  wc_job job;
  wc_job_init(&job);
  wc_age_info info{};
  const wc_status status = wc_age_inspect_fd(fd, &info, &job);
  close(fd);
  if (status != WC_OK) {
    require(status == WC_ERR_FORMAT && job.detail != nullptr, "inspect refused an input without naming the rule");
    require(info.stanza_types == nullptr && info.stanza_count == 0, "a refused inspection left stanzas");
    return;
  }
  require(header != nullptr, "inspect accepted a file the header parser refuses");
  require((info.armored != 0) == armored, "inspect and looks_armored disagree");
  require(info.stanza_count == header->stanzas.size(), "inspect counts other stanzas than the parser");
  for (size_t i = 0; i < info.stanza_count; ++i) {
    require(header->stanzas[i].type == info.stanza_types[i], "inspect names another stanza type");
  }
  require(info.header_bytes == header->encoded_len, "inspect's header length is not the parser's");
  require(info.file_bytes == input.size() && info.file_bytes - info.armor_bytes == binary_len,
          "inspect's lengths are not the input's");
  require(info.header_bytes + info.armor_bytes + info.overhead_bytes + info.payload_bytes == info.file_bytes,
          "inspect's sizes do not add up to the file");
  require(info.overhead_bytes == 16 + 16 * info.chunk_count && info.chunk_count >= 1 &&
              info.payload_bytes <= info.chunk_count * 64 * 1024 &&
              (info.chunk_count == 1 || info.payload_bytes > (info.chunk_count - 1) * 64 * 1024),
          "inspect's chunks do not hold its payload");
  wc_age_info_release(&info);
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
  // Armor or not, decided as decrypting and inspecting decide it: by the
  // first character past any whitespace.
  const size_t first = input.find_first_not_of(" \t\r\n");
  if (!age::looks_armored(input.substr(0, first == std::string_view::npos ? input.size() : first + 1))) {
    age::Header header;
    const bool parsed = check_header(input, &header);
    check_inspect(input, false, parsed ? &header : nullptr, input.size());
    return 0;
  }
  const size_t piece = size == 0 ? 1 : data[0] % 97 + 1;
  bool ok = false;
  const std::vector<uint8_t> file = dearmor(input, piece, &ok);
  if (!ok) {
    check_inspect(input, true, nullptr, 0);
    return 0;
  }
  age::ArmorEncoder encoder;
  std::string armored;
  encoder.feed(file, &armored);
  encoder.finish(&armored);
  bool again = false;
  require(dearmor(armored, 4096, &again) == file && again, "accepted armor does not survive re-armoring");
  age::Header header;
  const bool parsed = check_header(std::string_view(reinterpret_cast<const char *>(file.data()), file.size()), &header);
  check_inspect(input, true, parsed ? &header : nullptr, file.size());
  return 0;
}
