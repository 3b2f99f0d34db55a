// Synthetic Criteo-like data: counter-based random streams, a rejection-inversion
// Zipf sampler, the hashed teacher and its bias calibration.
#include "workloads/dlrm/data/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "base/error.h"
#include "kernels/cpu/auc.h"

namespace perflab::dlrm {
namespace {

constexpr int kNumDense = 13;
constexpr int kMaxPairRank = 64;
constexpr int64_t kCalibrationSamples = 1 << 16;
// Stream tags: each split and each kind of teacher parameter draws from its own keys.
constexpr uint64_t kTrainSplit = 1, kEvalSplit = 2, kCalibrationSplit = 3;
constexpr uint64_t kTagTeacher = 11, kTagDense = 12, kTagTable = 13, kTagPairs = 14;
constexpr uint64_t kTagEffect = 15, kTagVector = 16;

/// splitmix64's finaliser: a bijective 64-bit mix.
uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) {
  return mix64(a + 0x9e3779b97f4a7c15ull * (mix64(b) + mix64(c + 0x632be59bd9b4e019ull)));
}

/// Uniform in [0, 1) from the top 53 bits.
double to_unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// Approximately standard normal from one 64-bit hash: the sum of its four
/// 16-bit quarters (Irwin-Hall, 4 terms), centred and scaled to unit variance.
double hash_normal(uint64_t bits) {
  double sum = 0;
  for (int q = 0; q < 4; ++q) sum += static_cast<double>((bits >> (16 * q)) & 0xffffu) + 0.5;
  return (sum / 65536.0 - 2.0) * std::sqrt(3.0);
}

/// A splitmix64 stream: one per sample, keyed by (seed, split, index).
class Rng {
 public:
  explicit Rng(uint64_t key) : state_(key) {}
  uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ull); }
  double uniform() { return to_unit(next()); }
  /// Approximately standard normal (Irwin-Hall, see hash_normal): cheap, and
  /// bounded at +-3.46, which is all the generator needs.
  double normal() { return hash_normal(next()); }

 private:
  uint64_t state_;
};

/// Zipf over {0, ..., n-1} with P(k) proportional to (k + 1)^-exponent, by
/// Hörmann and Derflinger's rejection-inversion: O(1) expected time and
/// memory per draw whatever n (a rejection is rare).
class ZipfSampler {
 public:
  ZipfSampler(int64_t n, double exponent) : n_(n), q_(exponent) {
    h_integral_x1_ = h_integral(1.5) - 1.0;
    h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
    squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
  }

  int64_t sample(Rng& rng) const {
    if (n_ == 1) return 0;
    for (;;) {
      const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      const double k = std::clamp(std::floor(x + 0.5), 1.0, static_cast<double>(n_));
      if (k - x <= squeeze_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<int64_t>(k) - 1;
    }
  }

 private:
  // h(x) = x^-q; H(x) = integral of h from 1 to x, written via expm1/log1p so
  // that q = 1 needs no special case.
  double h(double x) const { return std::exp(-q_ * std::log(x)); }
  double h_integral(double x) const {
    const double log_x = std::log(x);
    return expm1_over_x((1.0 - q_) * log_x) * log_x;
  }
  double h_integral_inverse(double x) const {
    const double t = std::max(-1.0, x * (1.0 - q_));
    return std::exp(log1p_over_x(t) * x);
  }
  static double expm1_over_x(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + x / 4));
  }
  static double log1p_over_x(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }

  int64_t n_;
  double q_;
  double h_integral_x1_ = 0, h_integral_n_ = 0, squeeze_ = 0;
};

/// The three raw (unscaled) terms of the teacher logit for one sample.
struct RawTerms {
  double dense = 0, ids = 0, pairs = 0;
};

/// The fixed random teacher and the feature distributions, all from the seed.
class Teacher {
 public:
  explicit Teacher(const SyntheticConfig& c)
      : key_(hash3(c.seed, kTagTeacher, 0)), rank_(c.pair_rank), tables_(c.table_sizes.size()) {
    for (int j = 0; j < kNumDense; ++j) {
      const uint64_t bits = hash3(key_, kTagDense, static_cast<uint64_t>(j));
      Rng rng(bits);
      dense_[j].p_zero = 0.05 + 0.5 * rng.uniform();
      dense_[j].mu = 0.5 + 4.5 * rng.uniform();
      dense_[j].sigma = 0.5 + 1.5 * rng.uniform();
      dense_[j].weight = hash_normal(rng.next());
    }
    for (size_t t = 0; t < tables_; ++t) {
      table_weight_.push_back(0.5 + to_unit(hash3(key_, kTagTable, t)));
      effect_key_.push_back(hash3(key_ + t, kTagEffect, 0));
      for (int r = 0; r < rank_; r += 4) {
        vector_key_.push_back(hash3(key_ + t, kTagVector, static_cast<uint64_t>(r)));
      }
      zipf_.emplace_back(c.table_sizes[t], c.zipf_exponent);
    }
    // Pick num_pairs distinct table pairs by a seeded partial Fisher-Yates shuffle.
    std::vector<std::pair<size_t, size_t>> all;
    for (size_t i = 0; i < tables_; ++i) {
      for (size_t j = i + 1; j < tables_; ++j) all.emplace_back(i, j);
    }
    Rng rng(hash3(key_, kTagPairs, 0));
    for (size_t p = 0; p < static_cast<size_t>(c.num_pairs); ++p) {
      const size_t pick = p + static_cast<size_t>(rng.next() % (all.size() - p));
      std::swap(all[p], all[pick]);
      const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
      pairs_.push_back({all[p].first, all[p].second, sign * (0.5 + rng.uniform())});
    }
  }

  /// Draws the sample's features from `rng`: dense [13], categorical [tables].
  void draw_features(Rng& rng, float* dense, int32_t* categorical) const {
    for (int j = 0; j < kNumDense; ++j) {
      const DenseFeature& f = dense_[j];
      const bool zero = rng.uniform() < f.p_zero;
      const double count = zero ? 0.0 : std::floor(std::exp(f.mu + f.sigma * rng.normal()));
      dense[j] = static_cast<float>(std::log1p(count));
    }
    for (size_t t = 0; t < tables_; ++t) {
      categorical[t] = static_cast<int32_t>(zipf_[t].sample(rng));
    }
  }

  /// The raw teacher terms of a sample's features.
  RawTerms raw_terms(const float* dense, const int32_t* categorical) const {
    RawTerms raw;
    for (int j = 0; j < kNumDense; ++j) raw.dense += dense_[j].weight * dense[j];
    for (size_t t = 0; t < tables_; ++t) {
      const auto id = static_cast<uint64_t>(categorical[t]);
      raw.ids += table_weight_[t] * hash_normal(keyed(effect_key_[t], id));
    }
    for (const Pair& p : pairs_) {
      const auto id_a = static_cast<uint64_t>(categorical[p.a]);
      const auto id_b = static_cast<uint64_t>(categorical[p.b]);
      double dot = 0;
      for (int r = 0; r < rank_; r += 4) {
        const uint64_t a = vector_bits(p.a, id_a, r), b = vector_bits(p.b, id_b, r);
        for (int q = 0; q < 4 && r + q < rank_; ++q) dot += component(a, q) * component(b, q);
      }
      raw.pairs += p.weight * dot;
    }
    return raw;
  }

 private:
  struct DenseFeature {
    double p_zero = 0, mu = 0, sigma = 0, weight = 0;
  };
  struct Pair {
    size_t a = 0, b = 0;
    double weight = 0;
  };

  // u_t[id] has rank_ components, uniform in [-1, 1): four 16-bit pieces per hash.
  uint64_t vector_bits(size_t table, uint64_t id, int first) const {
    const size_t chunks = static_cast<size_t>(rank_ + 3) / 4;
    return keyed(vector_key_[table * chunks + static_cast<size_t>(first / 4)], id);
  }
  /// Element `id` of the splitmix64 sequence that starts at `key`: one mix per
  /// per-id value, with the (table, purpose) part of the hash precomputed.
  static uint64_t keyed(uint64_t key, uint64_t id) {
    return mix64(key + 0x9e3779b97f4a7c15ull * (id + 1));
  }
  static double component(uint64_t bits, int q) {
    return static_cast<double>((bits >> (16 * q)) & 0xffffu) / 32768.0 - 1.0;
  }

  uint64_t key_;
  int rank_;
  size_t tables_;
  std::array<DenseFeature, kNumDense> dense_;
  std::vector<double> table_weight_;
  std::vector<uint64_t> effect_key_;  // Per table.
  std::vector<uint64_t> vector_key_;  // Per table and group of 4 components.
  std::vector<ZipfSampler> zipf_;
  std::vector<Pair> pairs_;
};

/// Scales of the three raw terms and the bias, fitted on the calibration sample.
struct Calibration {
  double dense_scale = 0, id_scale = 0, pair_scale = 0, bias = 0;
  double logit(const RawTerms& raw) const {
    return dense_scale * raw.dense + id_scale * raw.ids + pair_scale * raw.pairs;
  }
};

uint64_t sample_key(uint64_t seed, uint64_t split, int64_t index) {
  return hash3(seed, split, static_cast<uint64_t>(index));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Calibration calibrate(const SyntheticConfig& c, const Teacher& teacher) {
  const int64_t n = kCalibrationSamples;
  const size_t tables = c.table_sizes.size();
  std::vector<RawTerms> raw(n);
  std::vector<double> noise(n);
#pragma omp parallel
  {
    std::vector<float> dense(kNumDense);
    std::vector<int32_t> categorical(tables);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      Rng rng(sample_key(c.seed, kCalibrationSplit, i));
      teacher.draw_features(rng, dense.data(), categorical.data());
      raw[i] = teacher.raw_terms(dense.data(), categorical.data());
      noise[i] = c.teacher_noise * rng.normal();
    }
  }
  // Scale each term to its share of the teacher's variance; a term that does
  // not vary (no pairs, one-row tables) gives its share to the others. Serial
  // sums, so the result does not depend on the thread count.
  auto stddev_of = [&](double RawTerms::*term) {
    double sum = 0, sum_sq = 0;
    bool constant = true;
    for (const RawTerms& r : raw) {
      sum += r.*term;
      constant &= r.*term == raw[0].*term;
    }
    if (constant) return 0.0;  // Exactly, not up to the rounding of the sums below.
    const double mean = sum / static_cast<double>(n);
    for (const RawTerms& r : raw) sum_sq += (r.*term - mean) * (r.*term - mean);
    return std::sqrt(sum_sq / static_cast<double>(n));
  };
  const std::array<double, 3> stddev = {stddev_of(&RawTerms::dense), stddev_of(&RawTerms::ids),
                                        stddev_of(&RawTerms::pairs)};
  const std::array<double, 3> share = {c.dense_share, c.id_share, c.pair_share};
  std::array<double, 3> scale{};
  double total_share = 0;
  for (int k = 0; k < 3; ++k) total_share += stddev[k] > 0 ? share[k] : 0.0;
  for (int k = 0; k < 3; ++k) {
    if (stddev[k] > 0 && share[k] > 0) {
      scale[k] = c.teacher_scale * std::sqrt(share[k] / total_share) / stddev[k];
    }
  }
  Calibration cal;
  cal.dense_scale = scale[0];
  cal.id_scale = scale[1];
  cal.pair_scale = scale[2];
  // Bisection on the bias: the mean click probability is increasing in it.
  std::vector<double> logits(n);
  for (int64_t i = 0; i < n; ++i) logits[i] = cal.logit(raw[i]) + noise[i];
  double lo = -60, hi = 60;
  for (int iter = 0; iter < 50; ++iter) {  // Brackets the bias to 1e-13.
    const double mid = 0.5 * (lo + hi);
    double sum = 0;
    for (double z : logits) sum += sigmoid(z + mid);
    (sum / static_cast<double>(n) < c.click_rate ? lo : hi) = mid;
  }
  cal.bias = 0.5 * (lo + hi);
  return cal;
}

/// Fills `out` with n samples of `split`; writes each sample's noiseless
/// teacher logit to `logits` when it is not null.
void generate_split(const SyntheticConfig& c, const Teacher& teacher, const Calibration& cal,
                    uint64_t split, int64_t n, Dataset& out, std::vector<float>* logits) {
  const int tables = static_cast<int>(c.table_sizes.size());
  out.num_dense = kNumDense;
  out.table_sizes = c.table_sizes;
  out.dense.resize(static_cast<size_t>(n * kNumDense));
  out.categorical.resize(static_cast<size_t>(n * tables));
  out.labels.resize(static_cast<size_t>(n));
  if (logits != nullptr) logits->resize(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    Rng rng(sample_key(c.seed, split, i));
    float* dense = &out.dense[i * kNumDense];
    int32_t* categorical = &out.categorical[i * tables];
    teacher.draw_features(rng, dense, categorical);
    const double z = cal.logit(teacher.raw_terms(dense, categorical)) + cal.bias;
    const double noisy = z + c.teacher_noise * rng.normal();
    out.labels[i] = rng.uniform() < sigmoid(noisy) ? 1.0f : 0.0f;
    if (logits != nullptr) (*logits)[i] = static_cast<float>(z);
  }
}

double positive_fraction(const Dataset& d) {
  double positives = 0;
  for (float label : d.labels) positives += label;
  return d.size() > 0 ? positives / static_cast<double>(d.size()) : 0.0;
}

void check_config(const SyntheticConfig& c) {
  auto fail = [](const std::string& what) { throw UsageError("synthetic data: " + what); };
  if (c.train_samples < 0 || c.eval_samples < 0) fail("sample counts must be non-negative");
  if (c.table_sizes.empty()) fail("needs at least one table");
  for (int64_t size : c.table_sizes) {
    if (size < 1 || size > std::numeric_limits<int32_t>::max()) {
      fail(fmt::format("table size {} outside [1, 2^31 - 1]", size));
    }
  }
  if (!(c.zipf_exponent >= 0 && c.zipf_exponent < 100)) fail("zipf_exponent must be in [0, 100)");
  if (!(c.click_rate > 0 && c.click_rate < 1)) fail("click_rate must be in (0, 1)");
  if (!(c.teacher_scale >= 0 && c.teacher_scale < 100)) fail("teacher_scale must be in [0, 100)");
  if (!(c.teacher_noise >= 0 && c.teacher_noise < 100)) fail("teacher_noise must be in [0, 100)");
  if (!(c.dense_share >= 0 && c.id_share >= 0 && c.pair_share >= 0) ||
      !(c.dense_share + c.id_share + c.pair_share > 0)) {
    fail("teacher shares must be non-negative with a positive sum");
  }
  const int64_t tables = static_cast<int64_t>(c.table_sizes.size());
  if (c.num_pairs < 0 || c.num_pairs > tables * (tables - 1) / 2) {
    fail(fmt::format("num_pairs {} outside [0, {}]", c.num_pairs, tables * (tables - 1) / 2));
  }
  if (c.pair_rank < 1 || c.pair_rank > kMaxPairRank) fail("pair_rank must be in [1, 64]");
}

}  // namespace

std::vector<int64_t> criteo_table_sizes(int64_t cap) {
  std::vector<int64_t> sizes = {39884406, 39043,  17289,    7420,    20263,  3,        7120,
                                1543,     63,     38532951, 2953546, 403346, 10,       2208,
                                11938,    155,    4,        976,     14,     39979771, 25641295,
                                39664984, 585935, 12972,    108,     36};
  for (int64_t& size : sizes) size = std::min(size, cap);
  return sizes;
}

SyntheticData generate_synthetic(const SyntheticConfig& config) {
  check_config(config);
  const Teacher teacher(config);
  const Calibration cal = calibrate(config, teacher);
  SyntheticData data;
  data.teacher_bias = cal.bias;
  generate_split(config, teacher, cal, kTrainSplit, config.train_samples, data.train, nullptr);
  std::vector<float> eval_logits;
  generate_split(config, teacher, cal, kEvalSplit, config.eval_samples, data.eval, &eval_logits);
  data.train_click_rate = positive_fraction(data.train);
  data.eval_click_rate = positive_fraction(data.eval);
  data.ceiling_auc =
      kernels::cpu::roc_auc(eval_logits.data(), data.eval.labels.data(), data.eval.size());
  return data;
}

}  // namespace perflab::dlrm
