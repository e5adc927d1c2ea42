// ECB encryption and decryption, CBC decryption and CFB128 decryption: the
// AES modes whose blocks are independent once the ciphertext is known.
//
// Work is cut into tiles of kThreads * kBlocksPerThread blocks; a persistent
// grid walks the tiles. CBC and CFB read the previous ciphertext block, so
// in-place decryption must not overwrite a block before its successor has
// read it: every thread loads its blocks and their predecessors, the CTA
// synchronises, and only then stores. A tile's first predecessor lives in
// the tile before, possibly on another CTA, so it is copied out beforehand
// into tile_chains by tile_chain_kernel.
#pragma once

#include <type_traits>

#include "backends/cuda/aes_device.cuh"
#include "backends/cuda/memory.cuh"

namespace warpcrypt::cuda {

enum class BlockMode { ecb_encrypt, ecb_decrypt, cbc_decrypt, cfb_decrypt };

__host__ __device__ constexpr bool chains(BlockMode mode) {
  return mode == BlockMode::cbc_decrypt || mode == BlockMode::cfb_decrypt;
}
// CFB decrypts by encrypting the previous ciphertext block.
__host__ __device__ constexpr bool uses_inverse_cipher(BlockMode mode) {
  return mode == BlockMode::ecb_decrypt || mode == BlockMode::cbc_decrypt;
}

struct AesTablesView {
  const uint32_t *enc0;  // 256 words each
  const uint32_t *dec0;
  const uint8_t *sbox;
  const uint8_t *inv_sbox;
};

struct BlockJob {
  aes::RoundKeys keys;  // the decryption schedule where the cipher needs it
  const uint8_t *in;
  uint8_t *out;
  uint64_t len;  // a multiple of 16, except that a CFB stream may end mid-block
  const uint8_t *tile_chains;  // 16 bytes per tile: the ciphertext block before it
  bool aligned;                // in and out are 16-byte aligned
  AesTablesView tables;
};

template <class Cipher>
__device__ __forceinline__ void load_cipher(Cipher &cipher, uint32_t *shared, const AesTablesView &t,
                                            bool inverse) {
  if constexpr (std::is_same_v<Cipher, TTableAes>) {
    cipher.load(shared, inverse ? t.dec0 : t.enc0, inverse ? t.inv_sbox : nullptr);
  } else {
    cipher.load(shared, t.sbox, t.inv_sbox);
  }
}

// Copies the last ciphertext block of every tile but the last into
// tile_chains[tile + 1]; tile_chains[0] is the caller's chain. Runs before
// the mode kernel on the same stream, so in-place work sees the originals.
__global__ void tile_chain_kernel(uint8_t *tile_chains, const uint8_t *in, uint64_t tiles,
                                  uint64_t tile_bytes, uint4 first_chain);

template <class Cipher, BlockMode kMode, int kRounds, int kThreads, int kBlocksPerThread>
__global__ void __launch_bounds__(kThreads) block_mode_kernel(const __grid_constant__ BlockJob job) {
  extern __shared__ uint32_t shared[];
  Cipher cipher;
  load_cipher(cipher, shared, job.tables, uses_inverse_cipher(kMode));

  constexpr uint64_t kTileBlocks = uint64_t{kThreads} * kBlocksPerThread;
  const uint64_t blocks = (job.len + 15) / 16;
  const uint64_t tiles = (blocks + kTileBlocks - 1) / kTileBlocks;
  for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    uint4 data[kBlocksPerThread];
    uint4 previous[kBlocksPerThread];
#pragma unroll
    for (int k = 0; k < kBlocksPerThread; ++k) {
      const uint64_t offset_in_tile = static_cast<uint64_t>(k) * kThreads + threadIdx.x;
      const uint64_t block = tile * kTileBlocks + offset_in_tile;
      if (block >= blocks) continue;
      const uint64_t at = block * 16;
      const bool whole = at + 16 <= job.len;
      if (whole) {
        data[k] = load_block(job.in + at, job.aligned);
      } else {  // the last, partial CFB block: zero-fill past the end
        uint8_t bytes[16] = {};
        for (uint64_t i = 0; at + i < job.len; ++i) bytes[i] = job.in[at + i];
        data[k] = load_block(bytes, false);
      }
      if constexpr (chains(kMode)) {
        previous[k] = offset_in_tile == 0 ? load_block(job.tile_chains + 16 * tile, false)
                                          : load_block(job.in + at - 16, job.aligned);
      }
    }
    if constexpr (chains(kMode)) __syncthreads();  // every load of this tile before any store
#pragma unroll
    for (int k = 0; k < kBlocksPerThread; ++k) {
      const uint64_t block = tile * kTileBlocks + static_cast<uint64_t>(k) * kThreads + threadIdx.x;
      if (block >= blocks) continue;
      uint4 result;
      if constexpr (kMode == BlockMode::ecb_encrypt) {
        result = cipher.template encrypt<kRounds>(data[k], job.keys);
      } else if constexpr (kMode == BlockMode::ecb_decrypt) {
        result = cipher.template decrypt<kRounds>(data[k], job.keys);
      } else if constexpr (kMode == BlockMode::cbc_decrypt) {
        result = cipher.template decrypt<kRounds>(data[k], job.keys) ^ previous[k];
      } else {
        result = cipher.template encrypt<kRounds>(previous[k], job.keys) ^ data[k];
      }
      const uint64_t at = block * 16;
      if (at + 16 <= job.len) {
        store_block(job.out + at, result, job.aligned);
      } else {
        const uint32_t words[4] = {result.x, result.y, result.z, result.w};
        for (uint64_t i = 0; at + i < job.len; ++i) job.out[at + i] = byte_of(words, static_cast<int>(i));
      }
    }
  }
}

}  // namespace warpcrypt::cuda
