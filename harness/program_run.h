// One seed of an external workload (harness/program.h): the harness runs the
// program, waits for it under its timeout, reads its log, runs the
// compliance checker on it and judges the run (harness/program_log.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "harness/program.h"
#include "harness/runner.h"

namespace perflab {

/// The training plan a program's results record: its quality key and
/// target (NaN when the file states none); the sample counts come from the
/// logs (fill_program_plan).
TrainingPlan program_training_plan(const Program& program);

/// Runs `seed`'s program. `log_path` (run_<i>.log in the run's work folder)
/// is where its MLLOG ends up; beside it, run_<i>.out and run_<i>.err hold
/// its output and run_<i>/ is its own folder ({out}). Never throws for what
/// the program does (a crash, a hang, a bad log: a failed run with the
/// reason); throws perflab::Error when the files cannot be made.
/// `on_eval`, when set, sees the run so far each time the program's log
/// gains a value of the quality key (read as the program writes it, about
/// once a second): the progress display's evaluations.
RunRecord run_program_seed(const Program& program, uint64_t seed, const std::filesystem::path& log_path,
                           const std::function<void(const RunRecord&)>& on_eval = {});

/// The plan's batch size, sample counts and precision as the runs' logs
/// state them (the first run that states each), into `record`.
void fill_program_plan(InvocationRecord& record);

}  // namespace perflab
