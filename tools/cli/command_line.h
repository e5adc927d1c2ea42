// The command line of `warpcrypt`: CLI11 parses every command's arguments,
// and this is the one place that fits openssl's spellings to it.
//
// openssl spells an option as one dash and a whole word (-in, -pass, -K).
// CLI11 reads one dash as one letter, or a cluster of them (-in as -i -n),
// and whole words only after two dashes. So every option is declared to
// CLI11 by its word alone (--in), and before CLI11 parses, the arguments
// after the command's name are translated (CommandLine::translate):
//  - an argument that is exactly a one-dash spelling the command declares
//    becomes its two-dash form: -in becomes --in, -K becomes --K;
//  - a one-dash word the command takes for a value (add_value_words)
//    becomes that option and value: -aes-256-ctr, --cipher aes-256-ctr;
//  - an option's value is the next argument as it stands, whatever it looks
//    like; a secret's value stays here, and CLI11 gets a stand-in.
// Nothing else is rewritten, so an argument the command does not declare
// reaches CLI11 as typed and is reported as unknown. No command's option
// has a one-letter CLI11 name, so no argument is ever split into letters:
// a glued "-K0011..." is unknown, as it is to openssl.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arguments.h"

namespace CLI {
class App;
}  // namespace CLI

namespace warpcrypt::cli {

class HelpFormatter;

// One command: its options, declared in the spellings users type, each with
// the function that takes its value. A function runs as its option is
// parsed, in command-line order, so a later option overrides an earlier one
// (-e -d decrypts), as in openssl; it throws CliError for a value it cannot
// take.
class Command {
 public:
  Command(const Command &) = delete;
  Command &operator=(const Command &) = delete;

  // `spellings`: comma-separated, each "-word" (openssl's one dash) or
  // "--word"; the help shows them as given.
  void add_option(const std::string &spellings, const std::string &value_name, const std::string &description,
                  std::function<void(const std::string &)> take);
  // An option whose value is a secret (a key, a passphrase source). CLI11
  // copies its arguments into memory that it frees without wiping, so it
  // never sees this value: the command line keeps it in wiped memory and
  // hands CLI11 a stand-in. No message shows it either, nor an unknown
  // argument that starts with this option's spelling ("-passpass:...").
  void add_secret_option(const std::string &spellings, const std::string &value_name, const std::string &description,
                         std::function<void(const SecretText &)> take);
  void add_flag(const std::string &spellings, const std::string &description, std::function<void()> on_flag);
  // A positional argument, such as the input file age takes after its
  // options; a second one is reported as unknown.
  void add_positional(const std::string &name, const std::string &description,
                      std::function<void(const std::string &)> take);
  // openssl's -aes-256-ctr for -cipher aes-256-ctr: a one-dash word that
  // `names_value` accepts stands for the option spelled `spelling` (already
  // declared) with the word as its value. Unknown arguments are then
  // reported as an "option or <noun>".
  void add_value_words(const std::string &spelling, const std::string &noun,
                       std::function<bool(const std::string &)> names_value);
  // An unknown argument that starts with `prefix` is reported by the prefix
  // alone, as one starting with a secret option's spelling is.
  void hide_unknown_arguments_starting_with(const std::string &prefix) { hidden_prefixes_.push_back(prefix); }
  // Options another tool has (openssl's -engine) that this command does not
  // take on purpose: each is refused with one line that gives `reason`, not
  // reported as unknown. The help leaves them out.
  void refuse(const std::string &spellings, bool takes_value, const std::string &reason);
  // Text the help prints after the options.
  void set_footer(const std::string &text);
  // The command's --help goes to standard error, as age prints its usage,
  // so that a script's standard output holds only what the command writes.
  void print_help_on_stderr() { help_on_stderr_ = true; }
  // Run with no arguments at all, the command prints that help and exits
  // with the usage status, as age prints its usage: it has nothing to do
  // without some.
  void print_help_when_bare() { help_when_bare_ = true; }
  // The command's name and one-line description.
  std::string name() const;
  std::string description() const;

  // What runs the command once its arguments are parsed; returns the exit
  // status.
  void set_run(std::function<int()> run) { run_ = std::move(run); }
  int run() const { return run_(); }

 private:
  friend class CommandLine;

  // An option as the help, the manual page and the completions show it.
  struct Documented {
    std::vector<std::string> spellings;  // as declared: -in, --offset
    std::string value_name;              // empty for a flag
    std::string description;
  };

  // A declared spelling, as the translation reads it.
  struct Word {
    std::string parser_name;  // the two-dash form CLI11 knows it by
    bool takes_value = false;
    bool secret = false;
  };

  Command(CLI::App *app, HelpFormatter *formatter, std::vector<SecretText> *secrets);
  // Records each of `spellings` for the translation and returns CLI11's
  // names for them.
  std::string declare(const std::string &spellings, bool takes_value, bool secret);
  // The two-dash name CLI11 knows a value word's option by, or null if
  // `arg` is no value word.
  const std::string *value_word_option(const std::string &arg) const;
  // The one-line error for an argument CLI11 did not recognise.
  std::string describe_unknown(const std::string &arg) const;

  CLI::App *app_;
  HelpFormatter *formatter_;
  std::vector<SecretText> *secrets_;  // the command line's, for this parse
  std::map<std::string, Word> words_;  // every spelling CLI11 would accept: -in and --in
  std::vector<std::string> hidden_prefixes_;  // the secret options' spellings, and more
  std::string value_word_option_;  // empty: no value words
  std::function<bool(const std::string &)> names_value_;
  std::string unknown_noun_ = "option";
  std::vector<Documented> documented_;  // in the order declared
  std::function<int()> run_;
  bool help_on_stderr_ = false;
  bool help_when_bare_ = false;
};

// What a command line asks for: the command to run or, where `command` is
// null, `text` to print and the exit status (help, the version, the manual
// page, completions, or the list of commands when none is named), on
// standard output unless `on_stderr` (a command's help that goes there).
struct Invocation {
  const Command *command = nullptr;
  std::string text;
  int exit_status = 0;
  bool on_stderr = false;
};

class CommandLine {
 public:
  CommandLine();
  ~CommandLine();
  CommandLine(const CommandLine &) = delete;
  CommandLine &operator=(const CommandLine &) = delete;

  Command &add_command(const std::string &name, const std::string &description);

  // Parses the arguments after the program's name (the command's name
  // first), running each option's function. Anything it cannot take is a
  // CliError of one line. `warpcrypt help enc` is `warpcrypt enc --help`.
  Invocation parse(const std::vector<std::string> &args);

  // Reference pages made from the commands as declared, so that no page
  // says other than the parser does (reference_pages.cpp): the manual page
  // in roff (`warpcrypt --help-man`), and the completions for bash, zsh or
  // fish (`warpcrypt --completion SHELL`).
  std::string manual_page() const;
  std::string completion(const std::string &shell) const;

 private:
  // The arguments after `command`'s name, as CLI11 is to read them (see
  // the top of this file); secret values go to secrets_.
  std::vector<std::string> translate(const Command &command, std::span<const std::string> args);
  const Command *find(const std::string &name) const;
  std::string help_for(const std::string &command_name) const;
  void reject_unknown_arguments() const;

  std::shared_ptr<HelpFormatter> formatter_;
  std::unique_ptr<CLI::App> app_;
  CLI::App *help_command_;
  std::string help_topic_;  // the command `warpcrypt help` is asked about
  std::vector<std::unique_ptr<Command>> commands_;
  std::vector<SecretText> secrets_;
};

}  // namespace warpcrypt::cli
