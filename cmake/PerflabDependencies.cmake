# Every dependency comes from the system (Debian packages installed by
# scripts/setup); nothing is vendored or downloaded at configure time.
find_package(CLI11 CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(MPI COMPONENTS CXX)

# OpenBLAS: prefer the OpenMP-threaded build so BLAS and our own loops share
# one thread pool (OMP_NUM_THREADS governs both). PERFLAB_OPENBLAS_ROOT
# overrides the search.
set(PERFLAB_OPENBLAS_ROOT "" CACHE PATH "Directory holding libopenblas and cblas.h (optional)")
find_library(PERFLAB_OPENBLAS_LIBRARY NAMES openblas
  HINTS ${PERFLAB_OPENBLAS_ROOT} ${PERFLAB_OPENBLAS_ROOT}/lib
        /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp)
find_path(PERFLAB_OPENBLAS_INCLUDE_DIR NAMES cblas.h
  HINTS ${PERFLAB_OPENBLAS_ROOT} ${PERFLAB_OPENBLAS_ROOT}/include
        /usr/include/x86_64-linux-gnu/openblas-openmp /usr/include/aarch64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT PERFLAB_OPENBLAS_INCLUDE_DIR)
  find_path(PERFLAB_OPENBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas)
endif()
if(NOT PERFLAB_OPENBLAS_LIBRARY OR NOT PERFLAB_OPENBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "OpenBLAS not found: run scripts/setup, or set PERFLAB_OPENBLAS_ROOT")
endif()
add_library(perflab_openblas INTERFACE)
target_link_libraries(perflab_openblas INTERFACE ${PERFLAB_OPENBLAS_LIBRARY})
target_include_directories(perflab_openblas SYSTEM INTERFACE ${PERFLAB_OPENBLAS_INCLUDE_DIR})
message(STATUS "perflab: OpenBLAS ${PERFLAB_OPENBLAS_LIBRARY} (headers ${PERFLAB_OPENBLAS_INCLUDE_DIR})")

find_package(Python3 COMPONENTS Interpreter)
