// How the library treats the files around a job: output written through
// wc_output_* (private until complete, replaced only on commit, links
// followed only where the kernel would, the input never overwritten), input
// read to its end whatever fstat claims, and key material never cut short.
// The attacks that need a second user (a link planted in /tmp, a file the
// caller may not write) run as `nobody` in tests/cli/test_trust.py.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "core/secret_bytes.h"
#include "support/bytes.h"
#include "support/scratch_files.h"

namespace wctest {
namespace {

mode_t mode_of_fd(int fd) {
  struct stat status{};
  EXPECT_EQ(fstat(fd, &status), 0);
  return status.st_mode & 07777;
}

mode_t mode_of(const std::filesystem::path &path) {
  struct stat status{};
  EXPECT_EQ(stat(path.c_str(), &status), 0);
  return status.st_mode & 07777;
}

void write_all(int fd, const std::string &text) {
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

std::string text_of(const std::filesystem::path &path) {
  const Bytes bytes = read_file(path);
  return {bytes.begin(), bytes.end()};
}

TEST(OutputFile, ANewFileStaysPrivateUntilCommitThenTakesTheUmaskMode) {
  const ScratchDir dir;
  const mode_t old_mask = umask(022);
  wc_output *output = nullptr;
  ASSERT_EQ(wc_output_open(&output, (dir / "new").c_str(), nullptr, 0, 0, nullptr, nullptr), WC_OK);
  EXPECT_EQ(mode_of_fd(wc_output_fd(output)), 0600u);
  ASSERT_NE(wc_output_temp_path(output), nullptr);
  EXPECT_FALSE(std::filesystem::exists(dir / "new")) << "the target appears only on commit";
  write_all(wc_output_fd(output), "plaintext");
  EXPECT_EQ(mode_of_fd(wc_output_fd(output)), 0600u);
  int os_error = -1;
  ASSERT_EQ(wc_output_commit(output, &os_error), WC_OK);
  EXPECT_EQ(os_error, 0);
  wc_output_free(output);
  umask(old_mask);
  EXPECT_EQ(text_of(dir / "new"), "plaintext");
  EXPECT_EQ(mode_of(dir / "new"), 0644u);
  EXPECT_EQ(dir.entries().size(), 1u);
}

TEST(OutputFile, AnExistingFileIsReplacedOnlyOnCommitAndKeepsItsMode) {
  const ScratchDir dir;
  write_file(dir / "target", Bytes{'o', 'l', 'd'});
  ASSERT_EQ(chmod((dir / "target").c_str(), 0640), 0);
  wc_output *output = nullptr;
  ASSERT_EQ(wc_output_open(&output, (dir / "target").c_str(), nullptr, 0, 0, nullptr, nullptr), WC_OK);
  write_all(wc_output_fd(output), "abandoned");
  wc_output_free(output);  // no commit: as after a failed job
  EXPECT_EQ(text_of(dir / "target"), "old");
  EXPECT_EQ(dir.entries().size(), 1u) << "the temporary file was left behind";

  ASSERT_EQ(wc_output_open(&output, (dir / "target").c_str(), nullptr, 0, 0, nullptr, nullptr), WC_OK);
  write_all(wc_output_fd(output), "new");
  ASSERT_EQ(wc_output_commit(output, nullptr), WC_OK);
  wc_output_free(output);
  EXPECT_EQ(text_of(dir / "target"), "new");
  EXPECT_EQ(mode_of(dir / "target"), 0640u);
}

// A key replacing a world-readable file must not inherit its mode, and an
// unknown flag is refused rather than ignored.
TEST(OutputFile, ASecretStaysPrivateWhateverTheFileItReplaces) {
  const ScratchDir dir;
  write_file(dir / "key", Bytes{'o', 'l', 'd'});
  ASSERT_EQ(chmod((dir / "key").c_str(), 0644), 0);
  wc_output *output = nullptr;
  ASSERT_EQ(wc_output_open(&output, (dir / "key").c_str(), nullptr, 0, WC_OUTPUT_SECRET, nullptr, nullptr), WC_OK);
  write_all(wc_output_fd(output), "secret");
  ASSERT_EQ(wc_output_commit(output, nullptr), WC_OK);
  wc_output_free(output);
  EXPECT_EQ(text_of(dir / "key"), "secret");
  EXPECT_EQ(mode_of(dir / "key"), 0600u);
  EXPECT_EQ(wc_output_open(&output, (dir / "key").c_str(), nullptr, 0, 2, nullptr, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(output, nullptr);
}

TEST(OutputFile, TheInputItselfIsRefusedEvenThroughALink) {
  const ScratchDir dir;
  write_file(dir / "input", Bytes{'k', 'e', 'e', 'p'});
  std::filesystem::create_symlink("input", dir / "alias");
  const int input = open((dir / "input").c_str(), O_RDONLY);
  wc_file_id read{};
  ASSERT_EQ(wc_file_id_of_fd(input, &read, nullptr), WC_OK);
  close(input);
  wc_output *output = nullptr;
  const char *detail = nullptr;
  EXPECT_EQ(wc_output_open(&output, (dir / "alias").c_str(), &read, 1, 0, nullptr, &detail), WC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(output, nullptr);
  ASSERT_NE(detail, nullptr);
  EXPECT_NE(std::string(detail).find("a file this command reads"), std::string::npos);
  EXPECT_EQ(text_of(dir / "input"), "keep");
}

// Every file a job reads is guarded, not only the first: an identity or key
// file named as the output, by a hard link here, is refused too, and a
// file that is none of them is written.
TEST(OutputFile, AnyFileTheJobReadsIsRefusedEvenThroughAHardLink) {
  const ScratchDir dir;
  write_file(dir / "input", Bytes{'i', 'n'});
  write_file(dir / "key.txt", Bytes{'k', 'e', 'y'});
  std::filesystem::create_hard_link(dir / "key.txt", dir / "key-link");
  write_file(dir / "other", Bytes{'o'});
  wc_file_id read[2]{};
  for (size_t i = 0; i < 2; ++i) {
    const int fd = open((dir / (i == 0 ? "input" : "key.txt")).c_str(), O_RDONLY);
    ASSERT_EQ(wc_file_id_of_fd(fd, &read[i], nullptr), WC_OK);
    close(fd);
  }
  wc_output *output = nullptr;
  for (const char *name : {"key.txt", "key-link", "input"}) {
    EXPECT_EQ(wc_output_open(&output, (dir / name).c_str(), read, 2, 0, nullptr, nullptr), WC_ERR_INVALID_ARGUMENT)
        << name;
    EXPECT_EQ(output, nullptr);
  }
  EXPECT_EQ(text_of(dir / "key.txt"), "key");
  EXPECT_EQ(text_of(dir / "input"), "in");
  ASSERT_EQ(wc_output_open(&output, (dir / "other").c_str(), read, 2, 0, nullptr, nullptr), WC_OK);
  wc_output_free(output);
  EXPECT_EQ(wc_output_open(&output, (dir / "other").c_str(), nullptr, 1, 0, nullptr, nullptr), WC_ERR_INVALID_ARGUMENT);
  wc_file_id ignored{};
  int os_error = 0;
  EXPECT_EQ(wc_file_id_of_fd(-1, &ignored, &os_error), WC_ERR_IO);
  EXPECT_EQ(os_error, EBADF);
}

TEST(OutputFile, ALinkOfOnesOwnIsWrittenThroughAndADanglingOneIsRefused) {
  const ScratchDir dir;
  std::filesystem::create_directory(dir / "real");
  write_file(dir / "real" / "file", Bytes{'o', 'l', 'd'});
  std::filesystem::create_symlink("real", dir / "dir-link");
  std::filesystem::create_symlink("dir-link/file", dir / "link");
  wc_output *output = nullptr;
  ASSERT_EQ(wc_output_open(&output, (dir / "link").c_str(), nullptr, 0, 0, nullptr, nullptr), WC_OK);
  write_all(wc_output_fd(output), "new");
  ASSERT_EQ(wc_output_commit(output, nullptr), WC_OK);
  wc_output_free(output);
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link")) << "the link itself must stay";
  EXPECT_EQ(text_of(dir / "real" / "file"), "new");

  std::filesystem::create_symlink("real/missing", dir / "dangling");
  int os_error = 0;
  const char *detail = nullptr;
  EXPECT_EQ(wc_output_open(&output, (dir / "dangling").c_str(), nullptr, 0, 0, &os_error, &detail), WC_ERR_IO);
  EXPECT_EQ(os_error, ENOENT);
  ASSERT_NE(detail, nullptr);
  EXPECT_NE(std::string(detail).find("does not exist"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "real" / "missing"));
}

TEST(OutputFile, PathsThatNameNoFileAreRefusedBeforeAnythingIsWritten) {
  const ScratchDir dir;
  int os_error = 0;
  wc_output *output = nullptr;
  EXPECT_EQ(wc_output_open(&output, "", nullptr, 0, 0, &os_error, nullptr), WC_ERR_IO);
  EXPECT_EQ(os_error, ENOENT);
  EXPECT_EQ(wc_output_open(&output, (dir / ".").c_str(), nullptr, 0, 0, &os_error, nullptr), WC_ERR_IO);
  EXPECT_EQ(os_error, EISDIR);
  EXPECT_EQ(wc_output_open(&output, (dir / "no" / "such").c_str(), nullptr, 0, 0, &os_error, nullptr), WC_ERR_IO);
  EXPECT_EQ(os_error, ENOENT);
  EXPECT_EQ(wc_output_open(&output, nullptr, nullptr, 0, 0, nullptr, nullptr), WC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OutputFile, ADeviceIsWrittenInPlace) {
  wc_output *output = nullptr;
  ASSERT_EQ(wc_output_open(&output, "/dev/null", nullptr, 0, 0, nullptr, nullptr), WC_OK);
  EXPECT_EQ(wc_output_temp_path(output), nullptr);
  write_all(wc_output_fd(output), "gone");
  EXPECT_EQ(wc_output_commit(output, nullptr), WC_OK);
  wc_output_free(output);
}

// wc_output_move_beneath: a finished file moved into a tree of outputs that
// others may write in (warpcrypt.dask's commit).
TEST(OutputTree, AFileIsMovedBeneathTheRootIntoFoldersMadeForIt) {
  const ScratchDir dir;
  std::filesystem::create_directory(dir / "tree");
  write_file(dir / "staged", Bytes{'d', 'a', 't', 'a'});
  ASSERT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "a/b/out", (dir / "staged").c_str(), nullptr, nullptr),
            WC_OK);
  EXPECT_EQ(text_of(dir / "tree" / "a" / "b" / "out"), "data");
  EXPECT_FALSE(std::filesystem::exists(dir / "staged"));
}

TEST(OutputTree, AFolderThatIsALinkIsRefusedAndNothingReachesWhereItPoints) {
  const ScratchDir dir;
  std::filesystem::create_directories(dir / "tree");
  std::filesystem::create_directory(dir / "elsewhere");
  std::filesystem::create_symlink(dir / "elsewhere", dir / "tree" / "sub");
  write_file(dir / "staged", Bytes{'x'});
  int os_error = 0;
  const char *detail = nullptr;
  EXPECT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "sub/out", (dir / "staged").c_str(), &os_error, &detail),
            WC_ERR_IO);
  EXPECT_EQ(os_error, ENOTDIR);
  ASSERT_NE(detail, nullptr);
  EXPECT_NE(std::string(detail).find("is a link or not a folder"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "elsewhere"));
  EXPECT_TRUE(std::filesystem::exists(dir / "staged")) << "the file stays where it was";

  // A link to a folder deeper down, and a file where a folder should be.
  std::filesystem::create_directories(dir / "tree" / "real");
  std::filesystem::create_symlink(dir / "elsewhere", dir / "tree" / "real" / "deep");
  EXPECT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "real/deep/out", (dir / "staged").c_str(), &os_error,
                                   &detail),
            WC_ERR_IO);
  EXPECT_EQ(os_error, ENOTDIR);
  write_file(dir / "tree" / "plain", Bytes{'p'});
  EXPECT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "plain/out", (dir / "staged").c_str(), &os_error,
                                   &detail),
            WC_ERR_IO);
  EXPECT_EQ(os_error, ENOTDIR);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "elsewhere"));
}

TEST(OutputTree, PathsThatLeaveTheRootOrNameNoFileAreRefused) {
  const ScratchDir dir;
  std::filesystem::create_directory(dir / "tree");
  write_file(dir / "staged", Bytes{'x'});
  for (const char *path : {"", "/etc/out", "../out", "a/../../out", "./out", "a//out", "a/", "a/."}) {
    const char *detail = nullptr;
    EXPECT_EQ(wc_output_move_beneath((dir / "tree").c_str(), path, (dir / "staged").c_str(), nullptr, &detail),
              WC_ERR_INVALID_ARGUMENT)
        << path;
    ASSERT_NE(detail, nullptr) << path;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir / "tree"));
  EXPECT_TRUE(std::filesystem::exists(dir / "staged"));
  EXPECT_EQ(wc_output_move_beneath(nullptr, "out", (dir / "staged").c_str(), nullptr, nullptr),
            WC_ERR_INVALID_ARGUMENT);
  std::filesystem::create_directory(dir / "tree" / "folder");
  int os_error = 0;
  EXPECT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "folder", (dir / "staged").c_str(), &os_error, nullptr),
            WC_ERR_IO);
  EXPECT_EQ(os_error, EISDIR);
  EXPECT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "out", (dir / "missing").c_str(), &os_error, nullptr),
            WC_ERR_IO);
  EXPECT_EQ(os_error, ENOENT);
}

TEST(OutputTree, AReplacedFileKeepsItsModeAndALinkAtThePathIsReplacedNotFollowed) {
  const ScratchDir dir;
  std::filesystem::create_directory(dir / "tree");
  write_file(dir / "tree" / "kept", Bytes{'o', 'l', 'd'});
  ASSERT_EQ(chmod((dir / "tree" / "kept").c_str(), 0640), 0);
  write_file(dir / "staged", Bytes{'n', 'e', 'w'});
  ASSERT_EQ(chmod((dir / "staged").c_str(), 0600), 0);
  ASSERT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "kept", (dir / "staged").c_str(), nullptr, nullptr),
            WC_OK);
  EXPECT_EQ(text_of(dir / "tree" / "kept"), "new");
  EXPECT_EQ(mode_of(dir / "tree" / "kept"), 0640u);

  write_file(dir / "victim", Bytes{'v'});
  std::filesystem::create_symlink(dir / "victim", dir / "tree" / "link");
  write_file(dir / "staged", Bytes{'n'});
  ASSERT_EQ(wc_output_move_beneath((dir / "tree").c_str(), "link", (dir / "staged").c_str(), nullptr, nullptr),
            WC_OK);
  EXPECT_FALSE(std::filesystem::is_symlink(dir / "tree" / "link"));
  EXPECT_EQ(text_of(dir / "tree" / "link"), "n");
  EXPECT_EQ(text_of(dir / "victim"), "v");
}

// /proc files report a size of 0 and hold more: the job must read to the end
// (it once encrypted 0 bytes and succeeded).
TEST(InputFile, AFileThatReportsSizeZeroIsReadToItsEnd) {
  std::ifstream reference("/proc/self/mountinfo", std::ios::binary);
  ASSERT_TRUE(reference) << "no /proc here";
  const ScratchDir dir;
  const int input = open("/proc/self/mountinfo", O_RDONLY);
  const int output = open((dir / "out").c_str(), O_RDWR | O_CREAT, 0600);
  const std::array<uint8_t, 32> key{};
  const std::array<uint8_t, 16> iv{};
  wc_options options;
  wc_options_init(&options);
  options.backend = WC_BACKEND_CPU;
  ASSERT_EQ(wc_encrypt_fd(&options, wc_cipher_by_name("aes-256-ctr"), nullptr, output, input, key.data(), key.size(),
                          iv.data(), iv.size()),
            WC_OK);
  close(input);
  close(output);
  const Bytes plaintext{std::istreambuf_iterator<char>(reference), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(plaintext.empty());
  Bytes expected(plaintext.size());
  size_t expected_len = 0;
  ASSERT_EQ(wc_encrypt(&options, wc_cipher_by_name("aes-256-ctr"), expected.data(), expected.size(), &expected_len,
                       key.data(), key.size(), iv.data(), iv.size(), plaintext.data(), plaintext.size()),
            WC_OK);
  EXPECT_TRUE(same_bytes(expected, read_file(dir / "out")));
}

// Truncating a key would silently change it: the library stops instead.
TEST(SecretBytesDeathTest, KeyMaterialLongerThanTheBufferStopsTheProcess) {
  const std::array<uint8_t, WC_MAX_KEY_LEN + 1> too_long{};
  EXPECT_DEATH(warpcrypt::SecretBytes{too_long}, "longer than WC_MAX_KEY_LEN");
  const std::array<uint8_t, WC_MAX_KEY_LEN> fits{1};
  const warpcrypt::SecretBytes kept{fits};
  EXPECT_EQ(kept.size(), fits.size());
  EXPECT_EQ(kept.data()[0], 1);
}

}  // namespace
}  // namespace wctest
