# CUDA is optional. With PERFLAB_CUDA=AUTO it is enabled when a toolkit is
# found; every .cu file is then compiled (default architecture 90).
# Library locations can be overridden, because on some machines cuDNN and
# NCCL live only inside Python wheels:
#   -DPERFLAB_CUDNN_ROOT=<dir with lib/ and include/>  -DPERFLAB_NCCL_ROOT=<...>
set(PERFLAB_HAVE_CUDA OFF)
if(PERFLAB_CUDA STREQUAL "AUTO" OR PERFLAB_CUDA)
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to compile for")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(PERFLAB_HAVE_CUDA ON)
  elseif(PERFLAB_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PERFLAB_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

if(PERFLAB_HAVE_CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(PERFLAB_CUDNN_ROOT "" CACHE PATH "cuDNN location (lib/ and include/), optional")
  set(PERFLAB_NCCL_ROOT "" CACHE PATH "NCCL location (lib/ and include/), optional")
  foreach(lib CUDNN NCCL)
    string(TOLOWER ${lib} name)
    find_library(PERFLAB_${lib}_LIBRARY NAMES ${name} lib${name}.so.9 lib${name}.so.2
      HINTS ${PERFLAB_${lib}_ROOT} ${PERFLAB_${lib}_ROOT}/lib ${PERFLAB_${lib}_ROOT}/lib64
            ${CUDAToolkit_LIBRARY_DIR})
    find_path(PERFLAB_${lib}_INCLUDE_DIR NAMES ${name}.h
      HINTS ${PERFLAB_${lib}_ROOT} ${PERFLAB_${lib}_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
    if(PERFLAB_${lib}_LIBRARY AND PERFLAB_${lib}_INCLUDE_DIR)
      add_library(perflab_${name} INTERFACE)
      target_link_libraries(perflab_${name} INTERFACE ${PERFLAB_${lib}_LIBRARY})
      target_include_directories(perflab_${name} SYSTEM INTERFACE ${PERFLAB_${lib}_INCLUDE_DIR})
      set(PERFLAB_HAVE_${lib} ON)
      message(STATUS "perflab: ${lib} ${PERFLAB_${lib}_LIBRARY} (headers ${PERFLAB_${lib}_INCLUDE_DIR})")
    else()
      set(PERFLAB_HAVE_${lib} OFF)
      message(STATUS "perflab: ${lib} not found (set PERFLAB_${lib}_ROOT); built without it")
    endif()
  endforeach()
  message(STATUS "perflab: CUDA ${CUDAToolkit_VERSION} at ${CUDAToolkit_BIN_DIR}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
