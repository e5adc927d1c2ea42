// ChaCha20-Poly1305's launches: the only file that instantiates its kernels.
#include "backends/cuda/aead_keyed.cuh"
#include "backends/cuda/chacha_poly_kernels.cuh"

namespace warpcrypt::cuda {

using namespace aead_shape;

wc_status KeyedGpuAead::queue_chacha_each(const DeviceContext &context, const AeadLaunch &launch,
                                          cudaStream_t stream) const {
  return queue_each_passes<ChaChaPolyEach, tuning::kAeadArxBlocksPerSm>(
      context, ChaChaPolyKey{arx_}, launch,
      aead_each_tag_kernel<ChaChaPolyEach, kEachThreads, tuning::kAeadArxBlocksPerSm>, kEachThreads, stream);
}

wc_status KeyedGpuAead::launch_chacha(const AeadLaunch &launch, uint64_t segments, bool finish,
                                      cudaStream_t stream) const {
  using Bulk = ChaChaPolyBulk<kThreads, kChaChaBlocksPerThread>;
  using Finish = ChaChaPolyFinish<tuning::kAeadArxFinishThreads, kChaChaSegmentBlocks>;
  const ChaChaPolyKey chacha_key{arx_};
  const wc_status status =
      launch_bulk<Bulk, kChaChaBlocksPerThread, tuning::kAeadArxTilesPerSegment, tuning::kAeadArxBlocksPerSm>(
          chacha_key, launch, segments, stream);
  return status != WC_OK ? status : launch_finish<Finish, kChaChaSegmentBlocks>(chacha_key, launch, finish, stream);
}

}  // namespace warpcrypt::cuda
