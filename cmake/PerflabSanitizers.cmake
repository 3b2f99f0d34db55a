# Sanitizers and fuzzing (docs/reliability.md).
#
# PERFLAB_SANITIZE=ON builds every C++ translation unit and links every
# executable with AddressSanitizer and UndefinedBehaviorSanitizer. A UBSan
# finding aborts (-fno-sanitize-recover), so the test that hit it fails
# instead of printing a warning nobody reads. CUDA device code is not
# instrumented; the `asan` preset builds with CUDA off.
#
# PERFLAB_FUZZ=ON (clang only) adds the libFuzzer targets of tests/fuzz and
# implies PERFLAB_SANITIZE: a fuzzer that finds memory errors must see them.
option(PERFLAB_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(PERFLAB_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(PERFLAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PERFLAB_FUZZ needs clang (libFuzzer ships with it), not "
                        "${CMAKE_CXX_COMPILER_ID}: configure with -DCMAKE_CXX_COMPILER=clang++ "
                        "or use the asan preset")
  endif()
  set(PERFLAB_SANITIZE ON)
endif()

if(PERFLAB_SANITIZE)
  set(PERFLAB_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${PERFLAB_SANITIZER_FLAGS}>")
  # Line tables only: symbolised reports for a fraction of full debug info's build time.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # The sanitizers' checks keep `omp simd` loops from vectorising; clang
    # warns about that (-Wpass-failed), which says nothing about the code.
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-gline-tables-only;-Wno-pass-failed>")
  else()
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-g1>")
  endif()
  add_link_options(-fsanitize=address,undefined)
endif()
message(STATUS "perflab: sanitizers ${PERFLAB_SANITIZE}; fuzz targets ${PERFLAB_FUZZ}")
