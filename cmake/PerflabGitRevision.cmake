# The git revision is captured at build time (not configure time), so a
# result never claims a stale revision. The generated file changes only when
# the revision does, so it does not force relinks.
set(PERFLAB_GIT_REVISION_FILE ${CMAKE_BINARY_DIR}/generated/git_revision.cc)
add_custom_target(perflab_git_revision_gen
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${PERFLAB_GIT_REVISION_FILE}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteGitRevision.cmake
  BYPRODUCTS ${PERFLAB_GIT_REVISION_FILE}
  COMMENT "Capturing git revision")
