#include "memhier/error.h"

#include <fmt/format.h>

namespace memhier {
namespace {

// "file:line:column: 'key': message". An input with no file and no place in one (an unknown --arch name, a launch
// built through the API) starts at the key: "<input>: " said nothing more.
std::string render(const SourceLocation& where, const std::string& key, const std::string& message) {
  std::string out;
  if (!where.file.empty() || where.line > 0 || where.byte_offset >= 0) {
    out = where.file.empty() ? std::string("<input>") : where.file;
    if (where.line > 0) out += fmt::format(":{}", where.line);
    if (where.line > 0 && where.column > 0) out += fmt::format(":{}", where.column);
    if (where.byte_offset >= 0) out += fmt::format(": byte offset {}", where.byte_offset);
    out += ": ";
  }
  if (!key.empty()) out += fmt::format("'{}': ", key);
  return out + message;
}

}  // namespace

InputError::InputError(SourceLocation where, std::string key, const std::string& message)
    : std::runtime_error(render(where, key, message)),
      m_where(std::move(where)),
      m_key(std::move(key)),
      m_message(message) {}

}  // namespace memhier
