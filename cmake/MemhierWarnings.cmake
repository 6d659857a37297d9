add_library(memhier_warnings INTERFACE)
target_compile_options(memhier_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                                                  $<$<BOOL:${MEMHIER_WARNINGS_AS_ERRORS}>:-Werror>)
if(MEMHIER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
install(TARGETS memhier_warnings EXPORT memhierTargets)
