// The report files. HTML is plain tables plus the plot images; no scripts, so it opens anywhere, offline.
#include "validate_report.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "cli_common.h"
#include "memhier/trace_json.h"

namespace memhier::cli {
namespace fs = std::filesystem;
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return o;
}

std::string num(const nlohmann::json& row, const char* key, const char* field, const char* format) {
  if (!row.contains(key) || !row[key].contains(field)) return "";
  return fmt::format(fmt::runtime(format), row[key][field].get<double>());
}

void write_csv(const nlohmann::json& report, const fs::path& file) {
  std::ofstream out(file);
  out << "case,regime,warm,measured_s,described_s,described_error_pct,traced_s,traced_error_pct,bound\n";
  for (const auto& c : report["cases"])
    out << fmt::format("{},{},{},{:.9g},{},{},{},{},{}\n", csv_field(c["case"].get<std::string>()),
                       csv_field(c["regime"].get<std::string>()), c["warm"].get<bool>() ? 1 : 0,
                       c["measured_s"].get<double>(), num(c, "described", "predicted_s", "{:.9g}"),
                       num(c, "described", "error_pct", "{:.2f}"), num(c, "traced", "predicted_s", "{:.9g}"),
                       num(c, "traced", "error_pct", "{:.2f}"),
                       c.contains("described") ? c["described"]["bound"].get<std::string>() : "");
}

void write_html(const nlohmann::json& report, const fs::path& file, const std::string& plot_note) {
  std::ofstream h(file);
  h << "<!doctype html><html><head><meta charset=\"utf-8\"><title>memhier validation</title><style>"
       "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
       "padding:2px 6px;text-align:right}td:first-child{text-align:left}img{max-width:48%}</style></head><body>\n";
  h << fmt::format("<h1>memhier validation: {} predicted as {}</h1>\n<p>results: {}</p>\n",
                   esc(report["gpu"].get<std::string>()), esc(report["arch"].get<std::string>()),
                   esc(report["results"].get<std::string>()));
  h << "<h2>Summary</h2><pre>" << esc(json_text(report["summary"], 2)) << "</pre>\n";
  h << "<h2>Plots</h2>" << plot_note;
  for (const char* img : {"time_scatter.svg", "time_error.svg", "counters.svg"})
    if (fs::exists(file.parent_path() / "plots" / img))
      h << fmt::format("<img src=\"plots/{}\" alt=\"{}\">\n", img, img);
  h << "<h2>Cases</h2><table><tr><th>case</th><th>regime</th><th>measured</th><th>from description</th><th>error</th>"
       "<th>from trace</th><th>error</th><th>bound</th></tr>\n";
  for (const auto& c : report["cases"])
    h << fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.2f} us</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        esc(c["case"].get<std::string>()), c["regime"].get<std::string>() + (c["warm"].get<bool>() ? " warm" : ""),
        c["measured_s"].get<double>() * 1e6, num(c, "described", "predicted_s", "{:.3g}"),
        num(c, "described", "error_pct", "{:+.0f}%"), num(c, "traced", "predicted_s", "{:.3g}"),
        num(c, "traced", "error_pct", "{:+.0f}%"),
        c.contains("described") ? c["described"]["bound"].get<std::string>() : "");
  h << "</table>\n<h2>Counters (predicted / ncu)</h2><table><tr><th>case</th><th>counter</th><th>predicted</th>"
       "<th>measured</th><th>error</th></tr>\n";
  for (const auto& c : report["cases"])
    for (const auto& [name, cell] : c["counters"].items())
      h << fmt::format("<tr><td>{}</td><td>{}</td><td>{:.0f}</td><td>{:.0f}</td><td>{}</td></tr>\n",
                       esc(c["case"].get<std::string>()), name, cell["predicted"].get<double>(),
                       cell["measured"].get<double>(),
                       cell.contains("error_pct")      ? fmt::format("{:+.1f}%", cell["error_pct"].get<double>())
                       : cell.contains("not_compared") ? esc("not compared: " + cell["not_compared"].get<std::string>())
                                                       : "");
  h << "</table>\n<h2>Hit rates (predicted / ncu, percentage points)</h2><table><tr><th>case</th><th>rate</th>"
       "<th>predicted</th><th>measured</th><th>error</th></tr>\n";
  for (const auto& c : report["cases"])
    if (c.contains("hit_rates"))
      for (const auto& [name, cell] : c["hit_rates"].items())
        h << fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{:+.1f}</td></tr>\n",
                         esc(c["case"].get<std::string>()), name, cell["predicted_pct"].get<double>(),
                         cell["measured_pct"].get<double>(), cell["error_points"].get<double>());
  h << "</table></body></html>\n";
}

}  // namespace

void write_report(const nlohmann::json& report, const fs::path& out, bool plots, const fs::path& plot_script) {
  fs::create_directories(out / "plots");
  std::ofstream(out / "report.json") << json_text(report, 1) << "\n";
  write_csv(report, out / "report.csv");
  std::string note;
  if (plots) {
    const std::string python = plot_python();
    const std::string cmd = fmt::format("{} '{}' '{}' '{}' 2>&1", python, plot_script.string(),
                                        (out / "report.json").string(), (out / "plots").string());
    if (python.empty() || std::system(cmd.c_str()) != 0)
      note =
          "<p>Plots unavailable: python3 with matplotlib was not found (Debian: apt-get install "
          "python3-matplotlib).</p>";
  } else {
    note = "<p>Plots skipped (--no-plots).</p>";
  }
  write_html(report, out / "report.html", note);
}

}  // namespace memhier::cli
