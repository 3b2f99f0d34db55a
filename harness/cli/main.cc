// perflab's entry point: everything lives in the CLI library so tests can
// drive it in-process.
#include "harness/cli/app.h"

int main(int argc, char** argv) { return perflab::cli::main(argc, argv); }
