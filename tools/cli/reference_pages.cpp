// The manual page and the shell completions, made from the commands as the
// command line declares them (command_line.h), so they say what the parser
// takes and nothing else.
#include <CLI/CLI.hpp>

#include <sstream>
#include <string>

#include "cli_error.h"
#include "command_line.h"

namespace warpcrypt::cli {
namespace {

// Text for roff: backslashes and dashes escaped, no line starting with a
// control character.
std::string roff(const std::string &text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// A word for a shell's single quotes.
std::string single_quoted(const std::string &text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined(const std::vector<std::string> &words) {
  std::string out;
  for (const std::string &word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace

std::string CommandLine::manual_page() const {
  std::ostringstream page;
  page << ".TH WARPCRYPT 1 \"\" \"warpcrypt " << wc_version() << "\" \"User Commands\"\n"
       << ".SH NAME\nwarpcrypt \\- " << roff(app_->get_description()) << "\n"
       << ".SH SYNOPSIS\n.B warpcrypt\n.I command\n.RI [ options ]\n.br\n"
       << ".B warpcrypt help\n.I command\n.br\n"
       << ".B warpcrypt\n.RB [ \\-\\-version | \\-\\-help\\-man | \\-\\-completion\n.IR shell ]\n"
       << ".SH DESCRIPTION\n"
       << "Options are spelled as openssl spells them, with one dash (\\fB\\-in\\fR), except those openssl "
          "lacks, which take two (\\fB\\-\\-backend\\fR). A size takes a K, M or G suffix (powers of 1024). "
          "An input or output of \\fB\\-\\fR is standard input or output.\n"
       << ".SH COMMANDS\n";
  for (const auto &command : commands_) {
    page << ".SS \"warpcrypt " << command->name() << "\"\n" << roff(command->description()) << ".\n";
    for (const Command::Documented &option : command->documented_) {
      page << ".TP\n";
      for (size_t i = 0; i < option.spellings.size(); ++i) {
        page << (i == 0 ? "" : ", ") << "\\fB" << roff(option.spellings[i]) << "\\fR";
      }
      if (!option.value_name.empty()) page << " \\fI" << roff(option.value_name) << "\\fR";
      page << "\n" << roff(option.description) << "\n";
    }
    if (!command->app_->get_footer().empty()) page << ".PP\n" << roff(command->app_->get_footer()) << "\n";
  }
  page << ".SH \"EXIT STATUS\"\n";
  for (const wc_status_kind kind : kStatusKinds) {
    page << ".TP\n.B " << exit_status(kind) << "\n" << roff(exit_status_meaning(kind)) << "\n";
  }
  page << ".SH \"SEE ALSO\"\n.BR openssl-enc (1),\n.BR age (1)\n";
  return page.str();
}

std::string CommandLine::completion(const std::string &shell) const {
  std::vector<std::string> names;
  for (const auto &command : commands_) names.push_back(command->name());
  names.push_back("help");
  const std::string top_level = joined(names) + " --help --version --help-man --completion";
  std::ostringstream script;
  if (shell == "bash") {
    script << "# bash completion for warpcrypt (warpcrypt --completion bash)\n"
           << "_warpcrypt() {\n"
           << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
           << "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
           << "    COMPREPLY=($(compgen -W " << single_quoted(top_level) << " -- \"$cur\"))\n"
           << "    return\n  fi\n"
           << "  case \"${COMP_WORDS[1]}\" in\n";
    for (const auto &command : commands_) {
      std::vector<std::string> spellings;
      for (const Command::Documented &option : command->documented_) {
        spellings.insert(spellings.end(), option.spellings.begin(), option.spellings.end());
      }
      script << "    " << command->name() << ") local options=" << single_quoted(joined(spellings)) << " ;;\n";
    }
    script << "    help) COMPREPLY=($(compgen -W " << single_quoted(joined(names)) << " -- \"$cur\")); return ;;\n"
           << "    *) return ;;\n  esac\n"
           << "  case \"$cur\" in\n"
           << "    -*) COMPREPLY=($(compgen -W \"$options\" -- \"$cur\")) ;;\n"
           << "    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
           << "  esac\n}\n"
           << "complete -o filenames -F _warpcrypt warpcrypt\n";
  } else if (shell == "zsh") {
    script << "#compdef warpcrypt\n# zsh completion for warpcrypt (warpcrypt --completion zsh)\n"
           << "_warpcrypt() {\n"
           << "  if (( CURRENT == 2 )); then\n    compadd -- " << top_level << "\n    return\n  fi\n"
           << "  local -a options\n"
           << "  case $words[2] in\n";
    for (const auto &command : commands_) {
      std::vector<std::string> spellings;
      for (const Command::Documented &option : command->documented_) {
        spellings.insert(spellings.end(), option.spellings.begin(), option.spellings.end());
      }
      script << "    " << command->name() << ") options=(" << joined(spellings) << ") ;;\n";
    }
    script << "    help) compadd -- " << joined(names) << "; return ;;\n"
           << "    *) return ;;\n  esac\n"
           << "  if [[ $PREFIX == -* ]]; then\n    compadd -- $options\n  else\n    _files\n  fi\n}\n"
           << "compdef _warpcrypt warpcrypt\n";
  } else if (shell == "fish") {
    script << "# fish completion for warpcrypt (warpcrypt --completion fish)\n"
           << "complete -c warpcrypt -f -n __fish_use_subcommand -a help -d " << single_quoted("a command's options")
           << "\n";
    for (const auto &command : commands_) {
      script << "complete -c warpcrypt -f -n __fish_use_subcommand -a " << command->name() << " -d "
             << single_quoted(command->description()) << "\n";
      for (const Command::Documented &option : command->documented_) {
        script << "complete -c warpcrypt -n " << single_quoted("__fish_seen_subcommand_from " + command->name());
        for (const std::string &spelling : option.spellings) {
          // fish's -o is a long option with one dash, -l one with two.
          const bool two_dashes = spelling.rfind("--", 0) == 0;
          script << (two_dashes ? " -l " : " -o ") << spelling.substr(two_dashes ? 2 : 1);
        }
        if (!option.value_name.empty()) script << " -r";
        script << " -d " << single_quoted(option.description.substr(0, option.description.find(';'))) << "\n";
      }
    }
  } else {
    throw CliError("--completion takes bash, zsh or fish, not '" + shell + "'");
  }
  return script.str();
}

}  // namespace warpcrypt::cli
