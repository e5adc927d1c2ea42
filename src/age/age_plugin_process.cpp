#include "age/age_plugin_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/secret_bytes.h"

extern char **environ;

namespace warpcrypt::age {
namespace {

constexpr size_t kReadPiece = 64 * 1024;

// SIGPIPE held on this thread while it writes to a plugin that may have
// exited: a write then fails with EPIPE instead. A SIGPIPE that our writes
// raise is taken back before the mask is restored; one already pending
// before is left for its owner.
class HeldSigpipe {
 public:
  HeldSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~HeldSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{};
      while (sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  HeldSigpipe(const HeldSigpipe &) = delete;
  HeldSigpipe &operator=(const HeldSigpipe &) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
  bool was_pending_ = false;
};

// What a plugin sees of the environment (docs/age.md, "What a plugin
// sees"): what age's plugins need to find their programs, files, devices
// and the user, and no more, so that a secret some other program keeps in
// a variable (a token, an exported passphrase) reaches no plugin. A name
// ending in '*' passes every variable it begins.
constexpr std::string_view kPluginEnvironment[] = {
    "PATH",                      // the programs a plugin runs in turn (pinentry, a TPM's tools)
    "HOME",                      // its configuration and key files under the home directory
    "USER", "LOGNAME",           // whose keys and devices: prompts and per-user state
    "LANG", "LC_*",              // the language and character set it talks to the user in
    "TZ",                        // the times it writes
    "TMPDIR",                    // where it may put a temporary file
    "TERM",                      // a prompt of its own on the terminal
    "XDG_RUNTIME_DIR",           // the sockets of per-user services (pcscd, a TPM's resource manager)
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",  // where it keeps its files, if not under HOME
    "DISPLAY", "WAYLAND_DISPLAY",  // a graphical PIN prompt
    "DBUS_SESSION_BUS_ADDRESS",  // a notification to touch a security key
    "AGEDEBUG",                  // age's debugging switch, which plugins built on age's Go package read
};

// A plugin's own settings: the variables named after it, its name in upper
// case with '_' for "+-.", then '_' (WCTEST_MODE for age-plugin-wctest).
std::string own_variable_prefix(std::string_view plugin) {
  std::string prefix;
  for (char c : plugin) {
    const auto byte = static_cast<unsigned char>(c);
    prefix += std::isalnum(byte) ? static_cast<char>(std::toupper(byte)) : '_';
  }
  return prefix + '_';
}

bool passes_to_plugin(std::string_view variable, std::string_view own_prefix) {
  if (variable.starts_with(own_prefix)) return true;
  return std::any_of(std::begin(kPluginEnvironment), std::end(kPluginEnvironment), [variable](std::string_view name) {
    return name.ends_with('*') ? variable.starts_with(name.substr(0, name.size() - 1)) : variable == name;
  });
}

// The "NAME=value" entries of our environment that pass to `plugin`, then
// the null that ends them.
std::vector<char *> plugin_environment(std::string_view plugin) {
  const std::string own_prefix = own_variable_prefix(plugin);
  std::vector<char *> passed;
  for (char **entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    if (passes_to_plugin(text.substr(0, text.find('=')), own_prefix)) passed.push_back(*entry);
  }
  passed.push_back(nullptr);
  return passed;
}

// The plugin's program: the first executable `name` in an absolute folder
// of PATH. An empty or relative entry names the working directory, where
// another user may have planted a program, so it is passed over, as Go's
// exec.LookPath refuses it for age. nullopt where none is found.
std::optional<std::string> find_program(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::string_view folders = path != nullptr ? path : "";
  while (!folders.empty()) {
    const size_t end = folders.find(':');
    const std::string_view folder = folders.substr(0, end);
    folders = end == std::string_view::npos ? std::string_view{} : folders.substr(end + 1);
    if (!folder.starts_with('/')) continue;
    std::string candidate(folder);
    candidate += '/';
    candidate += name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// The running plugin: its pipes' ends on our side, and its pid, waited for
// on destruction (killed first unless it finished its conversation).
class PluginProcess {
 public:
  ~PluginProcess() {
    // A plugin that failed gets no say, nor a broken pipe to complain of: it
    // is killed before its pipes close. One that finished sees its input
    // end and exits by itself, after whatever cleaning up it does, within
    // kPluginExitGrace; past that it is killed too, since nothing it does
    // then can change the job's result, and the job must not wait for it.
    if (pid_ > 0 && !finished_) kill(pid_, SIGKILL);
    close_fd(&to_plugin_);
    close_fd(&from_plugin_);
    if (pid_ <= 0) return;
    if (finished_ && reaped_within(kPluginExitGrace)) return;
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }

  wc_status start(const std::string &plugin, std::string_view protocol, const char **detail) {
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
      for (int *fd : {&in[0], &in[1], &out[0], &out[1]}) close_fd(fd);
      *detail = "cannot create the pipes to an age plugin";
      return WC_ERR_IO;
    }
    to_plugin_ = in[1];
    from_plugin_ = out[0];
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    std::string flag = "--age-plugin=";
    flag += protocol;
    // The plugin starts with no signal blocked, whatever the calling thread
    // holds back.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
    std::string program = "age-plugin-" + plugin;
    const std::optional<std::string> found = find_program(program);
    char *const argv[] = {program.data(), flag.data(), nullptr};
    const std::vector<char *> environment = plugin_environment(plugin);
    const int error =
        found ? posix_spawn(&pid_, found->c_str(), &actions, &attributes, argv, environment.data()) : ENOENT;
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    if (error != 0) {
      pid_ = 0;
      // age's hint too: someone who lacks a plugin is looking for one.
      *detail = error == ENOENT ? "age plugin not found: its program is not on PATH (visit "
                                  "https://age-encryption.org/awesome#plugins for a list of plugins)"
                                : "cannot start the age plugin's program";
      return error == ENOENT ? WC_ERR_UNSUPPORTED : WC_ERR_IO;
    }
    fcntl(to_plugin_, F_SETFL, fcntl(to_plugin_, F_GETFL) | O_NONBLOCK);
    fcntl(from_plugin_, F_SETFL, fcntl(from_plugin_, F_GETFL) | O_NONBLOCK);
    return WC_OK;
  }

  wc_status converse(PluginSession &session, const char **detail) {
    std::string pending = session.opening();
    std::string piece(kReadPiece, '\0');
    wc_status status = WC_OK;
    while (status == WC_OK && !session.finished()) {
      pollfd fds[2] = {{from_plugin_, POLLIN, 0}, {pending.empty() ? -1 : to_plugin_, POLLOUT, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        *detail = "cannot wait for the age plugin";
        status = WC_ERR_IO;
        break;
      }
      if (fds[1].revents != 0) write_some(&pending);
      if (fds[0].revents == 0) continue;
      const ssize_t got = read(from_plugin_, piece.data(), piece.size());
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        *detail = "cannot read from the age plugin";
        status = WC_ERR_IO;
      } else if (got == 0) {
        *detail = "the age plugin exited before it finished";
        status = WC_ERR_UNSUPPORTED;
      } else {
        status = session.feed(std::string_view(piece.data(), static_cast<size_t>(got)), &pending, detail);
      }
    }
    // The last reply (the "ok" to an error) is offered once, without
    // waiting: the plugin may be gone, or no longer reading.
    if (!pending.empty() && to_plugin_ >= 0) write_some(&pending);
    secure_wipe(pending.data(), pending.size());
    secure_wipe(piece.data(), piece.size());
    finished_ = status == WC_OK;
    return status;
  }

 private:
  // Writes what the pipe takes now. A plugin that closed its input stops
  // being written to: whether it finished is for its output to say.
  void write_some(std::string *pending) {
    const ssize_t wrote = write(to_plugin_, pending->data(), pending->size());
    if (wrote < 0) {
      if (errno == EINTR || errno == EAGAIN) return;
      secure_wipe(pending->data(), pending->size());
      pending->clear();
      close_fd(&to_plugin_);
      return;
    }
    secure_wipe(pending->data(), static_cast<size_t>(wrote));
    pending->erase(0, static_cast<size_t>(wrote));
  }

  // Whether the plugin exited, and was reaped, within `grace`. Polled, from
  // 1 ms doubling to 32 ms, so that a plugin that exits at once costs about
  // a millisecond and one that lingers costs no busy core.
  bool reaped_within(std::chrono::milliseconds grace) const {
    const auto deadline = std::chrono::steady_clock::now() + grace;
    std::chrono::milliseconds pause{1};
    for (;;) {
      const pid_t reaped = waitpid(pid_, nullptr, WNOHANG);
      if (reaped == pid_ || (reaped < 0 && errno != EINTR)) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds{32});
    }
  }

  pid_t pid_ = 0;
  int to_plugin_ = -1;
  int from_plugin_ = -1;
  bool finished_ = false;
};

// The distinct plugin names of `keys`, in the order they first appear.
template <typename Key>
std::vector<std::string> plugins_of(std::span<const Key *const> keys) {
  std::vector<std::string> names;
  for (const Key *key : keys) {
    if (std::find(names.begin(), names.end(), key->plugin) == names.end()) names.push_back(key->plugin);
  }
  return names;
}

// The encodings of `plugin`'s keys, and the ui of the first of them.
template <typename Key>
std::vector<std::string> encodings_of(std::span<const Key *const> keys, const std::string &plugin,
                                      wc_age_plugin_ui *ui) {
  std::vector<std::string> encodings;
  for (const Key *key : keys) {
    if (key->plugin != plugin) continue;
    if (encodings.empty()) *ui = key->plugin_ui;
    encodings.push_back(key->encoding);
  }
  return encodings;
}

void wipe_all(std::vector<std::string> *texts) {
  for (std::string &text : *texts) secure_wipe(text.data(), text.size());
}

}  // namespace

wc_status run_plugin(PluginSession &session, std::string_view protocol, const char **detail) {
  PluginProcess process;
  wc_status status = process.start(session.name(), protocol, detail);
  if (status != WC_OK) return status;
  const HeldSigpipe held;
  return process.converse(session, detail);
}

wc_status wrap_with_plugins(std::span<const Recipient *const> recipients, const FileKey &file_key,
                            std::vector<Stanza> *stanzas, const char **detail) {
  for (const std::string &plugin : plugins_of(recipients)) {
    wc_age_plugin_ui ui{};
    const std::vector<std::string> encodings = encodings_of(recipients, plugin, &ui);
    PluginRecipientSession session(plugin, ui, encodings, {}, file_key);
    if (const wc_status status = run_plugin(session, "recipient-v1", detail); status != WC_OK) return status;
    std::move(session.stanzas().begin(), session.stanzas().end(), std::back_inserter(*stanzas));
  }
  return WC_OK;
}

wc_status unwrap_with_plugins(std::span<const Identity *const> identities, const Header &header, FileKey *file_key,
                              const char **detail) {
  for (const std::string &plugin : plugins_of(identities)) {
    wc_age_plugin_ui ui{};
    std::vector<std::string> encodings = encodings_of(identities, plugin, &ui);
    PluginIdentitySession session(plugin, ui, encodings, header);
    wipe_all(&encodings);
    const char *why = nullptr;
    const wc_status status = run_plugin(session, "identity-v1", &why);
    if (status == WC_ERR_NO_IDENTITY) continue;
    if (status != WC_OK) return fail(status, detail, why);
    file_key->bytes = session.file_key().bytes;
    return WC_OK;
  }
  return WC_ERR_NO_IDENTITY;
}

}  // namespace warpcrypt::age
