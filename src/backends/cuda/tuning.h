// Launch shapes of the GPU kernels: tuning constants in one place, never
// literals scattered through the dispatch code. Measured on the H100; see
// docs/lab-notes/performance-history.md for the sweep that chose them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace warpcrypt::cuda::tuning {

// AES: 256 threads, each handling 4 blocks (64 bytes) per tile. The
// replicated T0/T2 table takes 64 KiB of shared memory per CTA (72 KiB when
// decrypting; CTR adds 1.25 KiB of its warps' counter groups), so an SM
// holds 3 such CTAs.
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

// AEAD (aead_kernels.cuh): one CTA per segment of a message, a keystream
// tile (threads x blocks per thread) repeated kTilesPerSegment times. A
// segment pays a fixed cost at its start (for AES-GCM the GHASH step's 8 KiB
// of nibble tables, for ChaCha20-Poly1305 the Poly1305 key and its powers on
// one thread) and at its end (joining a thread's chains and its lane factor:
// in GF(2^128) about 4000 integer operations per thread), so segments are
// long enough to hide it: 256 KiB for both. Shorter segments spread a
// message over more SMs and leave less idle in the last wave (measured on
// the H100, docs/lab-notes/performance-history.md: ChaCha20-Poly1305 lost 2 % with 512 KiB;
// AES-GCM gains up to 3 % on one 1 GiB message with 1 MiB, which would
// leave a message of a few MiB, and each 8 MiB piece from host memory, a
// quarter of the CTAs). Thread counts and blocks per thread must be powers
// of two.
inline constexpr int kAeadThreads = 256;
inline constexpr int kAeadAesTilesPerSegment = 16;
// ChaCha20-Poly1305 takes one keystream block per thread and tile, not the
// plain kernel's two: the kernel is bound by latency, and the registers a
// second block in flight needs cost the SM a third of its warps (measured
// on the H100, see docs/lab-notes/performance-history.md).
inline constexpr int kAeadArxBlocksPerThread = 1;
inline constexpr int kAeadArxTilesPerSegment = 16;
// Resident CTAs per SM the compiler must leave registers for: an AES-GCM
// CTA's 65.3 KiB of shared memory (T-table, the warps' counter groups; 73.3
// with GHASH's nibble-table step where the bulk runs in one pass) allow
// three per SM, so registers must too (at most 80 per thread).
// ChaCha20-Poly1305: four, 64 registers per thread; the compiler spills 24
// bytes a thread, and still four CTAs ran 3 % faster than three without a
// spill (five spill 108 bytes).
inline constexpr int kAeadAesBlocksPerSm = 3;
inline constexpr int kAeadArxBlocksPerSm = 4;
// GCM's GHASH pass on the tensor cores: a warp's chains take four slots of
// a tile (4 x 32 blocks) per step, one packing of the mmas' sums for all,
// their fragments 16 KiB of the pass's shared memory, which holds no
// T-table; four CTAs per SM, 64 registers a thread, no spill. Measured on an
// H200 (docs/lab-notes/performance-history.md): 0.73 ms a GiB against 0.84 with two slots a
// step at two CTAs and 128 registers (two slots spill 276 bytes a thread at
// four CTAs, 124 at three).
inline constexpr int kAeadGhashGroupsPerStep = 4;
inline constexpr int kAeadGhashPassBlocksPerSm = 4;
// The finish kernel: one CTA per message, whose threads share the combining
// of the segments' values before one thread takes the tail and the tag.
// Wider CTAs combine a long message's segments in fewer steps; narrower ones
// let an SM hold more of them, which a batch of one-segment messages needs
// (its finish is one thread's work, 128 registers). Measured on the H100
// (docs/lab-notes/performance-history.md): AES-GCM keeps 256 threads, as one 1 GiB message's
// 4096 segments take almost twice as long to finish with 64;
// ChaCha20-Poly1305 takes 64, so that 16,384 of age's 64 KiB chunks finish
// in 0.34 ms instead of 0.83, for some 8 us more on a 1 GiB message.
inline constexpr int kAeadAesFinishThreads = 256;
inline constexpr int kAeadArxFinishThreads = 64;
// Messages up to 16 KiB (a sixteenth of an AES-GCM segment) run in two
// passes instead, 256 threads per CTA: a segment each would leave its CTA
// almost idle and pay its set-up per message. The keystream pass gives each
// thread 64 bytes of a message (one ChaCha20 block, four AES blocks as the
// CTR kernel's tile), so a CTA holds a whole message of the longest kind;
// the tag pass gives each thread a message.
inline constexpr size_t kAeadEachMaxBytes = 16 * 1024;
inline constexpr int kAeadEachThreads = 256;
inline constexpr uint64_t kAeadEachItemBytes = 64;
static_assert(kAeadEachMaxBytes / kAeadEachItemBytes <= kAeadEachThreads, "a CTA's turn holds a whole message");
// A long host-memory message's pieces: at most 8 MiB each (a whole number
// of segments of either AEAD plus room for the tail, tag and verdict).
// Measured on the H100 from pinned memory (see
// docs/lab-notes/performance-history.md): 8 MiB beat 2, 4, 16 and 32 MiB; a
// piece's kernel runs only 32 segments, so a longer piece waits on one
// under-filled wave and a shorter one on launch and copy latency. (Four
// lanes per device beat six and eight: engine/staged_aead.cpp.)
inline constexpr size_t kAeadHostLaneBytes = (size_t{8} << 20) + 256;

}  // namespace warpcrypt::cuda::tuning
