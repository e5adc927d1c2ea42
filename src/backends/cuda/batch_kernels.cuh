// CBC and CFB128 encryption of many independent messages: each message is
// sequential, so parallelism comes from the messages, one per thread.
#pragma once

#include "backends/cuda/aes_device.cuh"
#include "backends/cuda/block_mode_kernels.cuh"
#include "backends/cuda/memory.cuh"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::cuda {

struct BatchJob {
  aes::RoundKeys keys;
  const uint8_t *in;
  uint8_t *out;
  const wc_batch_message *messages;
  uint64_t count;
  const uint8_t *ivs;  // 16 bytes per message
  bool padding;        // CBC: PKCS#7, one extra block when the length is a multiple of 16
  AesTablesView tables;
};

template <bool kCbc, int kRounds, int kThreads>
__global__ void __launch_bounds__(kThreads) batch_encrypt_kernel(const __grid_constant__ BatchJob job) {
  extern __shared__ uint32_t shared[];
  TTableAes cipher;
  cipher.load(shared, job.tables.enc0, nullptr);
  for (uint64_t m = uint64_t{blockIdx.x} * kThreads + threadIdx.x; m < job.count;
       m += uint64_t{gridDim.x} * kThreads) {
    const wc_batch_message message = job.messages[m];
    const uint8_t *in = job.in + message.in_offset;
    uint8_t *out = job.out + message.out_offset;
    uint4 chain = load_block(job.ivs + 16 * m, false);
    const uint64_t padded_len = kCbc && job.padding ? (message.in_len / 16 + 1) * 16 : message.in_len;
    for (uint64_t at = 0; at < padded_len; at += 16) {
      // Bytes past the message are the PKCS#7 pad byte (CBC) or unused (CFB).
      const uint64_t present = message.in_len > at ? min(uint64_t{16}, message.in_len - at) : 0;
      uint8_t bytes[16];
      const auto pad = static_cast<uint8_t>(16 - present);
      for (int i = 0; i < 16; ++i) bytes[i] = static_cast<uint64_t>(i) < present ? in[at + i] : pad;
      const uint4 plain = load_block(bytes, false);
      uint4 cipher_block;
      if constexpr (kCbc) {
        cipher_block = cipher.encrypt<kRounds>(plain ^ chain, job.keys);
      } else {
        cipher_block = cipher.encrypt<kRounds>(chain, job.keys) ^ plain;
      }
      const uint64_t written = kCbc ? 16 : present;
      const uint32_t words[4] = {cipher_block.x, cipher_block.y, cipher_block.z, cipher_block.w};
      for (uint64_t i = 0; i < written; ++i) out[at + i] = byte_of(words, static_cast<int>(i));
      chain = cipher_block;
    }
  }
}

}  // namespace warpcrypt::cuda
