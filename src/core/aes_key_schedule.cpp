#include "core/aes_key_schedule.h"

#include "core/aes_tables.h"

namespace warpcrypt::aes {

RoundKeys expand_encrypt_key(const uint8_t *key, size_t key_len) {
  RoundKeys out{};
  const int nk = static_cast<int>(key_len / 4);
  out.rounds = nk + 6;
  const int total = 4 * (out.rounds + 1);
  const auto &sbox = tables().sbox;
  for (int i = 0; i < nk; ++i) {
    out.words[i] = uint32_t{key[4 * i]} | uint32_t{key[4 * i + 1]} << 8 |
                   uint32_t{key[4 * i + 2]} << 16 | uint32_t{key[4 * i + 3]} << 24;
  }
  auto sub_word = [&](uint32_t w) {
    return uint32_t{sbox[w & 0xff]} | uint32_t{sbox[(w >> 8) & 0xff]} << 8 |
           uint32_t{sbox[(w >> 16) & 0xff]} << 16 | uint32_t{sbox[w >> 24]} << 24;
  };
  uint8_t rcon = 1;
  for (int i = nk; i < total; ++i) {
    uint32_t temp = out.words[i - 1];
    if (i % nk == 0) {
      // RotWord moves byte 1 to byte 0: a right rotation of the LE word.
      temp = sub_word(temp >> 8 | temp << 24) ^ rcon;
      rcon = static_cast<uint8_t>((rcon << 1) ^ ((rcon & 0x80) ? 0x1b : 0));
    } else if (nk > 6 && i % nk == 4) {
      temp = sub_word(temp);
    }
    out.words[i] = out.words[i - nk] ^ temp;
  }
  return out;
}

RoundKeys make_decrypt_key(const RoundKeys &enc) {
  RoundKeys out{};
  out.rounds = enc.rounds;
  for (int round = 0; round <= enc.rounds; ++round) {
    for (int c = 0; c < 4; ++c) {
      const uint32_t w = enc.words[4 * (enc.rounds - round) + c];
      const bool inner = round != 0 && round != enc.rounds;
      out.words[4 * round + c] = inner ? inv_mix_column(w) : w;
    }
  }
  return out;
}

}  // namespace warpcrypt::aes
