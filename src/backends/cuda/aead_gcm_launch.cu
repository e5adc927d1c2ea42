// AES-GCM's launches: the only file that instantiates its kernels.
#include "backends/cuda/aead_keyed.cuh"
#include "backends/cuda/gcm_kernels.cuh"

namespace warpcrypt::cuda {

using namespace aead_shape;

wc_status KeyedGpuAead::queue_gcm_each(const DeviceContext &context, const AeadLaunch &launch,
                                       cudaStream_t stream) const {
  switch (gcm_->keys.rounds) {
    case 10: return queue_gcm_each_rounds<10>(context, launch, stream);
    case 12: return queue_gcm_each_rounds<12>(context, launch, stream);
    case 14: return queue_gcm_each_rounds<14>(context, launch, stream);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

template <int kRounds>
wc_status KeyedGpuAead::queue_gcm_each_rounds(const DeviceContext &context, const AeadLaunch &launch,
                                              cudaStream_t stream) const {
  const AesCtrGenerator<TTableAes, kRounds> cipher{gcm_->keys, 0, 0, context.tables};
  if (context.binary_tensor_cores && tensor_ghash_) {
    using Scheme = GcmEach<kRounds, true>;
    return queue_each_passes<Scheme, kGcmCtasPerSm>(context, typename Scheme::Key{cipher, gcm_->each_steps}, launch,
                                                    aead_each_gcm_tag_kernel<kRounds, kEachThreads, kGcmCtasPerSm>,
                                                    kEachThreads / 32 * 16, stream);
  }
  using Scheme = GcmEach<kRounds, false>;
  return queue_each_passes<Scheme, kGcmCtasPerSm>(context, typename Scheme::Key{cipher, gcm_->h_columns}, launch,
                                                  aead_each_tag_kernel<Scheme, kEachThreads, kGcmCtasPerSm>,
                                                  kEachThreads, stream);
}

wc_status KeyedGpuAead::launch_gcm(const DeviceContext &context, const AeadLaunch &launch, uint64_t segments,
                                   bool finish, cudaStream_t stream) const {
  switch (gcm_->keys.rounds) {
    case 10: return launch_gcm_rounds<10>(context, launch, segments, finish, stream);
    case 12: return launch_gcm_rounds<12>(context, launch, segments, finish, stream);
    case 14: return launch_gcm_rounds<14>(context, launch, segments, finish, stream);
  }
  return WC_ERR_INVALID_ARGUMENT;
}

template <int kRounds>
wc_status KeyedGpuAead::launch_gcm_rounds(const DeviceContext &context, const AeadLaunch &launch, uint64_t segments,
                                          bool finish, cudaStream_t stream) const {
  const GcmConstants &c = *gcm_;
  using Finish = GcmFinish<kRounds, kGcmFinishThreads>;
  const typename Finish::Key finish_key{{c.keys, 0, 0, context.tables}, c.h, c.finish_stride, c.finish_ladder};
  const AesCtrGenerator<TTableAes, kRounds> cipher{c.keys, 0, 0, context.tables};
  if (context.binary_tensor_cores && tensor_ghash_) {
    using Keystream = GcmBulk<kRounds, kThreads, kAesBlocksPerThread, true, BulkWork::keystream>;
    using Hash = GcmBulk<kRounds, kThreads, kAesBlocksPerThread, true, BulkWork::hash>;
    const typename Keystream::Key bulk_key{cipher, c.warp_steps, c.warp_ladder};
    // Sealing hashes the ciphertext the keystream pass wrote; opening
    // hashes the ciphertext before the keystream pass overwrites it in
    // place. The passes run one after the other: on two streams, in pieces
    // of the message, they slowed each other down (docs/lab-notes/performance-history.md).
    for (const bool keystream_pass : {launch.seal, !launch.seal}) {
      const wc_status status =
          keystream_pass
              ? launch_bulk<Keystream, kAesBlocksPerThread, kGcmTiles, kGcmCtasPerSm>(bulk_key, launch, segments,
                                                                                    stream)
              : launch_bulk<Hash, kAesBlocksPerThread, kGcmTiles, kGhashPassCtasPerSm>(bulk_key, launch, segments,
                                                                                     stream);
      if (status != WC_OK) return status;
    }
    return launch_finish<Finish, kGcmSegmentBlocks>(finish_key, launch, finish, stream);
  }
  using Bulk = GcmBulk<kRounds, kThreads, kAesBlocksPerThread, false, BulkWork::both>;
  const typename Bulk::Key bulk_key{cipher, c.thread_steps, c.thread_ladder};
  const wc_status status =
      launch_bulk<Bulk, kAesBlocksPerThread, kGcmTiles, kGcmCtasPerSm>(bulk_key, launch, segments, stream);
  return status != WC_OK ? status : launch_finish<Finish, kGcmSegmentBlocks>(finish_key, launch, finish, stream);
}

}  // namespace warpcrypt::cuda
