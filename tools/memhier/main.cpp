// memhier command-line entry point: dispatches subcommands and turns every error into a message and an exit code.
#include <fmt/format.h>

#include <array>
#include <iostream>
#include <string_view>

#include "cli_common.h"
#include "commands.h"
#include "memhier/error.h"
#include "memhier/version.h"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::vector<std::string>&);
};

constexpr std::array kCommands{
    Command{"archs", "list, show and check architecture files", memhier::cli::run_archs},
    Command{"occupancy", "theoretical occupancy of a launch on an architecture", memhier::cli::run_occupancy},
    Command{"trace", "generate, inspect and convert traces", memhier::cli::run_trace},
    Command{"simulate", "counts per memory level for a trace on an architecture", memhier::cli::run_simulate},
    Command{"predict", "predicted kernel time, binding resource and breakdown", memhier::cli::run_predict},
    Command{"sweep", "what-if sweeps over architecture keys, kernel parameters and architectures",
            memhier::cli::run_sweep},
    Command{"validate", "compare predictions with measured GPU times and ncu counters", memhier::cli::run_validate},
    Command{"calibrate", "refit timing constants from measured kernels (writes a new arch file)",
            memhier::cli::run_calibrate},
};

void print_usage(std::ostream& out) {
  out << "usage: memhier [--version] [--help] <command> [<args>]\n\ncommands:\n";
  for (const Command& c : kCommands) out << fmt::format("  {:<12}{}\n", c.name, c.summary);
  out << "\n'memhier <command> --help' describes a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace memhier::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return kExitBadInput;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << "memhier " << memhier::kVersion << "\n";
    return kExitOk;
  }
  for (const Command& c : kCommands) {
    if (args[0] != c.name) continue;
    try {
      return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const UsageError& e) {
      std::cerr << e.what() << "\nTry 'memhier " << c.name << " --help'.\n";
    } catch (const memhier::InputError& e) {
      std::cerr << "memhier " << c.name << ": error: " << e.what() << "\n";
    } catch (const std::exception& e) {
      std::cerr << "memhier " << c.name << ": error: " << e.what() << "\n";
    }
    return kExitBadInput;
  }
  std::cerr << fmt::format("memhier: unknown command '{}'\n\n", args[0]);
  print_usage(std::cerr);
  return kExitBadInput;
}
