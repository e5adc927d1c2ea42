// The secrets the open_fd seeds are sealed with and open_fd_fuzzer opens
// every input with: mutations of a seed then get past the key derivation
// and reach the chunks' authentication and the layout behind it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace warpcrypt::fuzz {

// An AEAD's key is the first wc_aead_key_len() bytes.
inline constexpr std::array<uint8_t, 32> kKey = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};

inline constexpr std::string_view kPassphrase = "warpcrypt fuzz passphrase";

// Low, so that PBKDF2 does not dominate an execution: open_fd_fuzzer runs it
// up to four times per input.
inline constexpr uint32_t kSeedIterations = 100;

// Argon2id's cheapest costs, for the same reason: one pass over libsodium's
// least memory, 8 KiB.
inline constexpr uint32_t kSeedArgon2Ops = 1;
inline constexpr uint64_t kSeedArgon2Memory = 8 << 10;

}  // namespace warpcrypt::fuzz
