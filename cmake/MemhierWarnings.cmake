add_library(memhier_warnings INTERFACE)
target_compile_options(memhier_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                                  $<$<BOOL:${MEMHIER_WARNINGS_AS_ERRORS}>:-Werror>)
if(MEMHIER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
  # GCC 12 to 14 with -fsanitize=address and -O1 or more warn that a std::function inside libstdc++'s <regex> may be
  # used uninitialized, a false alarm (https://gcc.gnu.org/bugzilla/show_bug.cgi?id=105616): it stays a warning, not an
  # error, so that a sanitizer build with optimization and MEMHIER_WARNINGS_AS_ERRORS still builds.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(memhier_warnings INTERFACE -Wno-error=maybe-uninitialized)
  endif()
endif()
install(TARGETS memhier_warnings EXPORT memhierTargets)
