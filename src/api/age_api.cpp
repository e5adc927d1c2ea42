// The C API's age calls: argument checks and the key sets, then age/.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "age/age_job.h"
#include "api/arguments.h"
#include "core/host_crypto.h"
#include "core/secret_bytes.h"
#include "engine/fd_io.h"
#include "engine/jobs.h"
#include "engine/memory_file.h"

struct wc_age_recipients {
  std::vector<warpcrypt::age::Recipient> keys;
  wc_age_plugin_ui plugin_ui{};  // given to every plugin key added
};
struct wc_age_identities {
  std::vector<warpcrypt::age::Identity> keys;
  wc_age_plugin_ui plugin_ui{};
};

namespace {

namespace age = warpcrypt::age;
using warpcrypt::kHostCrypto;
using warpcrypt::engine::JobMonitor;
using warpcrypt::engine::JobTotals;

void set_detail(const char **detail, const char *why) {
  if (detail != nullptr) *detail = why;
}

// Adds what `parse` reads from `text` to the set's keys, or nothing.
template <typename Set, typename Parse>
wc_status add_keys(Set &set, const char *text, const char **detail, Parse parse) {
  using Key = typename decltype(set.keys)::value_type;
  std::vector<Key> &keys = set.keys;
  if (text == nullptr) return WC_ERR_INVALID_ARGUMENT;
  const char *why = nullptr;
  std::vector<Key> parsed;
  wc_status status = WC_OK;
  try {
    status = parse(text, &parsed, &why);
    if (status == WC_OK) {
      keys.reserve(keys.size() + parsed.size());
      for (Key &key : parsed) {
        key.plugin_ui = set.plugin_ui;
        keys.push_back(std::move(key));
      }
    }
  } catch (const std::bad_alloc &) {
    status = WC_ERR_OUT_OF_MEMORY;
  }
  if (status != WC_OK) set_detail(detail, why);
  return status;
}

wc_status copy_key(const std::string &text, char *out, size_t out_cap) {
  if (text.size() + 1 > out_cap) return WC_ERR_OUTPUT_TOO_SMALL;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return WC_OK;
}

// Gives the set's plugin keys, present and future, a copy of *ui (none
// for NULL).
template <typename Set>
void set_plugin_ui(Set *set, const wc_age_plugin_ui *ui) {
  if (set == nullptr) return;
  set->plugin_ui = ui != nullptr ? *ui : wc_age_plugin_ui{};
  for (auto &key : set->keys) key.plugin_ui = set->plugin_ui;
}

// The identity at `index`, or nullptr where there is none.
const age::Identity *identity_at(const wc_age_identities *identities, size_t index) {
  return identities != nullptr && index < identities->keys.size() ? &identities->keys[index] : nullptr;
}

// Writes what `format` makes of identity `index` into `out`; on failure
// `out` is zeroed and *detail says why.
template <typename Format>
wc_status write_key(const wc_age_identities *identities, size_t index, char *out, size_t out_cap,
                    const char **detail, Format format) {
  const age::Identity *identity = identity_at(identities, index);
  const char *why = identity == nullptr ? "no identity at that index" : "no buffer to write the key to";
  wc_status status = WC_ERR_INVALID_ARGUMENT;
  if (identity != nullptr && out != nullptr) {
    std::string text;
    try {
      status = format(*identity, &text, &why);
      if (status == WC_OK) status = copy_key(text, out, out_cap);
      if (status == WC_ERR_OUTPUT_TOO_SMALL) {
        why = "the buffer is too small for the key (WC_AGE_KEY_MAX_LEN is enough)";
      }
    } catch (const std::bad_alloc &) {
      status = WC_ERR_OUT_OF_MEMORY;
    }
    warpcrypt::secure_wipe(text.data(), text.size());
  }
  if (status != WC_OK) {
    if (out != nullptr) warpcrypt::secure_wipe(out, out_cap);
    set_detail(detail, why);
  }
  return status;
}

bool range_valid(const wc_age_identities *identities) {
  return identities != nullptr && !identities->keys.empty();
}

// The buffer forms run the descriptor job between two memory files: the
// input copied into one, the result read back from the other.

template <typename Job>
wc_status run_buffer(wc_job *job, bool valid, const wc_options *options, uint8_t *out, size_t out_cap,
                     size_t *out_len, const uint8_t *in, size_t in_len, Job run) {
  valid = valid && out_len != nullptr && (in != nullptr || in_len == 0) && (out != nullptr || out_cap == 0);
  if (out_len != nullptr) *out_len = 0;
  const wc_status status = warpcrypt::run_stream_job(
      job, valid, options, [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
        warpcrypt::engine::MemoryFile input;
        warpcrypt::engine::MemoryFile output;
        if (input.fd() < 0) return monitor.fail_io(WC_IO_INPUT, errno);
        if (output.fd() < 0) return monitor.fail_io(WC_IO_OUTPUT, errno);
        if (!warpcrypt::engine::pwrite_fully(input.fd(), in, in_len, 0)) return monitor.fail_io(WC_IO_INPUT, errno);
        const wc_status result = run(plan, monitor, totals, output.fd(), input.fd());
        if (result != WC_OK) return result;
        struct stat written{};
        if (fstat(output.fd(), &written) != 0) return monitor.fail_io(WC_IO_OUTPUT, errno);
        *out_len = static_cast<size_t>(written.st_size);
        if (*out_len > out_cap) return WC_ERR_OUTPUT_TOO_SMALL;
        size_t got = 0;
        if (!warpcrypt::engine::pread_fully(output.fd(), out, *out_len, 0, &got) || got != *out_len) {
          return monitor.fail_io(WC_IO_OUTPUT, errno);
        }
        return WC_OK;
      });
  if (status != WC_OK && out != nullptr) warpcrypt::secure_wipe(out, out_cap);
  if (status != WC_OK && status != WC_ERR_OUTPUT_TOO_SMALL && out_len != nullptr) *out_len = 0;
  return status;
}

// *info from an inspection; the stanza types go in one block of memory,
// their pointers first, that wc_age_info_release frees.
wc_status fill_info(const age::Inspection &inspection, wc_age_info *info) {
  const size_t count = inspection.stanza_types.size();
  size_t text_len = 0;
  for (const std::string &type : inspection.stanza_types) text_len += type.size() + 1;
  void *block = std::malloc(count * sizeof(const char *) + text_len + 1);
  if (block == nullptr) return WC_ERR_OUT_OF_MEMORY;
  auto **pointers = static_cast<const char **>(block);
  char *text = static_cast<char *>(block) + count * sizeof(const char *);
  for (size_t i = 0; i < count; ++i) {
    const std::string &type = inspection.stanza_types[i];
    std::memcpy(text, type.c_str(), type.size() + 1);
    pointers[i] = text;
    text += type.size() + 1;
  }
  info->armored = inspection.armored ? 1 : 0;
  switch (inspection.postquantum) {
    case age::PostQuantum::no: info->postquantum = WC_AGE_PQ_NO; break;
    case age::PostQuantum::yes: info->postquantum = WC_AGE_PQ_YES; break;
    case age::PostQuantum::unknown: info->postquantum = WC_AGE_PQ_UNKNOWN; break;
  }
  info->stanza_count = count;
  info->stanza_types = pointers;
  info->file_bytes = inspection.file_len;
  info->header_bytes = inspection.header_len;
  info->armor_bytes = inspection.armor_len;
  info->overhead_bytes = inspection.payload.overhead;
  info->payload_bytes = inspection.payload.plaintext;
  info->chunk_count = inspection.payload.chunks;
  return WC_OK;
}

}  // namespace

extern "C" {

wc_status wc_age_recipients_new(wc_age_recipients **recipients) {
  if (recipients == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *recipients = new (std::nothrow) wc_age_recipients;
  return *recipients != nullptr ? WC_OK : WC_ERR_OUT_OF_MEMORY;
}

wc_status wc_age_recipients_add(wc_age_recipients *recipients, const char *text, const char **detail) {
  if (recipients == nullptr) return WC_ERR_INVALID_ARGUMENT;
  return add_keys(*recipients, text, detail, age::parse_recipients_file);
}

wc_status wc_age_recipients_add_passphrase(wc_age_recipients *recipients, const uint8_t *passphrase,
                                           size_t passphrase_len, unsigned work_factor) {
  if (recipients == nullptr || passphrase == nullptr || passphrase_len == 0 || work_factor < 1 ||
      work_factor > age::kMaxWorkFactor) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  try {
    age::Recipient &recipient = recipients->keys.emplace_back();
    recipient.type = age::KeyType::scrypt;
    recipient.passphrase.assign(passphrase, passphrase + passphrase_len);
    recipient.work_factor = work_factor;
  } catch (const std::bad_alloc &) {
    return WC_ERR_OUT_OF_MEMORY;
  }
  return WC_OK;
}

size_t wc_age_recipients_count(const wc_age_recipients *recipients) {
  return recipients != nullptr ? recipients->keys.size() : 0;
}

void wc_age_recipients_free(wc_age_recipients *recipients) { delete recipients; }

wc_status wc_age_identities_new(wc_age_identities **identities) {
  if (identities == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *identities = new (std::nothrow) wc_age_identities;
  return *identities != nullptr ? WC_OK : WC_ERR_OUT_OF_MEMORY;
}

namespace {

wc_status generate_identity(wc_age_identities *identities, age::KeyType type) {
  if (identities == nullptr) return WC_ERR_INVALID_ARGUMENT;
  try {
    age::Identity identity;
    const wc_status status = age::generate_identity(kHostCrypto, &identity, type);
    if (status != WC_OK) return status;
    identities->keys.push_back(std::move(identity));
  } catch (const std::bad_alloc &) {
    return WC_ERR_OUT_OF_MEMORY;
  }
  return WC_OK;
}

}  // namespace

wc_status wc_age_identities_generate(wc_age_identities *identities) {
  return generate_identity(identities, age::KeyType::x25519);
}

wc_status wc_age_identities_generate_pq(wc_age_identities *identities) {
  return generate_identity(identities, age::KeyType::hybrid);
}

wc_status wc_age_identities_add(wc_age_identities *identities, const char *text, const char **detail) {
  return wc_age_identities_add_with_prompt(identities, text, nullptr, nullptr, detail);
}

wc_status wc_age_identities_add_with_prompt(wc_age_identities *identities, const char *text,
                                            wc_age_passphrase_fn ask, void *context, const char **detail) {
  if (identities == nullptr) return WC_ERR_INVALID_ARGUMENT;
  const auto parse_and_attach = [ask, context](std::string_view file, std::vector<age::Identity> *parsed,
                                               const char **why) {
    const wc_status status = age::parse_identities_file(file, parsed, why);
    if (status != WC_OK || ask == nullptr) return status;
    for (age::Identity &identity : *parsed) {
      if (!identity.ssh || !identity.ssh->encrypted()) continue;
      identity.ask_ssh_passphrase = [ask, context](std::vector<uint8_t> *passphrase) {
        passphrase->assign(WC_AGE_PASSPHRASE_MAX, 0);
        size_t len = 0;
        const wc_status asked = ask(context, passphrase->data(), passphrase->size(), &len);
        if (asked != WC_OK || len > passphrase->size()) {
          warpcrypt::secure_wipe(passphrase->data(), passphrase->size());
          passphrase->clear();
          return asked != WC_OK ? asked : WC_ERR_INVALID_ARGUMENT;
        }
        warpcrypt::secure_wipe(passphrase->data() + len, passphrase->size() - len);
        passphrase->resize(len);
        return WC_OK;
      };
    }
    return status;
  };
  return add_keys(*identities, text, detail, parse_and_attach);
}

wc_status wc_age_identities_add_passphrase(wc_age_identities *identities, const uint8_t *passphrase,
                                           size_t passphrase_len, unsigned max_work_factor) {
  if (identities == nullptr || passphrase == nullptr || passphrase_len == 0 || max_work_factor < 1 ||
      max_work_factor > age::kMaxWorkFactor) {
    return WC_ERR_INVALID_ARGUMENT;
  }
  try {
    age::Identity &identity = identities->keys.emplace_back();
    identity.type = age::KeyType::scrypt;
    identity.passphrase.assign(passphrase, passphrase + passphrase_len);
    identity.max_work_factor = max_work_factor;
  } catch (const std::bad_alloc &) {
    return WC_ERR_OUT_OF_MEMORY;
  }
  return WC_OK;
}

size_t wc_age_identities_count(const wc_age_identities *identities) {
  return identities != nullptr ? identities->keys.size() : 0;
}

wc_status wc_age_identities_add_copy(wc_age_identities *identities, const wc_age_identities *from, size_t index) {
  const age::Identity *identity = identity_at(from, index);
  if (identities == nullptr || identity == nullptr) return WC_ERR_INVALID_ARGUMENT;
  try {
    // Copied before it is added: adding may move `from`'s keys, where
    // `from` is this set.
    age::Identity copy = *identity;
    copy.plugin_ui = identities->plugin_ui;
    identities->keys.push_back(std::move(copy));
  } catch (const std::bad_alloc &) {
    return WC_ERR_OUT_OF_MEMORY;
  }
  return WC_OK;
}

wc_status wc_age_identity_type(const wc_age_identities *identities, size_t index, const char **type) {
  const age::Identity *identity = identity_at(identities, index);
  if (type == nullptr) return WC_ERR_INVALID_ARGUMENT;
  *type = identity != nullptr ? age::type_name(*identity) : nullptr;
  return identity != nullptr ? WC_OK : WC_ERR_INVALID_ARGUMENT;
}

wc_status wc_age_identity_format(const wc_age_identities *identities, size_t index, char *out, size_t out_cap,
                                 const char **detail) {
  return write_key(identities, index, out, out_cap, detail, age::format_identity);
}

wc_status wc_age_identity_recipient(const wc_age_identities *identities, size_t index, char *out, size_t out_cap,
                                    const char **detail) {
  return write_key(identities, index, out, out_cap, detail,
                   [](const age::Identity &identity, std::string *text, const char **why) {
                     age::Recipient recipient;
                     const wc_status status = age::recipient_of(kHostCrypto, identity, &recipient, why);
                     return status != WC_OK ? status : age::format_recipient(recipient, text, why);
                   });
}

void wc_age_identities_free(wc_age_identities *identities) { delete identities; }

void wc_age_recipients_set_plugin_ui(wc_age_recipients *recipients, const wc_age_plugin_ui *ui) {
  set_plugin_ui(recipients, ui);
}

void wc_age_identities_set_plugin_ui(wc_age_identities *identities, const wc_age_plugin_ui *ui) {
  set_plugin_ui(identities, ui);
}

wc_status wc_age_encrypt_fd(const wc_options *options, const wc_age_recipients *recipients, int armor, wc_job *job,
                            int out_fd, int in_fd) {
  const bool valid = recipients != nullptr && out_fd >= 0 && in_fd >= 0;
  return warpcrypt::run_stream_job(
      job, valid, options, [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
        return age::run_encrypt_fd(kHostCrypto, plan, recipients->keys, armor != 0,
                                   out_fd, in_fd, monitor, &totals);
      });
}

wc_status wc_age_decrypt_fd(const wc_options *options, const wc_age_identities *identities, uint64_t offset,
                            uint64_t length, wc_job *job, int out_fd, int in_fd) {
  const bool valid = range_valid(identities) && out_fd >= 0 && in_fd >= 0;
  return warpcrypt::run_stream_job(
      job, valid, options, [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
        return age::run_decrypt_fd(kHostCrypto, plan, identities->keys, offset,
                                   length, out_fd, in_fd, monitor, &totals);
      });
}

wc_status wc_age_encrypt_file(const wc_options *options, const wc_age_recipients *recipients, int armor, wc_job *job,
                              const char *out_path, const char *in_path) {
  const bool valid = recipients != nullptr && out_path != nullptr && in_path != nullptr;
  return warpcrypt::run_stream_job(
      job, valid, options, [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
        return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
          return age::run_encrypt_fd(kHostCrypto, plan, recipients->keys, armor != 0,
                                     out_fd, in_fd, monitor, &totals);
        });
      });
}

wc_status wc_age_decrypt_file(const wc_options *options, const wc_age_identities *identities, uint64_t offset,
                              uint64_t length, wc_job *job, const char *out_path, const char *in_path) {
  const bool valid = range_valid(identities) && out_path != nullptr && in_path != nullptr;
  return warpcrypt::run_stream_job(
      job, valid, options, [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals) {
        return warpcrypt::engine::run_file_job(out_path, in_path, monitor, [&](int out_fd, int in_fd) {
          return age::run_decrypt_fd(kHostCrypto, plan, identities->keys, offset,
                                     length, out_fd, in_fd, monitor, &totals);
        });
      });
}

wc_status wc_age_encrypt_buffer(const wc_options *options, const wc_age_recipients *recipients, int armor,
                                wc_job *job, uint8_t *out, size_t out_cap, size_t *out_len, const uint8_t *in,
                                size_t in_len) {
  return run_buffer(job, recipients != nullptr, options, out, out_cap, out_len, in, in_len,
                    [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals, int out_fd,
                        int in_fd) {
                      return age::run_encrypt_fd(kHostCrypto, plan, recipients->keys,
                                                 armor != 0, out_fd, in_fd, monitor, &totals);
                    });
}

wc_status wc_age_decrypt_buffer(const wc_options *options, const wc_age_identities *identities, uint64_t offset,
                                uint64_t length, wc_job *job, uint8_t *out, size_t out_cap, size_t *out_len,
                                const uint8_t *in, size_t in_len) {
  return run_buffer(job, range_valid(identities), options, out, out_cap, out_len, in, in_len,
                    [&](const warpcrypt::engine::Placement &plan, JobMonitor &monitor, JobTotals &totals, int out_fd,
                        int in_fd) {
                      return age::run_decrypt_fd(kHostCrypto, plan, identities->keys,
                                                 offset, length, out_fd, in_fd, monitor, &totals);
                    });
}

size_t wc_age_encrypted_capacity(const wc_age_recipients *recipients, size_t in_len, int armor) {
  static_assert(WC_AGE_STANZA_ROOM == age::kStanzaRoom, "the header's figure is the format's");
  const uint64_t count = recipients != nullptr ? recipients->keys.size() : 0;
  const uint64_t bound = age::encrypted_len_bound(count, in_len, armor != 0);
  return bound > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(bound);
}

wc_status wc_age_inspect_fd(int in_fd, wc_age_info *info, wc_job *job) {
  const bool valid = info != nullptr && in_fd >= 0;
  if (info != nullptr) *info = wc_age_info{};
  return warpcrypt::engine::run_monitored(
      job, valid ? WC_OK : WC_ERR_INVALID_ARGUMENT, [&](JobMonitor &monitor, JobTotals &totals) {
        age::Inspection inspection;
        try {
          const wc_status status = age::run_inspect_fd(in_fd, &inspection, monitor, &totals);
          if (status != WC_OK) return status;
        } catch (const std::bad_alloc &) {
          return WC_ERR_OUT_OF_MEMORY;
        }
        return fill_info(inspection, info);
      });
}

void wc_age_info_release(wc_age_info *info) {
  if (info == nullptr) return;
  // One block: the pointers, then the names they point at.
  std::free(const_cast<const char **>(info->stanza_types));
  *info = wc_age_info{};
}

}  // extern "C"
