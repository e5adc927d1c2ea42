// Launch shapes of the GPU kernels: tuning constants in one place, never
// literals scattered through the dispatch code. Measured on the H100; see
// docs/performance.md for the sweep that chose them.
#pragma once

#include <cstddef>

namespace warpcrypt::cuda::tuning {

// AES: 256 threads, each handling 4 blocks (64 bytes) per tile. The
// replicated T0/T2 table takes 64 KiB of shared memory per CTA (72 KiB when
// decrypting), so an SM holds 3 such CTAs.
inline constexpr int kAesThreads = 256;
inline constexpr int kAesBlocksPerThread = 4;

// Salsa20 and ChaCha20: each thread computes 2 keystream blocks (128 bytes),
// all in registers.
inline constexpr int kArxThreads = 256;
inline constexpr int kArxBlocksPerThread = 2;

// The reference kernel: one 16-byte block per thread.
inline constexpr int kReferenceThreads = 128;

// CBC/CFB encryption batches: one message per thread.
inline constexpr int kBatchThreads = 128;

// Persistent grids: this many resident CTAs per SM at most; more only adds
// tail effects without hiding more latency.
inline constexpr int kMaxCtasPerSm = 8;

}  // namespace warpcrypt::cuda::tuning
