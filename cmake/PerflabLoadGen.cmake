# MLCommons LoadGen (MLPerf Inference's load generator), built from the C++
# sources of its PyPI source distribution, which scripts/setup fetches
# (pinned version, checked sha256) into .deps/. PERFLAB_LOADGEN_SOURCE
# points elsewhere. Without the sources perflab builds without LoadGen
# (PERFLAB_HAVE_LOADGEN off) and says so here.
set(PERFLAB_LOADGEN_VERSION 6.0.17)
set(PERFLAB_LOADGEN_SOURCE "${PROJECT_SOURCE_DIR}/.deps/mlcommons_loadgen-${PERFLAB_LOADGEN_VERSION}"
    CACHE PATH "MLCommons LoadGen source folder (loadgen.h, loadgen.cc, ...)")
set(PERFLAB_HAVE_LOADGEN OFF)
if(EXISTS "${PERFLAB_LOADGEN_SOURCE}/loadgen.h" AND EXISTS "${PERFLAB_LOADGEN_SOURCE}/generated/version_generated.cc")
  # The library's sources as its setup.py lists them, without the Python and
  # C bindings.
  set(perflab_loadgen_sources early_stopping.cc issue_query_controller.cc loadgen.cc logging.cc
      test_settings_internal.cc utils.cc version.cc results.cc generated/version_generated.cc)
  list(TRANSFORM perflab_loadgen_sources PREPEND "${PERFLAB_LOADGEN_SOURCE}/")
  add_library(perflab_loadgen STATIC ${perflab_loadgen_sources})
  # Its headers include each other by bare name; SYSTEM: our warnings are
  # not its. Built without our warning flags, with its own defaults.
  target_include_directories(perflab_loadgen SYSTEM PUBLIC "${PERFLAB_LOADGEN_SOURCE}")
  target_link_libraries(perflab_loadgen PUBLIC Threads::Threads)
  set_target_properties(perflab_loadgen PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set(PERFLAB_HAVE_LOADGEN ON)
  message(STATUS "perflab: LoadGen ${PERFLAB_LOADGEN_VERSION} from ${PERFLAB_LOADGEN_SOURCE}")
else()
  message(STATUS "perflab: LoadGen not found at ${PERFLAB_LOADGEN_SOURCE} (run scripts/setup); built without it")
endif()
