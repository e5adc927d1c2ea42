// The device-pointer AEAD calls against the CPU backend (itself checked
// against OpenSSL by the unit tests): lengths on every side of the kernels'
// segment boundaries, in place and unaligned, batches of mixed messages,
// tampering detected with the whole output zeroed, strided batches, GCM's
// 32-bit counter wrapping, the argument checks, and host memory through the
// GPU's lanes. Guard bytes surround every buffer.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "aead_support.h"
#include "backends/cuda/gf128_device.cuh"
#include "engine/placement.h"
#include "core/backend_tables.h"
#include "gpu_support.h"
#include "support/cipher_table.h"
#include "support/test_rng.h"
#include "support/warpcrypt_calls.h"

namespace wctest {
namespace {

constexpr size_t KiB = 1024;

const wc_aead *aead_of(const std::string &name) { return wc_aead_by_name(name.c_str()); }

// 0 to 4097 bytes, then both sides of every power of two from 16 KiB to
// 2 MiB: wherever the kernels' segments end, some length straddles it.
std::vector<size_t> boundary_lengths() {
  std::vector<size_t> lengths = {0, 1, 15, 16, 17, 63, 64, 65, 1000, 4095, 4096, 4097};
  for (size_t power = 16 * KiB; power <= 2048 * KiB; power *= 2) {
    for (long delta : {-65L, -64L, -1L, 0L, 1L, 16L, 64L, 65L}) lengths.push_back(power + delta);
  }
  return lengths;
}

// The first `count` verdicts (int32 each) an opening call wrote to `verified`.
std::vector<int32_t> download_verdicts(const DeviceBuffer &verified, size_t count) {
  const Bytes bytes = verified.download(sizeof(int32_t) * count);
  std::vector<int32_t> verdicts(count);
  std::memcpy(verdicts.data(), bytes.data(), bytes.size());
  return verdicts;
}

// The device calls' results, downloaded.
struct DeviceSealed {
  Bytes ciphertext;
  Bytes tag;
};

class AeadDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { WCTEST_REQUIRE_GPU(); }
  const std::string &name() const { return GetParam(); }

  AeadInput random_input(size_t length) {
    const size_t nonce_len = is_gcm(name()) && rng_.uniform(0, 2) == 0 ? rng_.uniform(1, WC_AEAD_MAX_NONCE_LEN) : 12;
    return random_aead_input(rng_, name(), length, rng_.uniform(0, 1) * rng_.uniform(0, 50), nonce_len);
  }

  // Seals in place in device memory, checking the guard bytes.
  DeviceSealed seal_on_device(const AeadInput &input) {
    const size_t length = input.plaintext.size();
    DeviceBuffer data(length), tag(16);
    data.upload(input.plaintext);
    EXPECT_EQ(wc_aead_seal_device_async(aead_of(name()), data.at(0), tag.at(0), input.tag_len,
                                        input.key.data(), input.key.size(), input.nonce.data(), input.nonce.size(),
                                        data_or_dummy(input.aad), input.aad.size(), data.at(0), length, nullptr),
              WC_OK);
    synchronize_device();
    EXPECT_TRUE(data.guard_bytes_intact(length));
    EXPECT_TRUE(tag.guard_bytes_intact(input.tag_len));
    return {data.download(length), tag.download(input.tag_len)};
  }

  // Opens out of place; returns the verdict and the output buffer.
  std::pair<int32_t, Bytes> open_on_device(const AeadInput &input, const Bytes &ciphertext, const Bytes &tag) {
    DeviceBuffer in(ciphertext.size()), out(ciphertext.size()), tag_buffer(tag.size()), verified(sizeof(int32_t));
    in.upload(ciphertext);
    tag_buffer.upload(tag);
    auto *verdict = reinterpret_cast<int32_t *>(verified.at(0));
    EXPECT_EQ(wc_aead_open_device_async(aead_of(name()), out.at(0), verdict, input.key.data(),
                                        input.key.size(), input.nonce.data(), input.nonce.size(),
                                        data_or_dummy(input.aad), input.aad.size(), in.at(0), ciphertext.size(),
                                        tag_buffer.at(0), tag.size(), nullptr),
              WC_OK);
    synchronize_device();
    EXPECT_TRUE(out.guard_bytes_intact(ciphertext.size()));
    return {download_verdicts(verified, 1)[0], out.download(ciphertext.size())};
  }

  // Every boundary length sealed and opened on the device, against the CPU.
  void seal_and_open_at_boundary_lengths() {
    for (size_t length : boundary_lengths()) {
      const AeadInput input = random_input(length);
      SCOPED_TRACE(name() + " length " + std::to_string(length) + " nonce " + std::to_string(input.nonce.size()));
      const AeadSealed expected = lib_aead_seal(name(), input, make_options(0, WC_BACKEND_CPU));
      ASSERT_EQ(expected.status, WC_OK);
      const DeviceSealed sealed = seal_on_device(input);
      ASSERT_TRUE(same_bytes(expected.ciphertext, sealed.ciphertext));
      ASSERT_TRUE(same_bytes(expected.tag, sealed.tag));
      const auto [verified, plaintext] = open_on_device(input, sealed.ciphertext, sealed.tag);
      EXPECT_EQ(verified, 1);
      EXPECT_TRUE(same_bytes(input.plaintext, plaintext));
    }
  }

  TestRng rng_ = TestRng::for_current_test();
};

TEST_P(AeadDevice, SealAndOpenAcrossSegmentBoundaries) { seal_and_open_at_boundary_lengths(); }

// GPUs before sm_80 hash GCM's bulk through nibble tables, later ones on the
// tensor cores; WARPCRYPT_GPU_GHASH=tables takes the first path anywhere.
TEST_P(AeadDevice, GhashThroughTablesAgrees) {
  if (!is_gcm(name())) GTEST_SKIP() << "GHASH is GCM's";
  struct TablesRequested {  // for this test only, however it ends
    TablesRequested() { setenv("WARPCRYPT_GPU_GHASH", "tables", 1); }
    ~TablesRequested() { unsetenv("WARPCRYPT_GPU_GHASH"); }
  } tables;
  seal_and_open_at_boundary_lengths();
}

// A changed bit anywhere, or the wrong AAD, gives verdict 0 and an output of
// zeros only, however long the message.
TEST_P(AeadDevice, TamperingGivesZeroedOutput) {
  for (size_t length : {size_t{0}, size_t{5}, size_t{64}, 300 * KiB + 7, 2048 * KiB + 64}) {
    SCOPED_TRACE(name() + " length " + std::to_string(length));
    const AeadInput input = random_input(length);
    const DeviceSealed sealed = seal_on_device(input);
    if (length != 0) {
      const auto [verified, out] = open_on_device(input, with_bit_flipped(sealed.ciphertext, rng_.uniform(0, 8 * length - 1)), sealed.tag);
      EXPECT_EQ(verified, 0) << "ciphertext";
      EXPECT_TRUE(all_zero(out.data(), out.size()));
    }
    const auto [tag_verified, tag_out] = open_on_device(input, sealed.ciphertext, with_bit_flipped(sealed.tag, rng_.uniform(0, 127)));
    EXPECT_EQ(tag_verified, 0) << "tag";
    EXPECT_TRUE(all_zero(tag_out.data(), tag_out.size()));
    AeadInput other_aad = input;
    other_aad.aad.push_back(1);
    const auto [aad_verified, aad_out] = open_on_device(other_aad, sealed.ciphertext, sealed.tag);
    EXPECT_EQ(aad_verified, 0) << "aad";
    EXPECT_TRUE(all_zero(aad_out.data(), aad_out.size()));
  }
}

TEST_P(AeadDevice, UnalignedPointers) {
  for (size_t shift = 1; shift < 16; shift += 2) {
    const AeadInput input = random_input(rng_.uniform(1, 600 * KiB));
    const size_t length = input.plaintext.size();
    const size_t out_shift = 15 - shift;
    SCOPED_TRACE("in at +" + std::to_string(shift) + ", out at +" + std::to_string(out_shift));
    const AeadSealed expected = lib_aead_seal(name(), input, make_options(0, WC_BACKEND_CPU));
    DeviceBuffer in(length + 16), out(length + 16), tag(16);
    in.upload(input.plaintext, shift);
    ASSERT_EQ(wc_aead_seal_device_async(aead_of(name()), out.at(out_shift), tag.at(0), 16, input.key.data(),
                                        input.key.size(), input.nonce.data(), input.nonce.size(),
                                        data_or_dummy(input.aad), input.aad.size(), in.at(shift), length, nullptr),
              WC_OK);
    synchronize_device();
    EXPECT_TRUE(same_bytes(expected.ciphertext, out.download(length, out_shift)));
    EXPECT_TRUE(same_bytes(expected.tag, tag.download(16)));
  }
}

// One launch for many messages: empty, tiny and multi-segment ones mixed,
// each with its own nonce and AAD, sealed as the CPU seals them one by one;
// opening flags exactly the tampered ones and zeroes only their outputs.
TEST_P(AeadDevice, BatchesOfMixedMessages) {
  const size_t count = 300;
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  std::vector<AeadInput> inputs;
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t length = i % 50 == 7 ? rng_.uniform(300 * KiB, 1200 * KiB) : i % 3 == 0 ? 0 : rng_.uniform(1, 2000);
    AeadInput input = random_input(length);
    input.key = key;
    offsets.push_back(total);
    total += length;  // back to back: an overrun would show in the next message
    inputs.push_back(std::move(input));
  }
  DeviceBuffer data(total), tags(16 * count), verified(sizeof(int32_t) * count);
  std::vector<wc_aead_message> messages(count);
  for (size_t i = 0; i < count; ++i) {
    data.upload(inputs[i].plaintext, offsets[i]);
    messages[i] = {data.at(offsets[i]), data.at(offsets[i]), inputs[i].plaintext.size(), inputs[i].nonce.data(),
                   inputs[i].nonce.size(), data_or_dummy(inputs[i].aad), inputs[i].aad.size(), tags.at(16 * i)};
  }
  ASSERT_EQ(wc_aead_seal_batch_device_async(aead_of(name()), messages.data(), count, 16, key.data(),
                                            key.size(), nullptr),
            WC_OK);
  synchronize_device();
  std::vector<Bytes> sealed_tags(count);
  for (size_t i = 0; i < count; ++i) {
    const AeadSealed expected = lib_aead_seal(name(), inputs[i], make_options(0, WC_BACKEND_CPU));
    EXPECT_TRUE(same_bytes(expected.ciphertext, data.download(inputs[i].plaintext.size(), offsets[i])))
        << "message " << i;
    sealed_tags[i] = tags.download(16, 16 * i);
    EXPECT_TRUE(same_bytes(expected.tag, sealed_tags[i])) << "message " << i;
  }
  const std::vector<size_t> tampered = {0, 7, 100, 157, 299};
  for (size_t i : tampered) tags.upload(with_bit_flipped(sealed_tags[i], 3), 16 * i);
  auto *verdicts = reinterpret_cast<int32_t *>(verified.at(0));
  ASSERT_EQ(wc_aead_open_batch_device_async(aead_of(name()), verdicts, messages.data(), count, 16,
                                            key.data(), key.size(), nullptr),
            WC_OK);
  synchronize_device();
  const std::vector<int32_t> verdicts_read = download_verdicts(verified, count);
  for (size_t i = 0; i < count; ++i) {
    const int32_t verdict = verdicts_read[i];
    const bool was_tampered = std::find(tampered.begin(), tampered.end(), i) != tampered.end();
    EXPECT_EQ(verdict, was_tampered ? 0 : 1) << "message " << i;
    const Bytes out = data.download(inputs[i].plaintext.size(), offsets[i]);
    if (was_tampered) {
      EXPECT_TRUE(all_zero(out.data(), out.size())) << "message " << i;
    } else {
      EXPECT_TRUE(same_bytes(inputs[i].plaintext, out)) << "message " << i;
    }
  }
}

// The caller's stream orders the work: a copy queued after the call on the
// same stream sees the sealed data without any device-wide synchronisation.
TEST_P(AeadDevice, RunsOnTheCallersStream) {
  const AeadInput input = random_input(700 * KiB + 3);
  const AeadSealed expected = lib_aead_seal(name(), input, make_options(0, WC_BACKEND_CPU));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  DeviceBuffer data(input.plaintext.size()), tag(16);
  data.upload(input.plaintext);
  ASSERT_EQ(wc_aead_seal_device_async(aead_of(name()), data.at(0), tag.at(0), 16, input.key.data(),
                                      input.key.size(), input.nonce.data(), input.nonce.size(),
                                      data_or_dummy(input.aad), input.aad.size(), data.at(0), input.plaintext.size(),
                                      reinterpret_cast<wc_cuda_stream>(stream)),
            WC_OK);
  Bytes ciphertext(input.plaintext.size()), tag_bytes(16);
  ASSERT_EQ(cudaMemcpyAsync(ciphertext.data(), data.at(0), ciphertext.size(), cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(tag_bytes.data(), tag.at(0), 16, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  EXPECT_TRUE(same_bytes(expected.ciphertext, ciphertext));
  EXPECT_TRUE(same_bytes(expected.tag, tag_bytes));
}

// Pageable host memory through the engine's staging (engine/staged_aead.h):
// a message its 8 MiB window holds, tag included, goes in a group, a longer
// one in the device AEAD's pieces, through several windows at once. Lengths
// on both sides of that line and several pieces long, sealed and opened
// against the CPU; a changed bit in the first piece, the last piece or the
// tag is refused with the whole output zeroed.
constexpr size_t kWindowBytes = 8 * 1024 * KiB;
constexpr size_t kLongestGroupMessage = kWindowBytes - 16;
TEST_P(AeadDevice, HostMemoryThroughLanes) {
  const wc_options gpu = make_options(0, WC_BACKEND_GPU), cpu = make_options(0, WC_BACKEND_CPU);
  for (size_t length : {kLongestGroupMessage, kLongestGroupMessage + 1, 2 * kWindowBytes + 17, 3 * kWindowBytes - 1}) {
    const AeadInput input = random_input(length);
    SCOPED_TRACE(name() + " length " + std::to_string(length) + " nonce " + std::to_string(input.nonce.size()));
    const AeadSealed expected = lib_aead_seal(name(), input, cpu);
    const AeadSealed sealed = lib_aead_seal(name(), input, gpu);
    ASSERT_EQ(sealed.status, WC_OK);
    ASSERT_TRUE(same_bytes(expected.ciphertext, sealed.ciphertext));
    ASSERT_TRUE(same_bytes(expected.tag, sealed.tag));
    const AeadOpened opened = lib_aead_open(name(), input, sealed.ciphertext, sealed.tag, gpu);
    ASSERT_EQ(opened.status, WC_OK);
    EXPECT_TRUE(same_bytes(input.plaintext, opened.out));
    for (size_t bit : {size_t{3}, 8 * length - 5}) {
      const AeadOpened forged = lib_aead_open(name(), input, with_bit_flipped(sealed.ciphertext, bit), sealed.tag, gpu);
      EXPECT_EQ(forged.status, WC_ERR_AUTH) << "bit " << bit;
      EXPECT_TRUE(all_zero(forged.out.data(), forged.out.size())) << "bit " << bit;
    }
    const AeadOpened forged_tag = lib_aead_open(name(), input, sealed.ciphertext, with_bit_flipped(sealed.tag, 77), gpu);
    EXPECT_EQ(forged_tag.status, WC_ERR_AUTH);
    EXPECT_TRUE(all_zero(forged_tag.out.data(), forged_tag.out.size()));
  }
}

// One call with groups and pieces mixed, page-locked and pageable buffers,
// in place and out of place: every message as the CPU seals it.
TEST_P(AeadDevice, HostBatchMixesGroupsPiecesAndPageLockedMemory) {
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  wc_options gpu = make_options(0, WC_BACKEND_GPU);
  wc_aead_key *keyed = nullptr;
  ASSERT_EQ(wc_aead_key_new(&keyed, &gpu, aead_of(name()), key.data(), key.size()), WC_OK);
  const std::vector<size_t> lengths = {1000, 2 * kWindowBytes + 17, 0, kLongestGroupMessage + 1, 65, 5 * KiB};
  std::vector<AeadInput> inputs;
  for (size_t length : lengths) {
    AeadInput input = random_input(length);
    input.key = key;
    inputs.push_back(std::move(input));
  }
  // The long messages live in page-locked memory, sealed in place.
  std::vector<uint8_t *> locked;
  std::vector<Bytes> pageable_out(lengths.size());
  std::vector<Bytes> tags(lengths.size(), Bytes(16));
  std::vector<wc_aead_message> messages;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const AeadInput &input = inputs[i];
    uint8_t *out = nullptr;
    const uint8_t *in = input.plaintext.data();
    if (i % 2 == 1) {
      ASSERT_EQ(cudaMallocHost(&out, std::max<size_t>(lengths[i], 1)), cudaSuccess);
      std::memcpy(out, in, lengths[i]);
      locked.push_back(out);
      in = out;
    } else {
      pageable_out[i].resize(lengths[i]);
      out = pageable_out[i].data();
    }
    messages.push_back({out, in, lengths[i], input.nonce.data(), input.nonce.size(), data_or_dummy(input.aad),
                        input.aad.size(), tags[i].data()});
  }
  ASSERT_EQ(wc_aead_key_seal(keyed, messages.data(), messages.size(), 16), WC_OK);
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    const AeadSealed expected = lib_aead_seal(name(), inputs[i], make_options(0, WC_BACKEND_CPU));
    EXPECT_TRUE(same_bytes(expected.ciphertext, Bytes(messages[i].out, messages[i].out + lengths[i])));
    EXPECT_TRUE(same_bytes(expected.tag, tags[i]));
  }
  for (uint8_t *memory : locked) cudaFreeHost(memory);
  wc_aead_key_free(keyed);
}

// Host memory reaches the device AEAD only through the engine's transfer
// lanes (engine/staged_aead.h): the backend's own AEAD refuses it. Through
// the engine, pageable memory in a group and in pieces, sealed and opened in
// one call each, against the CPU.
TEST_P(AeadDevice, HostMemoryGoesThroughTheEnginesTransferLanes) {
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  std::unique_ptr<warpcrypt::AeadCipher> backend_only;
  ASSERT_EQ(warpcrypt::kCudaBackend.make_aead(&backend_only, *aead_of(name()), {key.data(), key.size()}, {}), WC_OK);
  std::unique_ptr<warpcrypt::AeadCipher> device;
  const warpcrypt::engine::LaneSpec spec{.backend = WC_BACKEND_GPU, .devices = {0}};
  ASSERT_EQ(warpcrypt::engine::make_aead(&device, spec, *aead_of(name()), {key.data(), key.size()}), WC_OK);
  const std::vector<size_t> lengths = {1000, 2 * kWindowBytes + 17, 65};
  std::vector<AeadInput> inputs;
  std::vector<Bytes> sealed, tags(lengths.size(), Bytes(16)), opened;
  std::vector<wc_aead_message> sealing, opening;
  for (size_t length : lengths) {
    AeadInput input = random_input(length);
    input.key = key;
    inputs.push_back(std::move(input));
    sealed.emplace_back(length);
    opened.emplace_back(length);
  }
  for (size_t i = 0; i < lengths.size(); ++i) {
    const AeadInput &input = inputs[i];
    sealing.push_back({sealed[i].data(), input.plaintext.data(), lengths[i], input.nonce.data(), input.nonce.size(),
                       data_or_dummy(input.aad), input.aad.size(), tags[i].data()});
    opening.push_back({opened[i].data(), sealed[i].data(), lengths[i], input.nonce.data(), input.nonce.size(),
                       data_or_dummy(input.aad), input.aad.size(), tags[i].data()});
  }
  EXPECT_EQ(backend_only->seal(sealing, 16), WC_ERR_BACKEND_UNAVAILABLE);
  ASSERT_EQ(device->seal(sealing, 16), WC_OK);
  for (size_t i = 0; i < lengths.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    const AeadSealed expected = lib_aead_seal(name(), inputs[i], make_options(0, WC_BACKEND_CPU));
    EXPECT_TRUE(same_bytes(expected.ciphertext, sealed[i]));
    EXPECT_TRUE(same_bytes(expected.tag, tags[i]));
  }
  std::vector<wc_status> results(lengths.size(), WC_ERR_DEVICE);
  ASSERT_EQ(device->open(opening, 16, results.data()), WC_OK);
  for (size_t i = 0; i < lengths.size(); ++i) EXPECT_TRUE(same_bytes(inputs[i].plaintext, opened[i])) << i;
  tags[1][0] ^= 1;
  EXPECT_EQ(device->open(opening, 16, results.data()), WC_ERR_AUTH);
  EXPECT_EQ(results[0], WC_OK);
  EXPECT_EQ(results[1], WC_ERR_AUTH);
}

// Page-locked host memory, owned by the test.
class PinnedBytes {
 public:
  explicit PinnedBytes(size_t len) : len_(len) {
    if (cudaMallocHost(&data_, std::max<size_t>(len, 1)) != cudaSuccess) data_ = nullptr;
  }
  ~PinnedBytes() { cudaFreeHost(data_); }
  PinnedBytes(const PinnedBytes &) = delete;
  PinnedBytes &operator=(const PinnedBytes &) = delete;
  uint8_t *data() const { return static_cast<uint8_t *>(data_); }
  Bytes bytes() const { return Bytes(data(), data() + len_); }

 private:
  void *data_ = nullptr;
  size_t len_;
};

// A window of a chunked stream as the engine's GPU lanes hold it, in
// page-locked memory: the plaintext chunks back to back, and each sealed
// chunk followed by its tag. It goes to the device and back as ranges,
// with no copy on the host; a window larger than a lane's buffer in
// several groups, chunks longer than half of it in pieces. Sealed as the
// CPU seals the same layout, opened, and a changed chunk refused alone,
// its output zeroed.
TEST_P(AeadDevice, PageLockedWindowsGoStraightThrough) {
  struct Window {
    size_t chunk;
    size_t chunks;
    size_t tag_len;
  };
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  wc_options gpu = make_options(0, WC_BACKEND_GPU), cpu = make_options(0, WC_BACKEND_CPU);
  wc_aead_key *gpu_key = nullptr, *cpu_key = nullptr;
  ASSERT_EQ(wc_aead_key_new(&gpu_key, &gpu, aead_of(name()), key.data(), key.size()), WC_OK);
  ASSERT_EQ(wc_aead_key_new(&cpu_key, &cpu, aead_of(name()), key.data(), key.size()), WC_OK);
  const Bytes aad = rng_.bytes(13);
  for (const Window window : {Window{64 * KiB, 128, 16}, Window{1024 * KiB, 9, 16}, Window{1000, 50, 12},
                              Window{4 * 1024 * KiB + 1, 2, 16}}) {
    SCOPED_TRACE(name() + " chunk " + std::to_string(window.chunk) + " tag " + std::to_string(window.tag_len));
    const size_t sealed_chunk = window.chunk + window.tag_len;
    // The last chunk is short, as a stream's is.
    auto length_of = [&](size_t i) { return i + 1 == window.chunks ? window.chunk / 2 + 3 : window.chunk; };
    const size_t plain_len = window.chunk * (window.chunks - 1) + length_of(window.chunks - 1);
    const size_t sealed_len = plain_len + window.chunks * window.tag_len;
    PinnedBytes plain(plain_len), sealed(sealed_len), opened(plain_len);
    ASSERT_NE(plain.data(), nullptr);
    ASSERT_NE(sealed.data(), nullptr);
    ASSERT_NE(opened.data(), nullptr);
    const Bytes plaintext = rng_.bytes(plain_len);
    std::memcpy(plain.data(), plaintext.data(), plain_len);
    Bytes expected(sealed_len);
    std::vector<Bytes> nonces;
    for (size_t i = 0; i < window.chunks; ++i) nonces.push_back(rng_.bytes(12));

    // Messages of the window laid over `in` and `out`, sealing or opening.
    auto messages_over = [&](const uint8_t *in, uint8_t *out, bool seal) {
      std::vector<wc_aead_message> messages;
      for (size_t i = 0; i < window.chunks; ++i) {
        const size_t plain_at = i * window.chunk, sealed_at = i * sealed_chunk, len = length_of(i);
        uint8_t *sealed_chunk_at = seal ? out + sealed_at : const_cast<uint8_t *>(in) + sealed_at;
        messages.push_back({seal ? sealed_chunk_at : out + plain_at, seal ? in + plain_at : sealed_chunk_at, len,
                            nonces[i].data(), 12, aad.data(), aad.size(), sealed_chunk_at + len});
      }
      return messages;
    };
    const std::vector<wc_aead_message> reference = messages_over(plaintext.data(), expected.data(), true);
    ASSERT_EQ(wc_aead_key_seal(cpu_key, reference.data(), reference.size(), window.tag_len), WC_OK);
    const std::vector<wc_aead_message> sealing = messages_over(plain.data(), sealed.data(), true);
    ASSERT_EQ(wc_aead_key_seal(gpu_key, sealing.data(), sealing.size(), window.tag_len), WC_OK);
    ASSERT_TRUE(same_bytes(expected, sealed.bytes()));

    std::vector<wc_status> results(window.chunks, WC_ERR_DEVICE);
    const std::vector<wc_aead_message> opening = messages_over(sealed.data(), opened.data(), false);
    ASSERT_EQ(wc_aead_key_open(gpu_key, results.data(), opening.data(), opening.size(), window.tag_len), WC_OK);
    EXPECT_TRUE(std::all_of(results.begin(), results.end(), [](wc_status r) { return r == WC_OK; }));
    EXPECT_TRUE(same_bytes(plaintext, opened.bytes()));

    const size_t changed = window.chunks / 2;
    sealed.data()[changed * sealed_chunk + 7] ^= 0x10;
    std::memset(opened.data(), 0xa5, plain_len);
    ASSERT_EQ(wc_aead_key_open(gpu_key, results.data(), opening.data(), opening.size(), window.tag_len),
              WC_ERR_AUTH);
    for (size_t i = 0; i < window.chunks; ++i) {
      SCOPED_TRACE("chunk " + std::to_string(i));
      const Bytes chunk(opened.data() + i * window.chunk, opened.data() + i * window.chunk + length_of(i));
      if (i == changed) {
        EXPECT_EQ(results[i], WC_ERR_AUTH);
        EXPECT_TRUE(all_zero(chunk.data(), chunk.size()));
      } else {
        EXPECT_EQ(results[i], WC_OK);
        EXPECT_TRUE(same_bytes(Bytes(plaintext.begin() + i * window.chunk,
                                     plaintext.begin() + i * window.chunk + length_of(i)),
                               chunk));
      }
    }
  }
  wc_aead_key_free(gpu_key);
  wc_aead_key_free(cpu_key);
}

// Page-locked messages sealed in place, their tags in an array of their
// own: the ranges read and written are the same memory, each given its own
// place on the device.
TEST_P(AeadDevice, PageLockedMessagesSealInPlace) {
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  wc_options gpu = make_options(0, WC_BACKEND_GPU), cpu = make_options(0, WC_BACKEND_CPU);
  wc_aead_key *gpu_key = nullptr, *cpu_key = nullptr;
  ASSERT_EQ(wc_aead_key_new(&gpu_key, &gpu, aead_of(name()), key.data(), key.size()), WC_OK);
  ASSERT_EQ(wc_aead_key_new(&cpu_key, &cpu, aead_of(name()), key.data(), key.size()), WC_OK);
  const std::vector<size_t> lengths = {0, 1, 17, 16 * KiB + 1, 300 * KiB, 3 * 1024 * KiB};
  size_t total = 0;
  for (size_t length : lengths) total += length;
  PinnedBytes data(total), tags(16 * lengths.size());
  ASSERT_NE(data.data(), nullptr);
  ASSERT_NE(tags.data(), nullptr);
  const Bytes plaintext = rng_.bytes(total);
  std::memcpy(data.data(), plaintext.data(), total);
  Bytes expected = plaintext, expected_tags(16 * lengths.size());
  const Bytes nonce = rng_.bytes(12);
  std::vector<wc_aead_message> in_place, reference;
  size_t at = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    in_place.push_back({data.data() + at, data.data() + at, lengths[i], nonce.data(), 12, nullptr, 0,
                        tags.data() + 16 * i});
    reference.push_back({expected.data() + at, expected.data() + at, lengths[i], nonce.data(), 12, nullptr, 0,
                         expected_tags.data() + 16 * i});
    at += lengths[i];
  }
  ASSERT_EQ(wc_aead_key_seal(cpu_key, reference.data(), reference.size(), 16), WC_OK);
  ASSERT_EQ(wc_aead_key_seal(gpu_key, in_place.data(), in_place.size(), 16), WC_OK);
  EXPECT_TRUE(same_bytes(expected, data.bytes()));
  EXPECT_TRUE(same_bytes(expected_tags, tags.bytes()));
  std::vector<wc_status> results(lengths.size(), WC_ERR_DEVICE);
  ASSERT_EQ(wc_aead_key_open(gpu_key, results.data(), in_place.data(), in_place.size(), 16), WC_OK);
  EXPECT_TRUE(same_bytes(plaintext, data.bytes()));
  wc_aead_key_free(gpu_key);
  wc_aead_key_free(cpu_key);
}

// A keyed object set up once serves many calls and threads: device-memory
// messages sealed from four threads on their own streams, and host memory
// through a gpu key, all equal to the CPU's one-shot results; a key under
// auto also takes device memory, and opening through it flags a forgery.
TEST_P(AeadDevice, KeyedObjectServesThreadsOnDeviceAndHostMemory) {
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  wc_options gpu = make_options(0, WC_BACKEND_GPU), automatic = make_options(0, WC_BACKEND_AUTO);
  wc_aead_key *gpu_key = nullptr, *auto_key = nullptr;
  ASSERT_EQ(wc_aead_key_new(&gpu_key, &gpu, aead_of(name()), key.data(), key.size()), WC_OK);
  ASSERT_EQ(wc_aead_key_new(&auto_key, &automatic, aead_of(name()), key.data(), key.size()), WC_OK);
  EXPECT_EQ(wc_aead_key_backend(gpu_key), WC_BACKEND_GPU);
  EXPECT_EQ(wc_aead_key_backend(auto_key), WC_BACKEND_CPU) << "auto keeps host memory on the CPU";

  constexpr size_t kThreads = 4;
  std::vector<AeadInput> inputs;
  for (size_t t = 0; t < kThreads; ++t) {
    AeadInput input = random_input(rng_.uniform(1, 900 * KiB));
    input.key = key;
    inputs.push_back(std::move(input));
  }
  std::vector<Bytes> ciphertexts(kThreads), tags(kThreads);
  std::vector<wc_status> statuses(kThreads, WC_ERR_INVALID_ARGUMENT);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const AeadInput &input = inputs[t];
      cudaStream_t stream = nullptr;
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      DeviceBuffer data(input.plaintext.size()), tag(16);
      data.upload(input.plaintext);
      const wc_aead_message m{data.at(0),         data.at(0),           input.plaintext.size(),
                              input.nonce.data(), input.nonce.size(),   data_or_dummy(input.aad),
                              input.aad.size(),   tag.at(0)};
      statuses[t] = wc_aead_key_seal_device_async(t % 2 == 0 ? gpu_key : auto_key, &m, 1, 16,
                                                  reinterpret_cast<wc_cuda_stream>(stream));
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
      ciphertexts[t] = data.download(input.plaintext.size());
      tags[t] = tag.download(16);
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (size_t t = 0; t < kThreads; ++t) {
    ASSERT_EQ(statuses[t], WC_OK) << "thread " << t;
    const AeadSealed expected = lib_aead_seal(name(), inputs[t], make_options(0, WC_BACKEND_CPU));
    EXPECT_TRUE(same_bytes(expected.ciphertext, ciphertexts[t])) << "thread " << t;
    EXPECT_TRUE(same_bytes(expected.tag, tags[t])) << "thread " << t;
  }

  // Host memory through the GPU key.
  const AeadInput &host_input = inputs[0];
  Bytes host_out(host_input.plaintext.size()), host_tag(16);
  const wc_aead_message host_message{host_out.data(), host_input.plaintext.data(), host_input.plaintext.size(),
                                     host_input.nonce.data(), host_input.nonce.size(), data_or_dummy(host_input.aad),
                                     host_input.aad.size(), host_tag.data()};
  ASSERT_EQ(wc_aead_key_seal(gpu_key, &host_message, 1, 16), WC_OK);
  EXPECT_TRUE(same_bytes(ciphertexts[0], host_out));
  EXPECT_TRUE(same_bytes(tags[0], host_tag));

  // Opening on the device through the auto key: a forged tag gives verdict 0.
  DeviceBuffer data(ciphertexts[1].size()), tag(16), verified(sizeof(int32_t));
  data.upload(ciphertexts[1]);
  tag.upload(with_bit_flipped(tags[1], 5));
  const wc_aead_message forged{data.at(0),           data.at(0),           ciphertexts[1].size(),
                               inputs[1].nonce.data(), inputs[1].nonce.size(), data_or_dummy(inputs[1].aad),
                               inputs[1].aad.size(),   tag.at(0)};
  ASSERT_EQ(wc_aead_key_open_device_async(auto_key, reinterpret_cast<int32_t *>(verified.at(0)), &forged, 1, 16,
                                          nullptr),
            WC_OK);
  synchronize_device();
  EXPECT_EQ(download_verdicts(verified, 1)[0], 0);
  const Bytes zeroed = data.download(ciphertexts[1].size());
  EXPECT_TRUE(all_zero(zeroed.data(), zeroed.size()));
  wc_aead_key_free(gpu_key);
  wc_aead_key_free(auto_key);
}

// Strided batches (wc_aead_strided) as the CPU seals each message: records
// of nonce, message and tag side by side in place, and separate arrays out
// of place, on both kernels (the per-thread one up to 16 KiB, the segmented
// one above); opening flags exactly the tampered records and zeroes them.
TEST_P(AeadDevice, StridedBatchesOfRecordsAndArrays) {
  const Bytes key = rng_.bytes(wc_aead_key_len(aead_of(name())));
  wc_options options;
  wc_options_init(&options);
  options.backend = WC_BACKEND_GPU;
  wc_aead_key *keyed = nullptr;
  ASSERT_EQ(wc_aead_key_new(&keyed, &options, aead_of(name()), key.data(), key.size()), WC_OK);
  // 1500 bytes are 24 of the keystream pass's 64-byte items, which leave a
  // CTA's last 16 threads without a message; 16 KiB is a whole CTA's turn.
  for (const size_t length :
       {size_t{0}, size_t{1}, size_t{1000}, size_t{1500}, 16 * KiB, 16 * KiB + 1, 70 * KiB + 5}) {
    for (const bool records : {true, false}) {
      SCOPED_TRACE("length " + std::to_string(length) + (records ? ", records" : ", arrays"));
      const size_t count = length > 16 * KiB ? 9 : 301;
      std::vector<AeadInput> inputs;
      for (size_t i = 0; i < count; ++i) {
        AeadInput input = random_aead_input(rng_, name(), length, 0, 12);
        input.key = key;
        inputs.push_back(std::move(input));
      }
      // Records: nonce (12) || message || tag (16), one byte of slack so that
      // most messages start unaligned. Arrays: messages at a stride of their
      // length and up to 15 bytes more, nonces and tags packed, the output
      // in a buffer of its own.
      const size_t record = 12 + length + 16 + 1;
      const size_t stride = records ? record : length + length % 16;
      DeviceBuffer data(records ? record * count : stride * count), out(records ? 1 : stride * count);
      DeviceBuffer nonces(records ? 1 : 12 * count), tags(records ? 1 : 16 * count);
      DeviceBuffer verified(sizeof(int32_t) * count);
      wc_aead_strided batch{};
      if (records) {
        batch = {data.at(12), data.at(12), length, record, data.at(0), record, data.at(12 + length), record, count};
      } else {
        batch = {out.at(0), data.at(0), length, stride, nonces.at(0), 12, tags.at(0), 16, count};
      }
      for (size_t i = 0; i < count; ++i) {
        data.upload(inputs[i].plaintext, (batch.in - data.at(0)) + i * stride);
        if (records) {
          data.upload(inputs[i].nonce, i * record);
        } else {
          nonces.upload(inputs[i].nonce, 12 * i);
        }
      }
      DeviceBuffer &tag_buffer = records ? data : tags;
      DeviceBuffer &out_buffer = records ? data : out;
      auto tag_offset = [&](size_t i) { return (batch.tags - tag_buffer.at(0)) + i * batch.tag_stride; };
      auto out_offset = [&](size_t i) { return (batch.out - out_buffer.at(0)) + i * stride; };
      ASSERT_EQ(wc_aead_key_seal_strided_device_async(keyed, &batch, 16, nullptr), WC_OK);
      synchronize_device();
      for (size_t i = 0; i < count; ++i) {
        const AeadSealed expected = lib_aead_seal(name(), inputs[i], make_options(0, WC_BACKEND_CPU));
        ASSERT_TRUE(same_bytes(expected.ciphertext, out_buffer.download(length, out_offset(i)))) << "message " << i;
        ASSERT_TRUE(same_bytes(expected.tag, tag_buffer.download(16, tag_offset(i)))) << "message " << i;
      }
      if (!records) {
        EXPECT_TRUE(out.guard_bytes_intact(stride * count));
        EXPECT_TRUE(tags.guard_bytes_intact(16 * count));
      }
      // Open what was sealed, in place: the input is now the output.
      batch.in = batch.out;
      const std::vector<size_t> tampered = {0, count / 2, count - 1};
      for (size_t i : tampered) {
        tag_buffer.upload(with_bit_flipped(tag_buffer.download(16, tag_offset(i)), 5), tag_offset(i));
      }
      auto *verdicts = reinterpret_cast<int32_t *>(verified.at(0));
      ASSERT_EQ(wc_aead_key_open_strided_device_async(keyed, verdicts, &batch, 16, nullptr), WC_OK);
      synchronize_device();
      const std::vector<int32_t> verdicts_read = download_verdicts(verified, count);
      for (size_t i = 0; i < count; ++i) {
        const int32_t verdict = verdicts_read[i];
        const bool was_tampered = std::find(tampered.begin(), tampered.end(), i) != tampered.end();
        ASSERT_EQ(verdict, was_tampered ? 0 : 1) << "message " << i;
        const Bytes opened = out_buffer.download(length, out_offset(i));
        if (was_tampered) {
          EXPECT_TRUE(all_zero(opened.data(), opened.size())) << "message " << i;
        } else {
          EXPECT_TRUE(same_bytes(inputs[i].plaintext, opened)) << "message " << i;
        }
      }
    }
  }
  wc_aead_key_free(keyed);
}

INSTANTIATE_TEST_SUITE_P(Aeads, AeadDevice, ::testing::ValuesIn(aead_names()),
                         [](const auto &param_info) { return identifier_from(param_info.param); });

// GCM increments only the low 32 bits of its counter. With a 12-byte nonce
// they start at 1, but a nonce of another length is hashed into J0, whose
// low word can be anywhere: this one is found so that a 1 MiB message
// wraps it, and the GPU must wrap where OpenSSL does.
TEST(AeadDeviceGcm, CounterWrapsAt32Bits) {
  WCTEST_REQUIRE_GPU();
  using warpcrypt::cuda::Gf128;
  TestRng rng = TestRng::for_current_test();
  const size_t length = 1024 * KiB;
  const uint64_t blocks = length / 16;
  AeadInput input = random_aead_input(rng, "aes-256-gcm", length, 16, 16);
  // H = AES(K, 0^128): one ECB block through the CPU backend.
  const wc_options cpu = make_options(0, WC_BACKEND_CPU);
  const LibResult h_block =
      lib_crypt(WC_ENCRYPT, wc_cipher_unpadded(lookup("aes-256-ecb")), input.key, {}, Bytes(16, 0), cpu);
  ASSERT_EQ(h_block.status, WC_OK);
  auto to_element = [](const uint8_t *bytes) {
    uint4 block;  // four little-endian words, as the kernels load a block
    std::memcpy(&block, bytes, 16);
    return warpcrypt::cuda::gf_from_block(block);
  };
  const auto h = warpcrypt::cuda::gf_columns(to_element(h_block.out.data()));
  // J0 = GHASH(nonce || [128 bits]_64 after 64 zero bits) for a 16-byte nonce.
  const Gf128 lengths{{0, 0, 0, 128}};
  for (uint64_t tries = 0;; ++tries) {
    ASSERT_LT(tries, uint64_t{1} << 24) << "no suitable nonce found";
    const Gf128 j0 = warpcrypt::cuda::gf_multiply(
        warpcrypt::cuda::gf_add(warpcrypt::cuda::gf_multiply(to_element(input.nonce.data()), h), lengths), h);
    if (j0.w[3] > 0xffffffffu - blocks) break;
    input.nonce = rng.bytes(16);
  }
  const AeadSealed expected = openssl_aead_seal("aes-256-gcm", input);
  const AeadSealed got = lib_aead_seal("aes-256-gcm", input, make_options(0, WC_BACKEND_GPU));
  ASSERT_EQ(got.status, WC_OK);
  EXPECT_TRUE(same_bytes(expected.ciphertext, got.ciphertext));
  EXPECT_TRUE(same_bytes(expected.tag, got.tag));
}

TEST(AeadDeviceErrors, ArgumentsAreCheckedBeforeAnyWork) {
  WCTEST_REQUIRE_GPU();
  const wc_aead *gcm = aead_of("aes-128-gcm");
  const Bytes key(16, 1), nonce(12, 2);
  DeviceBuffer data(64), tag(16), verified(4);
  auto *verdict = reinterpret_cast<int32_t *>(verified.at(0));
  EXPECT_EQ(wc_aead_seal_device_async(gcm, data.at(0), tag.at(0), 16, key.data(), 15, nonce.data(), 12,
                                      nullptr, 0, data.at(0), 64, nullptr),
            WC_ERR_KEY_LEN);
  EXPECT_EQ(wc_aead_seal_device_async(aead_of("chacha20-poly1305"), data.at(0), tag.at(0), 16,
                                      Bytes(32, 1).data(), 32, nonce.data(), 8, nullptr, 0, data.at(0), 64, nullptr),
            WC_ERR_IV_LEN);
  EXPECT_EQ(wc_aead_seal_device_async(gcm, data.at(0), tag.at(0), 2, key.data(), 16, nonce.data(), 12,
                                      nullptr, 0, data.at(0), 64, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_open_device_async(gcm, data.at(0), nullptr, key.data(), 16, nonce.data(), 12, nullptr, 0,
                                      data.at(0), 64, tag.at(0), 16, nullptr),
            WC_ERR_INVALID_ARGUMENT)
      << "nowhere to put the verdict";
  EXPECT_EQ(wc_aead_seal_batch_device_async(gcm, nullptr, 3, 16, key.data(), 16, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_aead_seal_batch_device_async(gcm, nullptr, 0, 16, key.data(), 16, nullptr), WC_OK);
  synchronize_device();
  EXPECT_TRUE(data.guard_bytes_intact(64));
}

}  // namespace
}  // namespace wctest
