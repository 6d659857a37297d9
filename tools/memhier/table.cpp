#include "table.h"

#include <algorithm>

namespace memhier::cli {

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> width(m_header.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  widen(m_header);
  for (const auto& row : m_rows) widen(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      text += row[i];
      if (i + 1 < row.size()) text += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << text << "\n";
  };
  line(m_header);
  std::vector<std::string> rule;
  rule.reserve(width.size());
  for (std::size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : m_rows) line(row);
}

}  // namespace memhier::cli
