#include "memhier/error.h"

#include <fmt/format.h>

namespace memhier {
namespace {

std::string render(const SourceLocation& where, const std::string& key, const std::string& message) {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) out += fmt::format(":{}", where.line);
  if (where.line > 0 && where.column > 0) out += fmt::format(":{}", where.column);
  if (where.byte_offset >= 0) out += fmt::format(": byte offset {}", where.byte_offset);
  out += ": ";
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
