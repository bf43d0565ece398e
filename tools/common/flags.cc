// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/common/flags.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "siftdb/version.h"

namespace siftdb::tools {
namespace {

bool Belongs(const ToolFlagsSpec& spec, const absl::CommandLineFlag& flag) {
  if (flag.IsRetired()) return false;
  const std::string file = flag.Filename();
  for (const std::string& source : spec.flag_sources) {
    if (absl::StrContains(file, source)) return true;
  }
  return false;
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A positional argument: not starting with '-', or "-" alone, or a
// negative number.
bool IsPositional(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return true;
  return std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.';
}

// One parsing run over argv; fills args or returns the usage error text.
class Parser {
 public:
  Parser(const ToolFlagsSpec& spec, ToolArgs* args)
      : spec_(spec), args_(args) {}

  // "" when argv is fine; else the message for UsageError.
  std::string Run(int argc, const char* const* argv, bool* help,
                  bool* version) {
    for (int i = 1; i < argc; ++i) {
      std::string_view arg = argv[i];
      if (arg == "--") {
        for (++i; i < argc; ++i) {
          std::string error = Positional(argv[i]);
          if (!error.empty()) return error;
        }
        break;
      }
      if (IsPositional(arg)) {
        std::string error = Positional(arg);
        if (!error.empty()) return error;
        continue;
      }
      arg.remove_prefix(arg[1] == '-' ? 2 : 1);
      std::optional<std::string_view> value;
      if (size_t eq = arg.find('='); eq != std::string_view::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      }
      if (arg == "help" || arg == "helpfull" || arg == "h") {
        *help = true;
        continue;
      }
      if (arg == "version") {
        *version = true;
        continue;
      }
      if (arg == "undefok") {  // read by ParseToolFlags before this pass
        if (!value && i + 1 < argc) ++i;
        continue;
      }
      std::string error = One(arg, value, argc, argv, &i);
      if (!error.empty()) return error;
    }
    return "";
  }

 private:
  // Takes a positional argument, or returns the error when none are taken
  // (also after "--").
  std::string Positional(std::string_view arg) {
    if (!spec_.takes_positional) {
      return absl::StrFormat("unexpected argument '%s'", arg);
    }
    args_->positional.emplace_back(arg);
    return "";
  }

  // Handles the flag `name` (value: after '=', if any); may take argv[i+1].
  std::string One(std::string_view name, std::optional<std::string_view> value,
                  int argc, const char* const* argv, int* i) {
    if (auto it = spec_.refused.find(name); it != spec_.refused.end()) {
      return absl::StrFormat("--%s is not supported: %s", name, it->second);
    }
    if (Contains(spec_.ignored, name)) {
      // Its value, if separate, is the next argument unless that is a flag.
      if (!value && *i + 1 < argc && IsPositional(argv[*i + 1]) &&
          !spec_.takes_positional) {
        ++*i;
      }
      if (!Contains(ignored_seen_, name)) {
        ignored_seen_.emplace_back(name);
        absl::FPrintF(stderr, "%s: ignoring --%s (no siftdb equivalent)\n",
                      spec_.program, name);
      }
      return "";
    }
    absl::CommandLineFlag* flag = Find(name);
    bool negated = false;
    if (flag == nullptr &&
        absl::StartsWith(absl::string_view(name.data(), name.size()), "no") &&
        !value) {
      flag = Find(name.substr(2));
      if (flag != nullptr && !flag->IsOfType<bool>()) flag = nullptr;
      negated = flag != nullptr;
    }
    if (flag == nullptr) return absl::StrFormat("unknown flag --%s", name);
    std::string text;
    if (flag->IsOfType<bool>()) {
      text = value ? std::string(*value) : (negated ? "false" : "true");
    } else if (value) {
      text = std::string(*value);
    } else if (*i + 1 < argc) {
      text = argv[++*i];
    } else {
      return absl::StrFormat("--%s needs a value", name);
    }
    std::string error;
    if (!flag->ParseFrom(text, &error)) {
      return absl::StrFormat("bad value '%s' for --%s: %s", text, flag->Name(),
                             error);
    }
    args_->set_flags.emplace_back(flag->Name());
    return "";
  }

  absl::CommandLineFlag* Find(std::string_view name) const {
    absl::CommandLineFlag* flag =
        absl::FindCommandLineFlag(absl::string_view(name.data(), name.size()));
    return flag != nullptr && Belongs(spec_, *flag) ? flag : nullptr;
  }

  const ToolFlagsSpec& spec_;
  ToolArgs* const args_;
  std::vector<std::string> ignored_seen_;
};

}  // namespace

bool ToolArgs::WasSet(std::string_view name) const {
  return std::find(set_flags.begin(), set_flags.end(), name) != set_flags.end();
}

std::string ToolHelpText(const ToolFlagsSpec& spec) {
  std::string text = spec.usage;
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (Belongs(spec, *flag)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const absl::CommandLineFlag* a, const absl::CommandLineFlag* b) {
              return a->Name() < b->Name();
            });
  absl::StrAppend(&text, "\nFlags:\n");
  for (const absl::CommandLineFlag* flag : flags) {
    absl::StrAppendFormat(&text, "  --%s (default: \"%s\")\n      %s\n",
                          flag->Name(), flag->DefaultValue(), flag->Help());
  }
  absl::StrAppendFormat(&text,
                        "  --help     this text\n"
                        "  --version  the siftdb version\n");
  if (!spec.ignored.empty()) {
    std::set<std::string> sorted(spec.ignored.begin(), spec.ignored.end());
    absl::StrAppend(&text, "\nAccepted and ignored (no siftdb equivalent):\n ");
    for (const std::string& name : sorted) absl::StrAppend(&text, " --", name);
    absl::StrAppend(&text, "\n");
  }
  return text;
}

// gflags' --undefok=a,b (its last occurrence): the names that are neither
// the tool's flags nor refused are accepted and ignored, with the note.
ToolFlagsSpec WithUndefok(const ToolFlagsSpec& spec, int argc,
                          const char* const* argv) {
  ToolFlagsSpec out = spec;
  std::string list;
  for (int i = 1; i < argc; i++) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    for (std::string_view form : {"--undefok", "-undefok"}) {
      if (arg == form && i + 1 < argc) list = argv[i + 1];
      if (arg.size() > form.size() && arg.substr(0, form.size()) == form &&
          arg[form.size()] == '=') {
        list = std::string(arg.substr(form.size() + 1));
      }
    }
  }
  for (absl::string_view name : absl::StrSplit(list, ',')) {
    name = absl::StripAsciiWhitespace(name);
    if (name.empty() || spec.refused.count(std::string(name)) != 0) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr || !Belongs(spec, *flag)) {
      out.ignored.emplace_back(name);
    }
  }
  return out;
}

std::optional<ToolArgs> ParseToolFlags(const ToolFlagsSpec& given_spec,
                                       int argc, const char* const* argv,
                                       int* exit_code) {
  const ToolFlagsSpec spec = WithUndefok(given_spec, argc, argv);
  ToolArgs args;
  bool help = false;
  bool version = false;
  Parser parser(spec, &args);
  const std::string error = parser.Run(argc, argv, &help, &version);
  if (help) {
    absl::PrintF("%s", ToolHelpText(spec));
    *exit_code = kExitOk;
    return std::nullopt;
  }
  if (version) {
    absl::PrintF("%s (siftdb) %s\n", spec.program, Version());
    *exit_code = kExitOk;
    return std::nullopt;
  }
  if (!error.empty()) {
    *exit_code = UsageError(spec.program, error);
    return std::nullopt;
  }
  return args;
}

int UsageError(std::string_view program, std::string_view message) {
  absl::FPrintF(stderr, "%s: %s (try --help)\n", program, message);
  return kExitUsage;
}

}  // namespace siftdb::tools
