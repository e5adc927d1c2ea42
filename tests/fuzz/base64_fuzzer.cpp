// Fuzzes wc_base64_* (warpcrypt/text.h), `enc -a`'s coder: the input's first
// byte picks the size of the pieces the rest is fed in. The rest is decoded
// as text: it must succeed or fail with WC_ERR_FORMAT, and what it decodes
// to must encode and decode back to itself. The rest is also encoded as
// bytes, in lines and in one line (-A): lines of at most 64 characters each
// ending in LF, one line with none, and both decode back to the input.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fuzz_support.h"
#include "warpcrypt/warpcrypt.h"

namespace {

using warpcrypt::fuzz::require;
using Bytes = std::vector<uint8_t>;

// Codes `in` in pieces of `piece` bytes; the first failure's status.
wc_status code(wc_direction direction, bool one_line, std::span<const uint8_t> in, size_t piece, Bytes *out) {
  wc_base64 *made = nullptr;
  require(wc_base64_new(&made, direction, one_line ? 1 : 0) == WC_OK, "wc_base64_new failed");
  const std::unique_ptr<wc_base64, decltype(&wc_base64_free)> coder(made, wc_base64_free);
  out->clear();
  for (size_t at = 0; at < in.size(); at += piece) {
    const size_t n = std::min(piece, in.size() - at);
    Bytes room(wc_base64_update_bound(coder.get(), n));
    size_t written = 0;
    const wc_status status = wc_base64_update(coder.get(), room.data(), room.size(), &written, in.data() + at, n);
    require(written <= room.size(), "update wrote past its bound");
    if (status != WC_OK) return status;
    out->insert(out->end(), room.begin(), room.begin() + static_cast<std::ptrdiff_t>(written));
  }
  Bytes room(wc_base64_final_bound());
  size_t written = 0;
  const wc_status status = wc_base64_final(coder.get(), room.data(), room.size(), &written);
  out->insert(out->end(), room.begin(), room.begin() + static_cast<std::ptrdiff_t>(written));
  return status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0] + 1;
  const std::span<const uint8_t> rest(data + 1, size - 1);

  Bytes decoded;
  const wc_status status = code(WC_DECRYPT, false, rest, piece, &decoded);
  require(status == WC_OK || status == WC_ERR_FORMAT, "decoding failed with something other than FORMAT");
  if (status == WC_OK) {
    Bytes text;
    Bytes again;
    require(code(WC_ENCRYPT, false, decoded, piece, &text) == WC_OK, "re-encoding failed");
    require(code(WC_DECRYPT, false, text, piece, &again) == WC_OK && again == decoded, "round trip changed bytes");
  }

  for (bool one_line : {false, true}) {
    Bytes text;
    require(code(WC_ENCRYPT, one_line, rest, piece, &text) == WC_OK, "encoding failed");
    size_t column = 0;
    for (uint8_t c : text) {
      if (c == '\n') {
        require(!one_line && column > 0 && column <= 64, "a line break where there should be none");
        column = 0;
      } else {
        ++column;
      }
    }
    require(one_line || column == 0, "the text does not end in LF");
    Bytes back;
    require(code(WC_DECRYPT, false, text, piece, &back) == WC_OK, "decoding its own text failed");
    require(std::equal(back.begin(), back.end(), rest.begin(), rest.end()), "decoding its own text changed bytes");
  }
  return 0;
}
