# perflab_warnings(target): the project's warning set, errors with PERFLAB_WERROR.
add_library(perflab_warnings INTERFACE)
target_compile_options(perflab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wno-missing-field-initializers>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${PERFLAB_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${PERFLAB_WERROR}>>:-Werror=all-warnings -Xcompiler=-Werror>)
