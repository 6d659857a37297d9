// `memhier trace capture -o OUT.mht [--kernel REGEX] [--launches A:B] [--sample-blocks N] -- PROGRAM ARGS...`: runs an
// unmodified CUDA program with the Compute Sanitizer tracer injected (CUDA_INJECTION64_PATH) and reports what it wrote.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_common.h"
#include "commands.h"
#include "memhier/arch_loader.h"
#include "memhier/units.h"
#include "name_regex.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

// The injection library: $MEMHIER_TRACER_LIB, else the build tree's, else the installed one.
fs::path tracer_library() {
  if (const char* env = std::getenv("MEMHIER_TRACER_LIB"); env != nullptr && *env != '\0') return env;
#ifdef MEMHIER_TRACER_BUILD_PATH
  if (fs::exists(MEMHIER_TRACER_BUILD_PATH)) return MEMHIER_TRACER_BUILD_PATH;
#endif
#ifdef MEMHIER_TRACER_INSTALL_PATH
  if (fs::exists(MEMHIER_TRACER_INSTALL_PATH)) return MEMHIER_TRACER_INSTALL_PATH;
#endif
  throw UsageError(
      "memhier trace capture: the tracer library was not built (it needs the CUDA toolkit's compute-sanitizer headers, "
      "found on GPU machines); build memhier there or point MEMHIER_TRACER_LIB at libmemhier_tracer.so");
}

int run_program(const std::vector<std::string>& argv) {
  std::vector<char*> c_argv;
  c_argv.reserve(argv.size() + 1);
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("memhier trace capture: fork: {}", std::strerror(errno)));
  if (pid == 0) {
    execvp(c_argv[0], c_argv.data());
    std::cerr << fmt::format("memhier trace capture: cannot run '{}': {}\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error(fmt::format("memhier trace capture: waitpid: {}", std::strerror(errno)));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int run_capture(const std::vector<std::string>& all_args) {
  const auto dashdash = std::find(all_args.begin(), all_args.end(), "--");
  const std::vector<std::string> args(all_args.begin(), dashdash);
  const std::vector<std::string> program(dashdash == all_args.end() ? dashdash : dashdash + 1, all_args.end());
  po::options_description options("options");
  options.add_options()                                                       //
      ("output,o", po::value<std::string>()->required(), "output .mht file")  //
      ("kernel", po::value<std::string>()->default_value(".*"),
       "capture kernels whose name matches (ECMAScript regex)")                                                   //
      ("launches", po::value<std::string>(), "A:B: matching launches A to B-1 only (0-based); A: launch A only")  //
      ("sample-blocks", po::value<std::int64_t>()->default_value(1), "capture every N-th block (1: all)")         //
      ("buffer-mib", po::value<std::int64_t>()->default_value(2048), "device buffer for one launch's records")    //
      ("arch", po::value<std::string>(), "architecture to record as the capturing GPU (default: from its name)")  //
      ("force", "replace the output if it exists");
  po::variables_map vm;
  if (!parse("trace capture", "-o OUT.mht [--kernel REGEX] [--launches A:B] [--sample-blocks N] -- PROGRAM ARGS...",
             args, options, {}, vm))
    return kExitOk;
  if (program.empty()) throw UsageError("memhier trace capture: name the program after --, e.g. -- ./app --size 4096");
  const fs::path out = fs::absolute(vm["output"].as<std::string>());
  if (out.extension() != ".mht") throw UsageError("memhier trace capture: the output must end in .mht");
  if (fs::exists(out) && vm.count("force") == 0U)
    throw UsageError(fmt::format("memhier trace capture: {} exists; pass --force to replace it", out.string()));
  try {
    name_regex(vm["kernel"].as<std::string>());  // as the tracer compiles it
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("memhier trace capture: --kernel: not a valid regex: {}", e.what()));
  }
  if (vm.count("launches") != 0U) {
    const auto& text = vm["launches"].as<std::string>();
    std::smatch m;
    if (!std::regex_match(text, m, std::regex(R"((\d{1,18})(:(\d{0,18}))?)")))
      throw UsageError("memhier trace capture: --launches expects A:B, A: or A (0-based launch numbers)");
    if (m[3].length() > 0 && std::stoull(m[3].str()) <= std::stoull(m[1].str()))
      throw UsageError(fmt::format("memhier trace capture: --launches {}: no launch from {} to before {}", text,
                                   m[1].str(), m[3].str()));
  }
  // Counts read as signed: Boost reads "-1" as an unsigned 2^32 - 1 (a block in four billion, a 4 PiB buffer).
  const std::int64_t sample = vm["sample-blocks"].as<std::int64_t>();
  if (sample < 1 || sample > 0xFFFFFFFFLL)
    throw UsageError(fmt::format("memhier trace capture: --sample-blocks {}: expected 1 to 4294967295", sample));
  const std::int64_t buffer = vm["buffer-mib"].as<std::int64_t>();
  if (buffer < 1 || buffer > (1LL << 20))
    throw UsageError(fmt::format("memhier trace capture: --buffer-mib {}: expected 1 to 1048576 (1 TiB)", buffer));
  if (vm.count("arch") != 0U) load_arch(vm["arch"].as<std::string>());  // an unknown one fails here, not at the end
  const fs::path lib = tracer_library();
  const fs::path summary = out.string() + ".capture.json";
  setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
  setenv("MEMHIER_TRACE_OUT", out.c_str(), 1);
  setenv("MEMHIER_TRACE_SUMMARY", summary.c_str(), 1);
  setenv("MEMHIER_TRACE_KERNEL", vm["kernel"].as<std::string>().c_str(), 1);
  setenv("MEMHIER_TRACE_SAMPLE", std::to_string(sample).c_str(), 1);
  setenv("MEMHIER_TRACE_BUFFER_MIB", std::to_string(buffer).c_str(), 1);
  if (vm.count("launches") != 0U) setenv("MEMHIER_TRACE_LAUNCHES", vm["launches"].as<std::string>().c_str(), 1);
  if (vm.count("arch") != 0U) setenv("MEMHIER_TRACE_ARCH", vm["arch"].as<std::string>().c_str(), 1);
  const int rc = run_program(program);
  std::ifstream in(summary);
  if (!in) {
    std::cerr << fmt::format(
        "memhier trace capture: the tracer wrote no summary (program exit {}); was it a CUDA program?\n", rc);
    return kExitCheckFailed;
  }
  const nlohmann::json s = nlohmann::json::parse(in, nullptr, false);
  std::uint64_t dropped = 0, launches = 0;
  bool failed = s.is_discarded();
  for (const auto& k : s.is_array() ? s : nlohmann::json::array()) {
    if (k.contains("error")) {
      failed = true;
      continue;
    }
    ++launches;
    dropped += k.value("dropped_records", 0ULL);
    std::cerr << fmt::format(
        "  {}: {} warp records, {} lane accesses{}\n", k.value("kernel", "?"), k.value("records", 0ULL),
        k.value("lane_accesses", 0ULL),
        k.value("dropped_records", 0ULL) > 0 ? fmt::format(", {} DROPPED", k.value("dropped_records", 0ULL)) : "");
  }
  std::cerr << fmt::format("memhier trace capture: {} launch(es) into {} (program exit {})\n", launches, out.string(),
                           rc);
  if (dropped > 0) {
    std::cerr << fmt::format("memhier trace capture: {} warp records were dropped; the trace is incomplete\n", dropped);
    return kExitCheckFailed;
  }
  return failed || rc != 0 ? kExitCheckFailed : kExitOk;
}

}  // namespace memhier::cli
