#pragma once
// The parsed form of a kernel description: resolved launch and arrays, and the body as a statement tree.
#include <optional>
#include <vector>

#include "expr.h"
#include "memhier/kernel_desc.h"

namespace memhier::desc {

struct Stmt {
  enum class Type { let, branch, loop, access, barrier, work };
  Type type = Type::let;
  SourceLocation where;
  std::uint32_t pc = 0;
  int id = -1;  // the statement's number in its description, depth first (the runner numbers them)
  // let: (slot, value) in order
  std::vector<std::pair<int, Expression>> lets;
  // branch: cond ? body : else_body; loop: for var = from; var < to (or > for negative step); var += step
  std::optional<Expression> cond;
  std::vector<Stmt> body;
  std::vector<Stmt> else_body;
  int var = -1;
  std::optional<Expression> from, to, step;
  std::uint32_t unroll = 1;  // loop: iterations i and j run the same instructions (pcs) only when i = j mod unroll
  bool predicated = false;   // branch: if-converted; every warp reaching it issues the body, lanes off where cond is 0
  // access: array[index], copies also to_array[to_index]; bulk copies move `bytes`
  AccessKind kind = AccessKind::load;
  CacheHint hint = CacheHint::none;
  std::uint32_t vector = 1;
  int array = -1;
  std::optional<Expression> index;
  int to_array = -1;
  std::optional<Expression> to_index;
  std::optional<Expression> bytes;  // bulk_copy bytes; work: amount
};

struct Description {
  std::string file;
  DescriptionInfo info;
  KernelLaunch launch;
  Scope scope;
  std::vector<Stmt> body;
  int thread_slot[3] = {-1, -1, -1};
  int block_slot[3] = {-1, -1, -1};
  int fixed_slots = 0;  // built-ins and parameters: never assigned by the body
};

// Parses and checks; throws InputError.
std::unique_ptr<Description> parse_description(const std::string& yaml, const std::string& file,
                                               const std::vector<ParamOverride>& overrides);

}  // namespace memhier::desc
