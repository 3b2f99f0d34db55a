// Build identity: the project version (harness/version.cc, from CMake's
// project version) and the git revision, generated at build time by
// cmake/WriteGitRevision.cmake so it names the revision actually built.
#pragma once

namespace perflab {

/// `git describe --always --dirty` of the source tree at build time, or
/// "unknown" when it was not a git checkout.
const char* git_revision();

/// perflab's release version (the CMake project version).
const char* perflab_version();

}  // namespace perflab
