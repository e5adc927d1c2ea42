// Running an age plugin's program for a PluginSession (age_plugin.h):
// age-plugin-NAME found on PATH, started without a shell with
// --age-plugin=PROTOCOL, its standard input and output the conversation's
// pipes and its standard error the caller's, so that what a plugin says of
// its own failures reaches the user. Its environment is only what age's
// plugins need (kPluginEnvironment in age_plugin_process.cpp).
#pragma once

#include <chrono>
#include <span>
#include <string_view>
#include <vector>

#include "age/age_plugin.h"
#include "age/key.h"

namespace warpcrypt::age {

// How long a plugin that has finished its conversation may take to exit once
// its input closes before it is killed. age's plugins exit at once; one that
// stays must not hold the job, whose result it can no longer change.
inline constexpr std::chrono::milliseconds kPluginExitGrace{1000};

// Holds `session` with the plugin named by session.name() over `protocol`
// ("recipient-v1", "identity-v1") until the session is finished, or fails
// (with *detail): the program missing, the plugin exiting or misbehaving
// before it is done. The plugin is reaped in every case: a failed one killed
// first, a finished one killed if it stays past kPluginExitGrace. A plugin
// that stops reading cannot kill the caller with SIGPIPE: the signal is held
// on this thread alone while it writes.
wc_status run_plugin(PluginSession &session, std::string_view protocol, const char **detail);

// Appends the stanzas of every plugin of `recipients` (all plugin
// recipients), each plugin run once (recipient-v1) for all of its
// recipients, in the order the plugins first appear.
wc_status wrap_with_plugins(std::span<const Recipient *const> recipients, const FileKey &file_key,
                            std::vector<Stanza> *stanzas, const char **detail);
// Offers the header to every plugin of `identities` (all plugin
// identities, identity-v1), each run once for all of its identities, until
// one returns a file key, which is not yet checked against the header's
// MAC. WC_ERR_NO_IDENTITY, *detail untouched, where none does; a plugin's
// failure ends the search.
wc_status unwrap_with_plugins(std::span<const Identity *const> identities, const Header &header, FileKey *file_key,
                              const char **detail);

}  // namespace warpcrypt::age
