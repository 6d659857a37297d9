#pragma once
// Errors about user input: every one names where the bad input is (file, line, column, key or byte offset).
#include <cstdint>
#include <stdexcept>
#include <string>

namespace memhier {

struct SourceLocation {
  std::string file;               // path as the user gave it; empty when the input did not come from a file
  int line = 0;                   // 1-based; 0 when unknown
  int column = 0;                 // 1-based; 0 when unknown
  std::int64_t byte_offset = -1;  // for binary inputs; -1 when not applicable
};

// Thrown for any bad input (files, flags, values). The CLI catches it once, prints what(), and exits 2.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, const std::string& message);

  [[nodiscard]] const SourceLocation& where() const { return m_where; }
  [[nodiscard]] const std::string& key() const { return m_key; }
  [[nodiscard]] const std::string& message() const { return m_message; }

 private:
  SourceLocation m_where;
  std::string m_key;
  std::string m_message;
};

}  // namespace memhier
