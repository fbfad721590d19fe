#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"

namespace chakrasim::cli {

std::string unknown_subcommand(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* at = &app;
  std::string path = app.get_name();
  auto names = [](CLI::App* parent) {
    std::string list;
    for (const CLI::App* s : parent->get_subcommands([](CLI::App*) { return true; })) {
      list += (list.empty() ? "" : ", ") + s->get_name();
    }
    return list;
  };
  for (const std::string& arg : args) {
    const std::vector<CLI::App*> subs = at->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty() || arg.empty() || arg[0] == '-') return "";
    CLI::App* next = nullptr;
    for (CLI::App* s : subs) {
      if (s->get_name() == arg) next = s;
    }
    if (next == nullptr)
      return fmt::format("unknown subcommand \"{}\" of {}; expected one of: {}", arg, path, names(at));
    at = next;
    path += " " + arg;
  }
  if (at != &app || args.empty()) {
    if (!at->get_subcommands([](CLI::App*) { return true; }).empty()) {
      return fmt::format("{} needs a subcommand: {}", path, names(at));
    }
  }
  return "";
}

}  // namespace chakrasim::cli
