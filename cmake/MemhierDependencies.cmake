# All third-party dependencies come from distribution packages (Debian 12 / Ubuntu 24.04); scripts/setup.sh installs
# them.
find_package(PkgConfig REQUIRED)
find_package(yaml-cpp REQUIRED)
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)  # yaml-cpp 0.7 (Debian 12) exports only the plain name
endif()
find_package(Eigen3 REQUIRED NO_MODULE)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options CONFIG)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(MUPARSER REQUIRED IMPORTED_TARGET muparser)
if(MEMHIER_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()
if(MEMHIER_BUILD_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Google Benchmark not found: bench/ is skipped")
  endif()
endif()

# CUDA is optional: the occupancy cross-check needs only the toolkit's header; kernels/ and the tracer need nvcc.
find_package(CUDAToolkit QUIET)
find_path(MEMHIER_CUDA_OCCUPANCY_DIR cuda_occupancy.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include)
if(MEMHIER_CUDA_OCCUPANCY_DIR)
  message(STATUS "cuda_occupancy.h found in ${MEMHIER_CUDA_OCCUPANCY_DIR}: occupancy cross-check enabled")
else()
  message(STATUS "cuda_occupancy.h not found: occupancy cross-check test skipped")
endif()
