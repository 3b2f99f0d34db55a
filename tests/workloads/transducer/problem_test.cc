// The transducer's inputs: made on every core, the same whatever the
// thread count (the counter-based generator), and seeded by data_seed.
#include "workloads/transducer/problem.h"

#include <omp.h>

#include <gtest/gtest.h>

namespace perflab::transducer {
namespace {

Problem problem(Op op) {
  Problem p;
  p.op = op;
  p.batch = 3;
  p.max_time = 17;
  p.max_labels = 5;
  p.vocab = 29;
  p.hidden = 11;
  p.length_sets = 2;
  p.data_seed = 2024;
  return p;
}

ProblemData with_threads(const Problem& p, int threads) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  ProblemData d = make_problem_data(p);
  omp_set_num_threads(before);
  return d;
}

TEST(TransducerProblem, TheInputsDoNotDependOnTheThreadCount) {
  for (Op op : {Op::kLoss, Op::kJoint}) {
    const Problem p = problem(op);
    const ProblemData one = with_threads(p, 1), four = with_threads(p, 4);
    EXPECT_EQ(one.values, four.values);
    EXPECT_EQ(one.f, four.f);
    EXPECT_EQ(one.g, four.g);
    ASSERT_EQ(one.sets.size(), 2u);
    EXPECT_EQ(one.sets[1].frames, four.sets[1].frames);
    EXPECT_EQ(one.values.size(), static_cast<size_t>(p.padded_rows() * p.row_width()));
  }
}

TEST(TransducerProblem, TheSeedChoosesTheInputs) {
  Problem p = problem(Op::kLoss);
  const ProblemData a = make_problem_data(p);
  p.data_seed = 2025;
  EXPECT_NE(a.values, make_problem_data(p).values);
  p.data_seed = 2024;
  EXPECT_EQ(a.values, make_problem_data(p).values);
}

TEST(TransducerProblem, JointValuesAreInTheirRange) {
  const ProblemData d = make_problem_data(problem(Op::kJoint));
  for (const std::vector<float>* v : {&d.values, &d.f, &d.g}) {
    ASSERT_FALSE(v->empty());
    for (float x : *v) {
      ASSERT_GE(x, -1.0f);
      ASSERT_LE(x, 1.0f);
    }
  }
}

}  // namespace
}  // namespace perflab::transducer
