#pragma once
// Plain-text aligned tables for human output.
#include <ostream>
#include <string>
#include <vector>

namespace memhier::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : m_header(std::move(header)) {}
  void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> m_header;
  std::vector<std::vector<std::string>> m_rows;
};

}  // namespace memhier::cli
