#pragma once
// `memhier validate --sim-cache DIR`: a case's prediction kept on disk and reused by a later run of the same memhier
// binary on the same architecture, description (its text and parameters) or captured trace (its bytes). The committed
// GPU runs re-predict one suite: the 17 validation tests predict 768 cases, 92 of them distinct (46 cases on two
// archs), so all but the first run of each arch read their predictions back. A prediction is deterministic in what
// the key holds (bit-identical results on any thread count: the simulation's tests), so one read back is the one a
// simulation would give; the key names the binary by its bytes, so a rebuilt memhier never reads an older one's.
#include <filesystem>
#include <optional>
#include <string>

#include "memhier/arch.h"
#include "validate_run.h"

namespace memhier::cli {

class PredictionCache {
 public:
  // `dir` is made where missing. With no readable binary (/proc/self/exe), caches nothing and says so once.
  PredictionCache(std::filesystem::path dir, const Arch& arch);
  // The prediction stored under `key` (what the case's source and options are, as text), if any; an unreadable or
  // damaged entry counts as none (and is replaced by the next store()).
  std::optional<CasePrediction> find(const std::string& key);
  // Writes it whole under a temporary name, then renames: tests running at once never read half an entry.
  void store(const std::string& key, const CasePrediction& p);
  [[nodiscard]] int reused() const { return m_reused; }
  [[nodiscard]] int simulated() const { return m_simulated; }
  [[nodiscard]] const std::filesystem::path& dir() const { return m_dir; }

 private:
  [[nodiscard]] std::filesystem::path entry(const std::string& key) const;
  [[nodiscard]] std::string check(const std::string& key) const;

  std::filesystem::path m_dir;
  std::string m_base;  // the binary's and the arch's part of every key
  bool m_enabled = false;
  int m_reused = 0, m_simulated = 0;
};

// A case's description key: the file's text, the case's parameters, warm or cold and the launches counted; empty
// where the file cannot be read (the prediction then fails, and is not kept).
std::string description_key(const std::filesystem::path& desc, const MeasuredCase& m);
// A captured trace's key: its bytes (hashed), warm or cold and the launches counted; empty as above.
std::string trace_key(const std::filesystem::path& trace, const MeasuredCase& m);

}  // namespace memhier::cli
