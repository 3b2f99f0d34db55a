// The transducer's inputs: made on every core, the same whatever the
// thread count (the counter-based generator), and seeded by data_seed.
#include "workloads/transducer/problem.h"

#include <omp.h>

#include <algorithm>
#include <memory>

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

TEST(TransducerProblem, PointsThatNeedTheSameInputsShareThem) {
  Problem p = problem(Op::kLoss);
  const std::shared_ptr<const ProblemData> first = shared_problem_data(p);
  // Another layout or dtype (a toggle changes neither the problem): the same inputs, made once.
  p.layout = Layout::kPacked;
  p.dtype = "bf16";
  EXPECT_EQ(shared_problem_data(p), first);
  const ProblemData own = make_problem_data(p);  // what the packed point alone would make: the first rows
  EXPECT_TRUE(std::equal(own.values.begin(), own.values.end(), first->values.begin()));
  // Other inputs: made anew, and the kept ones released once nobody holds them.
  const std::weak_ptr<const ProblemData> old = first;
  p.data_seed = 2025;
  const std::shared_ptr<const ProblemData> other = shared_problem_data(p);
  EXPECT_NE(other, first);
  EXPECT_EQ(other->values, make_problem_data(p).values);
  EXPECT_FALSE(old.expired());  // `first` still holds them
  p.data_seed = 2026;
  const std::shared_ptr<const ProblemData> third = shared_problem_data(p);
  EXPECT_EQ(other.use_count(), 1);  // the cache let go of the previous inputs before making these
  EXPECT_NE(third, other);
  // The joint's inputs are keyed by its own shapes.
  Problem joint = problem(Op::kJoint);
  EXPECT_EQ(shared_problem_data(joint)->f, make_problem_data(joint).f);
  joint.hidden = 13;
  EXPECT_EQ(shared_problem_data(joint)->f.size(), make_problem_data(joint).f.size());
}

TEST(TransducerProblem, ThePackedLayoutStoresOnlyTheRowsItPacks) {
  for (Op op : {Op::kLoss, Op::kJoint}) {
    Problem padded = problem(op);
    padded.min_length_fraction = 0.3;  // short sequences: far fewer packed rows than padded
    Problem packed = padded;
    packed.layout = Layout::kPacked;
    const ProblemData a = make_problem_data(padded), b = make_problem_data(packed);
    int64_t most = 0;
    for (const LengthSet& s : b.sets) most = std::max(most, s.packed_rows);
    EXPECT_EQ(stored_rows(packed, b.sets), most);
    EXPECT_LT(most, packed.padded_rows());
    ASSERT_EQ(b.values.size(), static_cast<size_t>(most * packed.row_width()));
    // The same values: the padded layout's first rows.
    EXPECT_TRUE(std::equal(b.values.begin(), b.values.end(), a.values.begin()));
    EXPECT_EQ(b.f, a.f);
    EXPECT_EQ(b.sets[1].offsets, a.sets[1].offsets);
  }
}

TEST(TransducerProblem, APackedPointTakesAPaddedPointsValuesAndNotTheOtherWayRound) {
  Problem padded = problem(Op::kLoss);
  padded.data_seed = 31;
  Problem packed = padded;
  packed.layout = Layout::kPacked;
  const std::shared_ptr<const ProblemData> full = shared_problem_data(padded);
  EXPECT_EQ(shared_problem_data(packed), full);  // its first rows serve
  Problem other = packed;
  other.data_seed = 32;
  const std::shared_ptr<const ProblemData> small = shared_problem_data(other);
  EXPECT_EQ(small->values.size(), static_cast<size_t>(stored_rows(other, small->sets) * other.row_width()));
  other.layout = Layout::kPadded;
  const std::shared_ptr<const ProblemData> again = shared_problem_data(other);
  EXPECT_NE(again, small);  // a padded point needs more rows than the packed values hold
  EXPECT_EQ(again->values.size(), static_cast<size_t>(other.padded_rows() * other.row_width()));
}

TEST(TransducerProblem, AnyRangeOfATensorIsWhatTheFullFillHolds) {
  // tensor_values is what the device's draws are checked against (and the
  // definition kernels/cuda/counter_fill computes): it must equal the host's
  // own fills value for value, from any first index, odd ones included (a
  // normal pair split across the range's start).
  for (Op op : {Op::kLoss, Op::kJoint}) {
    const Problem p = problem(op);
    const ProblemData d = make_problem_data(p);
    const Tensor big = op == Op::kLoss ? Tensor::kLogits : Tensor::kDh;
    EXPECT_EQ(tensor_values(p, big, 0, static_cast<int64_t>(d.values.size())), d.values);
    for (int64_t first : {1, 7, 100}) {
      const std::vector<float> part = tensor_values(p, big, first, 33);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), d.values.begin() + first)) << first;
    }
    if (op == Op::kJoint) {
      EXPECT_EQ(tensor_values(p, Tensor::kF, 0, static_cast<int64_t>(d.f.size())), d.f);
      EXPECT_EQ(tensor_values(p, Tensor::kG, 0, static_cast<int64_t>(d.g.size())), d.g);
    }
  }
  // One stream per tensor: no two tensors share values.
  const Problem p = problem(Op::kJoint);
  EXPECT_NE(tensor_values(p, Tensor::kF, 0, 8), tensor_values(p, Tensor::kG, 0, 8));
  EXPECT_NE(tensor_values(p, Tensor::kDh, 0, 8), tensor_values(p, Tensor::kF, 0, 8));
}

TEST(TransducerProblem, DeviceDrawnInputsLeaveOnlyLengthsAndLabelsOnTheHost) {
  Problem p = problem(Op::kLoss);
  p.data_seed = 41;
  const ProblemData host = make_problem_data(p);
  const ProblemData device = make_problem_data(p, TensorsOn::kDevice);
  EXPECT_EQ(device.tensors, TensorsOn::kDevice);
  EXPECT_TRUE(device.values.empty());
  EXPECT_TRUE(device.f.empty());
  ASSERT_EQ(device.sets.size(), host.sets.size());
  for (size_t i = 0; i < host.sets.size(); ++i) {
    EXPECT_EQ(device.sets[i].frames, host.sets[i].frames);
    EXPECT_EQ(device.sets[i].labels, host.sets[i].labels);
    EXPECT_EQ(device.sets[i].offsets, host.sets[i].offsets);
  }
  // Sharing: host tensors serve a device point; a device point's data does
  // not serve a point that needs host tensors.
  const std::shared_ptr<const ProblemData> with = shared_problem_data(p);
  EXPECT_EQ(shared_problem_data(p, TensorsOn::kDevice), with);
  p.data_seed = 42;
  const std::shared_ptr<const ProblemData> without = shared_problem_data(p, TensorsOn::kDevice);
  EXPECT_TRUE(without->values.empty());
  const std::shared_ptr<const ProblemData> again = shared_problem_data(p);
  EXPECT_NE(again, without);
  EXPECT_EQ(again->values, make_problem_data(p).values);
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
