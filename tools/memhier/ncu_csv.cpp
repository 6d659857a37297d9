#include "ncu_csv.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include "memhier/error.h"

namespace memhier::cli {
namespace fs = std::filesystem;

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
      cur += line[++i];  // a quote inside a quoted field is written twice
    else if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.push_back(std::exchange(cur, {}));
    else
      cur += c;
  }
  out.push_back(cur);
  return out;
}

fs::path ncu_csv_file(const fs::path& file) {
  std::error_code ec;
  if (fs::exists(file, ec) || file.extension() == ".zst") return file;
  fs::path packed = file;
  packed += ".zst";
  return fs::exists(packed, ec) ? packed : file;
}

namespace {

// The most text a compressed CSV may unpack to: an ncu profile of a million launches and a few metrics each is well
// under it, and a stray archive of something else stops here instead of filling memory.
constexpr std::size_t kMaxUnpackedBytes = std::size_t{1} << 31U;

// The text of a zstd-compressed file (one frame or several, as `zstd` writes them); InputError naming the file and
// the byte offset where the data go wrong.
std::string unpack_zstd(const fs::path& file) {
  auto fail = [&](std::size_t offset, const std::string& what) {
    throw InputError({file.string(), 0, 0, static_cast<std::int64_t>(offset)}, "", what);
  };
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError({file.string()}, "", "cannot open");
  const std::string packed{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (packed.empty()) fail(0, "empty: no zstd frame");
  struct FreeDCtx {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  const std::unique_ptr<ZSTD_DCtx, FreeDCtx> dctx(ZSTD_createDCtx());
  if (!dctx) fail(0, "zstd could not make a decompression context");
  std::string text;
  std::string buffer(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer input{packed.data(), packed.size(), 0};
  std::size_t left = 0;  // what the frame read last still expects (0: it ended)
  // A call that fills the buffer may leave output in the context: call again, input read or not.
  for (bool full = false; input.pos < input.size || full;) {
    ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
    const std::size_t at = input.pos;
    left = ZSTD_decompressStream(dctx.get(), &output, &input);
    if (ZSTD_isError(left) != 0U) fail(at, fmt::format("not valid zstd data: {}", ZSTD_getErrorName(left)));
    if (text.size() + output.pos > kMaxUnpackedBytes)
      fail(input.pos, fmt::format("unpacks to more than {} bytes, past what an ncu CSV holds", kMaxUnpackedBytes));
    text.append(buffer.data(), output.pos);
    full = output.pos == output.size;
  }
  if (left != 0) fail(packed.size(), "ends inside a zstd frame (the file is cut short)");
  return text;
}

// A count as ncu prints it ("67,117,824", "1,977,432,732.50"); nullopt for text ("n/a").
std::optional<double> ncu_number(const std::string& text) {
  std::string v;
  for (char c : text)
    if (c != ',') v += c;
  std::size_t used = 0;
  try {
    const double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

class NcuCsvReader {
 public:
  explicit NcuCsvReader(const fs::path& file) : m_file(ncu_csv_file(file)) {}

  std::vector<NcuLaunch> read() {
    std::error_code ec;
    if (!fs::exists(m_file, ec)) fail(0, "no such file");
    if (fs::is_directory(m_file, ec)) fail(0, "a folder, not an ncu CSV");
    // A device or pipe (/dev/zero named app.csv) would be read without end.
    if (!fs::is_regular_file(m_file, ec)) fail(0, "not a regular file (a device, pipe or socket)");
    std::ifstream file;
    std::istringstream unpacked;
    std::istream* in = &file;
    if (m_file.extension() == ".zst") {
      unpacked.str(unpack_zstd(m_file));
      in = &unpacked;
    } else {
      file.open(m_file);
      if (!file) fail(0, "cannot open");
    }
    std::string line;
    for (int n = 1; std::getline(*in, line); ++n) {
      if (line.ends_with('\r')) line.pop_back();  // a CSV saved on Windows
      const auto f = csv_fields(line);
      if (m_id < 0)
        header(f, n);
      else
        row(f, n);
    }
    if (m_id < 0) fail(0, "no ncu CSV header (ID, and Metric Name and Metric Value or metric columns) found");
    return std::move(m_launches);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what, const std::string& key = "") const {
    throw InputError({m_file.string(), line, 0, -1}, key, what);
  }
  static std::string cell(const std::vector<std::string>& f, int col) {
    return col >= 0 && static_cast<std::size_t>(col) < f.size() ? f[static_cast<std::size_t>(col)] : std::string();
  }

  // The header, where a line has an ID column (ncu's messages before it have none).
  void header(const std::vector<std::string>& f, int n) {
    const std::map<std::string, int*> columns = {{"ID", &m_id},
                                                 {"Metric Name", &m_metric},
                                                 {"Metric Value", &m_value},
                                                 {"Metric Unit", &m_unit},
                                                 {"Kernel Name", &m_name},
                                                 {"Grid Size", &m_grid},
                                                 {"Block Size", &m_block}};
    for (std::size_t i = 0; i < f.size(); ++i)
      if (const auto it = columns.find(f[i]); it != columns.end()) *it->second = static_cast<int>(i);
    if (m_id < 0) return;
    if ((m_metric < 0) != (m_value < 0))
      fail(n, "an ncu CSV header with one of 'Metric Name' and 'Metric Value' but not the other");
    m_wide = m_metric < 0;
    if (m_wide) m_header = f;
  }

  void row(const std::vector<std::string>& f, int n) {
    const std::string id_text = cell(f, m_id);
    if (m_wide && id_text.empty() && m_wide_units.empty()) {  // the raw page's units, under the header
      m_wide_units = f;
      return;
    }
    if (static_cast<int>(f.size()) <= std::max({m_id, m_metric, m_value})) return;  // a message of ncu's
    std::size_t id = 0;
    try {
      std::size_t used = 0;
      id = std::stoul(id_text, &used);
      if (used != id_text.size()) throw std::invalid_argument(id_text);
    } catch (const std::exception&) {
      fail(n, fmt::format("launch ID '{}' is not a number", id_text));
    }
    // A launch ID past a million is no profile's (and would size the table by it).
    if (id >= 1'000'000) fail(n, fmt::format("launch ID {} is past the 1000000 launches a profile holds", id));
    if (!m_wide) {
      add(id, n, f, cell(f, m_metric), cell(f, m_value), cell(f, m_unit));
      return;
    }
    // A metric column's name has a double underscore (dram__bytes_read.sum). The page also holds the device's
    // attributes, whose values need not be counts (text, "n/a", a NUMA id of -1): what is no count is skipped.
    for (std::size_t c = 0; c < m_header.size() && c < f.size(); ++c) {
      const std::optional<double> v = ncu_number(f[c]);
      if (m_header[c].find("__") != std::string::npos && v && std::isfinite(*v) && *v >= 0)
        add(id, n, f, m_header[c], f[c], c < m_wide_units.size() ? m_wide_units[c] : std::string());
    }
  }

  // One metric of launch `id`, from line `n`: a count of 0 or more.
  void add(std::size_t id, int n, const std::vector<std::string>& f, const std::string& metric, const std::string& text,
           const std::string& unit) {
    const std::optional<double> value = ncu_number(text);
    if (!value) fail(n, fmt::format("metric value '{}' is not a number", text), metric);
    if (!std::isfinite(*value) || *value < 0)
      fail(n, fmt::format("metric value '{}' is not a count of 0 or more", text));
    if (id >= m_launches.size()) m_launches.resize(id + 1);
    NcuLaunch& l = m_launches[id];
    if (l.line == 0) {
      l.id = id;
      l.line = n;
      l.kernel = cell(f, m_name);
      l.grid = cell(f, m_grid);
      l.block = cell(f, m_block);
    }
    l.metrics[metric] = *value;
    l.units[metric] = unit;
    l.lines[metric] = n;
  }

  fs::path m_file;
  int m_id = -1, m_metric = -1, m_value = -1, m_unit = -1, m_name = -1, m_grid = -1, m_block = -1;
  bool m_wide = false;                              // the raw page
  std::vector<std::string> m_header, m_wide_units;  // its column names and units
  std::vector<NcuLaunch> m_launches;
};

}  // namespace

std::vector<NcuLaunch> read_ncu_csv(const fs::path& file) { return NcuCsvReader(file).read(); }

}  // namespace memhier::cli
