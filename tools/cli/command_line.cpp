#include "command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "cli_error.h"

namespace warpcrypt::cli {

namespace {

// The help's lines, as a terminal's customary 80 columns leave them.
constexpr size_t kHelpWidth = 78;
constexpr size_t kHelpNameWidth = 24;

// `text` in lines of at most `width` characters, broken between words.
std::string fold(const std::string &text, size_t width) {
  std::string folded;
  size_t line = 0;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (line != 0 && line + 1 + word.size() > width) {
      folded += '\n';
      line = 0;
    } else if (line != 0) {
      folded += ' ';
      ++line;
    }
    folded += word;
    line += word.size();
  }
  return folded;
}

// What --help-man and --completion print, thrown from their options' functions
// as CLI11 throws its help.
struct PrintText {
  std::string text;
};

// `warpcrypt --version`: this program's and the library's version, the
// OpenSSL it runs on, and CUDA's runtime and driver where it is built in.
std::string version_text() {
  std::string text = std::string("warpcrypt ") + wc_version() + "\nOpenSSL: " + wc_openssl_version();
  int runtime = 0;
  int driver = 0;
  auto dotted = [](int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); };
  if (wc_cuda_versions(&runtime, &driver) != WC_OK) {
    text += "\nCUDA: not built";
  } else {
    text += "\nCUDA: runtime " + dotted(runtime) + ", driver " + (driver != 0 ? dotted(driver) : "none");
  }
  return text;
}

}  // namespace

// CLI11's help, naming each option as users type it (-in, not CLI11's --in),
// with descriptions folded to the width (CLI11 prints each on one line).
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() {
    column_width(kHelpNameWidth);
    label("SUBCOMMAND", "COMMAND");
  }

  void show_as(const CLI::Option *option, std::string spellings) { shown_as_[option] = std::move(spellings); }

  std::string make_option_name(const CLI::Option *option, bool positional) const override {
    const auto found = shown_as_.find(option);
    return found != shown_as_.end() ? found->second : CLI::Formatter::make_option_name(option, positional);
  }

  std::string make_option_desc(const CLI::Option *option) const override {
    return fold(option->get_description(), kHelpWidth - get_column_width());
  }

 private:
  std::map<const CLI::Option *, std::string> shown_as_;
};

namespace {

std::vector<std::string> split_spellings(const std::string &spellings) {
  std::vector<std::string> split;
  size_t start = 0;
  while (start <= spellings.size()) {
    const size_t comma = std::min(spellings.find(',', start), spellings.size());
    split.push_back(spellings.substr(start, comma - start));
    start = comma + 1;
  }
  return split;
}

// The help's column of names: the spellings as declared.
std::string shown_spellings(const std::string &spellings) {
  std::string shown;
  for (const std::string &spelling : split_spellings(spellings)) shown += (shown.empty() ? "" : ", ") + spelling;
  return shown;
}

// A secret option's stand-in is the index of its value among the secrets.
size_t secret_index(const std::string &stand_in) {
  size_t index = 0;
  const auto [end, error] = std::from_chars(stand_in.data(), stand_in.data() + stand_in.size(), index);
  if (error != std::errc() || end != stand_in.data() + stand_in.size()) {
    throw std::logic_error("a secret option's value reached CLI11 without the translation");
  }
  return index;
}

// Every option: its function runs as it is parsed, so the command line's
// order decides (-e -d decrypts), and a repeated option's last value wins.
void configure(CLI::Option *option) {
  option->trigger_on_parse()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

}  // namespace

Command::Command(CLI::App *app, HelpFormatter *formatter, std::vector<SecretText> *secrets)
    : app_(app), formatter_(formatter), secrets_(secrets) {
  // Unknown arguments are left for reject_unknown_arguments(), whose message
  // never shows a secret, where CLI11's would list them all.
  app_->allow_extras();
  const std::string help_spellings = "-h,-help,--help";
  CLI::Option *help = app_->set_help_flag(declare(help_spellings, false, false), "print this help");
  formatter_->show_as(help, shown_spellings(help_spellings));
  documented_.push_back({split_spellings(help_spellings), "", "print this help"});
}

std::string Command::name() const { return app_->get_name(); }
std::string Command::description() const { return app_->get_description(); }

std::string Command::declare(const std::string &spellings, bool takes_value, bool secret) {
  std::vector<std::string> parser_names;
  for (const std::string &spelling : split_spellings(spellings)) {
    const bool two_dashes = spelling.rfind("--", 0) == 0;
    if (spelling.size() < 2 || spelling[0] != '-' || (two_dashes && spelling.size() < 3)) {
      throw std::logic_error("an option spelled '" + spelling + "': a dash and a word, or two dashes and a word");
    }
    const std::string word = spelling.substr(two_dashes ? 2 : 1);
    const Word declared{"--" + word, takes_value, secret};
    // CLI11 takes the two-dash form as well: the translation must see it too,
    // or a secret given as --pass would reach CLI11.
    for (const std::string &accepted : {spelling, declared.parser_name}) {
      words_[accepted] = declared;
      if (secret) hidden_prefixes_.push_back(accepted);
    }
    if (std::find(parser_names.begin(), parser_names.end(), declared.parser_name) == parser_names.end()) {
      parser_names.push_back(declared.parser_name);
    }
  }
  std::string joined;
  for (const std::string &name : parser_names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

void Command::add_option(const std::string &spellings, const std::string &value_name, const std::string &description,
                         std::function<void(const std::string &)> take) {
  CLI::Option *option = app_->add_option(
      declare(spellings, true, false),
      [take = std::move(take)](const CLI::results_t &values) {
        take(values.back());
        return true;
      },
      description);
  configure(option->type_name(value_name));
  formatter_->show_as(option, shown_spellings(spellings));
  documented_.push_back({split_spellings(spellings), value_name, description});
}

void Command::add_secret_option(const std::string &spellings, const std::string &value_name,
                                const std::string &description, std::function<void(const SecretText &)> take) {
  CLI::Option *option = app_->add_option(
      declare(spellings, true, true),
      [secrets = secrets_, take = std::move(take)](const CLI::results_t &values) {
        take(secrets->at(secret_index(values.back())));
        return true;
      },
      description);
  configure(option->type_name(value_name));
  formatter_->show_as(option, shown_spellings(spellings));
  documented_.push_back({split_spellings(spellings), value_name, description});
}

void Command::add_flag(const std::string &spellings, const std::string &description, std::function<void()> on_flag) {
  CLI::Option *option = app_->add_flag_callback(declare(spellings, false, false), std::move(on_flag), description);
  configure(option);
  formatter_->show_as(option, shown_spellings(spellings));
  documented_.push_back({split_spellings(spellings), "", description});
}

void Command::add_positional(const std::string &name, const std::string &description,
                             std::function<void(const std::string &)> take) {
  configure(app_->add_option(
      name,
      [take = std::move(take)](const CLI::results_t &values) {
        take(values.back());
        return true;
      },
      description));
}

void Command::add_value_words(const std::string &spelling, const std::string &noun,
                              std::function<bool(const std::string &)> names_value) {
  value_word_option_ = words_.at(spelling).parser_name;
  names_value_ = std::move(names_value);
  unknown_noun_ = "option or " + noun;
}

void Command::refuse(const std::string &spellings, bool takes_value, const std::string &reason) {
  for (const std::string &spelling : split_spellings(spellings)) {
    const std::string message = spelling + " is not supported: " + reason;
    CLI::Option *option =
        takes_value ? app_->add_option(declare(spelling, true, false),
                                       [message](const CLI::results_t &) -> bool { throw CliError(message); })
                    : app_->add_flag_callback(declare(spelling, false, false), [message] { throw CliError(message); });
    configure(option);
    option->group("");
  }
}

void Command::set_footer(const std::string &text) { app_->footer(text); }

const std::string *Command::value_word_option(const std::string &arg) const {
  const bool one_dash_word = arg.size() > 1 && arg[0] == '-' && arg[1] != '-';
  if (value_word_option_.empty() || !one_dash_word || !names_value_(arg.substr(1))) return nullptr;
  return &value_word_option_;
}

std::string Command::describe_unknown(const std::string &arg) const {
  // Echoed to help spot a typo, unless it could be a secret glued to its
  // option ("-K0011...").
  std::string shown = "'" + arg + "'";
  for (const std::string &prefix : hidden_prefixes_) {
    if (arg.rfind(prefix, 0) == 0) {
      shown = "starting with '" + prefix + "'";
      break;
    }
  }
  return "unknown " + unknown_noun_ + " " + shown + " (see 'warpcrypt " + app_->get_name() + " --help')";
}

CommandLine::CommandLine()
    : formatter_(std::make_shared<HelpFormatter>()),
      app_(std::make_unique<CLI::App>("Bulk encryption on NVIDIA GPUs and on the CPU, byte-identical to OpenSSL.",
                                       "warpcrypt")) {
  // Commands inherit the formatter.
  app_->formatter(formatter_);
  app_->allow_extras();
  app_->require_subcommand(0, 1);
  formatter_->show_as(app_->set_help_flag("-h,--help", "this text"), "-h, --help");
  app_->set_version_flag("--version", version_text, "the versions of warpcrypt, OpenSSL and CUDA");
  app_->add_flag_callback(
      "--help-man", [this] { throw PrintText{manual_page()}; }, "the manual page, in roff");
  app_->add_option_function<std::string>(
      "--completion", [this](const std::string &shell) { throw PrintText{completion(shell)}; },
      "the completions for SHELL: bash, zsh or fish")
      ->type_name("SHELL");
  app_->footer("A command's options: warpcrypt help COMMAND, or warpcrypt COMMAND --help.");
  help_command_ = app_->add_subcommand("help", "a command's options");
  help_command_->add_option("command", help_topic_, "the command");
  help_command_->group("");  // the footer says how to ask for help
}

CommandLine::~CommandLine() = default;

Command &CommandLine::add_command(const std::string &name, const std::string &description) {
  CLI::App *app = app_->add_subcommand(name, description);
  app->group("Commands");  // the heading of the list in `warpcrypt --help`
  app->footer("");         // not the one it inherits
  commands_.push_back(std::unique_ptr<Command>(new Command(app, formatter_.get(), &secrets_)));
  return *commands_.back();
}

const Command *CommandLine::find(const std::string &name) const {
  for (const auto &command : commands_) {
    if (command->app_->get_name() == name) return command.get();
  }
  return nullptr;
}

std::vector<std::string> CommandLine::translate(const Command &command, std::span<const std::string> args) {
  std::vector<std::string> translated;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    // CLI11 ends a command's options at these and parses what follows as
    // `warpcrypt`'s own arguments; openssl has no such markers.
    if (arg == "--" || arg == "++") throw CliError(command.describe_unknown(arg));
    // CLI11 splits "--word=value" itself; the value is read here all the same.
    const size_t equals = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    const std::string spelling = arg.substr(0, equals);
    const auto word = command.words_.find(spelling);
    if (word == command.words_.end()) {
      if (const std::string *option = command.value_word_option(arg)) {
        translated.push_back(*option);
        translated.push_back(arg.substr(1));
      } else {
        translated.push_back(arg);  // for CLI11 to find unknown
      }
      continue;
    }
    if (!word->second.takes_value) {
      // CLI11 would read "--nopad=false" as no -nopad.
      if (equals != std::string::npos) throw CliError("option " + spelling + " takes no value");
      translated.push_back(word->second.parser_name);
      continue;
    }
    translated.push_back(word->second.parser_name);
    // The value is the next argument whatever it looks like, as openssl and
    // CLI11 take it: never translated, and never an error for starting with
    // a dash.
    std::string_view value;
    if (equals != std::string::npos) {
      value = std::string_view(arg).substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw CliError("option " + spelling + " needs a value");
    }
    if (word->second.secret) {
      secrets_.emplace_back(std::string(value));
      translated.push_back(std::to_string(secrets_.size() - 1));
    } else {
      translated.emplace_back(value);
    }
  }
  return translated;
}

Invocation CommandLine::parse(const std::vector<std::string> &args) {
  secrets_.clear();
  help_topic_.clear();
  // CLI11 enters a command where its name first comes, after any of
  // `warpcrypt`'s own options or words it will find unknown. What follows
  // that name is translated, and that command is the only one CLI11 may
  // enter: no other ever parses arguments that were not translated for it.
  const auto name = std::find_if(args.begin(), args.end(),
                                 [this](const std::string &arg) { return arg == "help" || find(arg) != nullptr; });
  const Command *named = name != args.end() ? find(*name) : nullptr;
  for (const auto &command : commands_) command->app_->disabled(command.get() != named);
  std::vector<std::string> for_parser(args.begin(), name);
  if (name != args.end()) {
    for_parser.push_back(*name);
    const std::span<const std::string> rest(name + 1, args.end());
    const std::vector<std::string> after =
        named != nullptr ? translate(*named, rest) : std::vector<std::string>(rest.begin(), rest.end());
    for_parser.insert(for_parser.end(), after.begin(), after.end());
  }
  if (named != nullptr && named->help_when_bare_ && name + 1 == args.end()) {
    return {nullptr, help_for(*name), exit_status(WC_KIND_USAGE), named->help_on_stderr_};
  }
  std::reverse(for_parser.begin(), for_parser.end());  // CLI11 takes them from the back
  try {
    app_->parse(std::move(for_parser));
  } catch (const CLI::CallForHelp &) {
    reject_unknown_arguments();
    // The help of the command named, if any.
    return {nullptr, app_->help(), 0, named != nullptr && named->help_on_stderr_};
  } catch (const CLI::CallForVersion &version) {
    reject_unknown_arguments();
    return {nullptr, std::string(version.what()) + "\n", 0};
  } catch (const PrintText &page) {
    return {nullptr, page.text, 0};
  } catch (const CLI::ParseError &error) {
    // Not expected: the translation has already refused every option of
    // the wrong shape, and the commands' functions read every value. The
    // message names an option at most, never a value.
    throw CliError(error.what());
  }
  reject_unknown_arguments();
  if (help_command_->parsed()) return {nullptr, help_for(help_topic_), 0};
  const std::vector<CLI::App *> chosen = app_->get_subcommands();
  if (chosen.empty()) return {nullptr, app_->help(), exit_status(WC_KIND_USAGE)};
  return {find(chosen.front()->get_name()), "", 0};
}

std::string CommandLine::help_for(const std::string &command_name) const {
  if (command_name.empty()) return formatter_->make_help(app_.get(), app_->get_name(), CLI::AppFormatMode::Normal);
  const Command *command = find(command_name);
  if (command == nullptr) throw CliError("unknown command '" + command_name + "' (see 'warpcrypt --help')");
  return formatter_->make_help(command->app_, app_->get_name() + " " + command_name, CLI::AppFormatMode::Normal);
}

void CommandLine::reject_unknown_arguments() const {
  const std::vector<std::string> unknown_commands = app_->remaining();
  if (!unknown_commands.empty()) {
    throw CliError("unknown command '" + unknown_commands.front() + "' (see 'warpcrypt --help')");
  }
  for (const CLI::App *chosen : app_->get_subcommands()) {
    const std::vector<std::string> unknown = chosen->remaining();
    if (unknown.empty()) continue;
    const Command *command = find(chosen->get_name());
    throw CliError(command != nullptr ? command->describe_unknown(unknown.front())
                                      : "unknown argument '" + unknown.front() + "' (see 'warpcrypt --help')");
  }
}

}  // namespace warpcrypt::cli
