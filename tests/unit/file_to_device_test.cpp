// The readers of files into device memory (engine/file_to_device.h), with
// host memory standing for the devices' (HostTransfer): every range lands
// where it goes, whatever its length against the slots, from several files
// to two devices at once; what a slot held is marked for the wipe; a file
// that ends early, a read that fails and a lease that fails each fail the
// call with their own status. And the C API's checks, which come before it
// asks for a device.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/file_to_device.h"
#include "support/bytes.h"
#include "support/host_transfer.h"
#include "support/scratch_files.h"
#include "support/test_rng.h"
#include "warpcrypt/warpcrypt.h"

namespace warpcrypt::engine {
namespace {

using wctest::Bytes;
using wctest::HostTransfer;

// What the toy backend was asked for: the devices leased on.
std::mutex g_mutex;
std::set<int> g_leased_devices;
wc_status g_lease_status = WC_OK;

wc_status lease_host(std::unique_ptr<TransferBuffers> *out, int device, size_t device_bytes, size_t window_bytes) {
  {
    const std::lock_guard lock(g_mutex);
    g_leased_devices.insert(device);
    if (g_lease_status != WC_OK) return g_lease_status;
  }
  *out = std::make_unique<HostTransfer>(device_bytes, window_bytes);
  return WC_OK;
}

const TransferBackend kHostBackend{lease_host, [](const void *) { return true; }};

// An open file, closed at the end of the scope.
class OpenFile {
 public:
  explicit OpenFile(const std::string &path, int flags = O_RDONLY) : fd_(open(path.c_str(), flags)) {}
  ~OpenFile() {
    if (fd_ >= 0) close(fd_);
  }
  OpenFile(const OpenFile &) = delete;
  OpenFile &operator=(const OpenFile &) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

class FileToDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    HostTransfer::reset_written_past_mark();
    const std::lock_guard lock(g_mutex);
    g_leased_devices.clear();
    g_lease_status = WC_OK;
  }
  void TearDown() override {
    const std::lock_guard lock(g_mutex);
    g_lease_status = WC_OK;
  }

  wctest::ScratchDir dir;
  wctest::TestRng rng = wctest::TestRng::for_current_test();
};

// Lengths around the slots of one device (4 MiB) and of two (1 MiB), and
// none, from three files to two devices.
TEST_F(FileToDevice, EveryRangeLandsWhereItGoes) {
  constexpr size_t kMiB = size_t{1} << 20;
  std::vector<Bytes> files;
  std::vector<std::unique_ptr<OpenFile>> open_files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(rng.bytes(13 * kMiB + 4097 * static_cast<size_t>(i)));
    const std::string path = dir / ("file" + std::to_string(i));
    wctest::write_file(path, files.back());
    open_files.push_back(std::make_unique<OpenFile>(path));
    ASSERT_GE(open_files.back()->fd(), 0);
  }
  struct Wanted {
    size_t file;
    uint64_t offset;
    uint64_t len;
    int device;
  };
  const std::vector<Wanted> wanted = {
      {0, 0, 0, 0},           {0, 3, 1, 0},           {1, 17, kMiB - 1, 1},   {1, 0, kMiB, 0},
      {2, 5, kMiB + 1, 1},    {0, 8, 4 * kMiB, 0},    {2, 4096, 4 * kMiB + 3, 1},
      {1, 100, 9 * kMiB + 7, 0}, {2, 0, 13 * kMiB + 8194, 1},
  };
  std::vector<Bytes> memory;
  for (const Wanted &w : wanted) memory.emplace_back(w.len + 16, 0x5a);
  std::vector<DeviceRange> ranges;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const Wanted &w = wanted[i];
    ranges.push_back({open_files[w.file]->fd(), w.offset, w.len, memory[i].data() + 8, w.device});
  }
  ASSERT_EQ(read_to_devices(ranges, kHostBackend), WC_OK);
  for (size_t i = 0; i < wanted.size(); ++i) {
    const Wanted &w = wanted[i];
    const Bytes &file = files[w.file];
    const Bytes expected(file.begin() + static_cast<std::ptrdiff_t>(w.offset),
                         file.begin() + static_cast<std::ptrdiff_t>(w.offset + w.len));
    EXPECT_EQ(Bytes(memory[i].begin() + 8, memory[i].begin() + 8 + static_cast<std::ptrdiff_t>(w.len)), expected)
        << "range " << i;
    EXPECT_TRUE(std::all_of(memory[i].begin(), memory[i].begin() + 8, [](uint8_t b) { return b == 0x5a; }) &&
                std::all_of(memory[i].end() - 8, memory[i].end(), [](uint8_t b) { return b == 0x5a; }))
        << "range " << i << " wrote outside its memory";
  }
  EXPECT_EQ(g_leased_devices, (std::set<int>{0, 1}));
  EXPECT_FALSE(HostTransfer::written_past_mark()) << "a slot held bytes its mark left out of the wipe";
}

TEST_F(FileToDevice, NothingToReadLeasesNothing) {
  Bytes memory(16);
  const std::vector<DeviceRange> ranges = {{0, 0, 0, memory.data(), 0}};
  EXPECT_EQ(read_to_devices(ranges, kHostBackend), WC_OK);
  EXPECT_EQ(read_to_devices({}, kHostBackend), WC_OK);
  EXPECT_TRUE(g_leased_devices.empty());
}

TEST_F(FileToDevice, AFileThatEndsEarlyIsAFormatError) {
  const std::string path = dir / "short";
  wctest::write_file(path, rng.bytes(5 << 20));
  const OpenFile file(path);
  Bytes memory(6 << 20);
  const std::vector<DeviceRange> ranges = {{file.fd(), 1 << 20, 5 << 20, memory.data(), 0}};
  EXPECT_EQ(read_to_devices(ranges, kHostBackend), WC_ERR_FORMAT);
}

TEST_F(FileToDevice, AReadThatFailsIsAnIoError) {
  const std::string path = dir / "written";
  wctest::write_file(path, rng.bytes(4096));
  const OpenFile write_only(path, O_WRONLY);  // pread fails with EBADF
  Bytes memory(4096);
  const std::vector<DeviceRange> ranges = {{write_only.fd(), 0, 4096, memory.data(), 0}};
  EXPECT_EQ(read_to_devices(ranges, kHostBackend), WC_ERR_IO);
}

TEST_F(FileToDevice, ALeaseThatFailsFailsTheCall) {
  const std::string path = dir / "file";
  wctest::write_file(path, rng.bytes(3 << 20));
  const OpenFile file(path);
  Bytes memory(3 << 20);
  g_lease_status = WC_ERR_DEVICE;
  const std::vector<DeviceRange> ranges = {{file.fd(), 0, 3 << 20, memory.data(), 0}};
  EXPECT_EQ(read_to_devices(ranges, kHostBackend), WC_ERR_DEVICE);
}

// The C API checks its arguments before it asks for a device, so that a bad
// call gets the same answer on every machine.
TEST(ReadFilesToDevice, BadArgumentsAreRefusedBeforeTheDevice) {
  uint8_t memory[16];
  EXPECT_EQ(wc_read_files_to_device(nullptr, 1), WC_ERR_INVALID_ARGUMENT);
  const wc_file_range negative_fd{-1, 0, 16, memory};
  EXPECT_EQ(wc_read_files_to_device(&negative_fd, 1), WC_ERR_INVALID_ARGUMENT);
  const wc_file_range past_the_limit{0, uint64_t{1} << 63, 16, memory};
  EXPECT_EQ(wc_read_files_to_device(&past_the_limit, 1), WC_ERR_INVALID_ARGUMENT);
  const wc_file_range wrapping{0, 16, UINT64_MAX - 8, memory};
  EXPECT_EQ(wc_read_files_to_device(&wrapping, 1), WC_ERR_INVALID_ARGUMENT);
  const wc_file_range no_memory{0, 0, 16, nullptr};
  EXPECT_EQ(wc_read_files_to_device(&no_memory, 1), WC_ERR_INVALID_ARGUMENT);
  int devices = 0;
  ASSERT_EQ(wc_device_count(&devices), WC_OK);
  if (devices == 0) {
    const wc_file_range fine{0, 0, 16, memory};
    EXPECT_EQ(wc_read_files_to_device(&fine, 1), WC_ERR_NO_DEVICE);
  } else {
    const wc_file_range host_memory{0, 0, 16, memory};
    EXPECT_EQ(wc_read_files_to_device(&host_memory, 1), WC_ERR_INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace warpcrypt::engine
