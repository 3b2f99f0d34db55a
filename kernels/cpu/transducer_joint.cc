// RNN-T joint on the CPU: forward parallel over (sequence, frame); backward
// computes df parallel over (sequence, frame) and dg parallel over (sequence,
// label position), each output row summed serially.
#include "kernels/cpu/transducer_joint.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace perflab::kernels::cpu {
namespace {

/// Row (b, t, u) of h/dh: padded when offsets is nullptr, packed otherwise.
struct Rows {
  const int64_t* offsets = nullptr;
  int64_t max_time = 0;
  int64_t positions = 0;  ///< U+1

  int64_t operator()(int64_t b, int64_t t, int64_t u, int64_t labels_b) const {
    return offsets ? offsets[b] + t * (labels_b + 1) + u : (b * max_time + t) * positions + u;
  }
};

template <typename Scalar>
void forward(const JointShape& shape, JointActivation act, const Scalar* f, const Scalar* g,
             const int32_t* frames, const int32_t* label_lengths, const Rows& rows, Scalar* h) {
  transducer_joint_validate(shape, frames, label_lengths);
  const int64_t hidden = shape.hidden;
  const int64_t positions = shape.max_labels + 1;
  const bool relu = act == JointActivation::kRelu;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t t = 0; t < shape.max_time; ++t) {
      const int64_t labels_b = label_lengths[b];
      const bool valid_t = t < frames[b];
      if (rows.offsets == nullptr) {  // zero the padding rows of this frame
        const int64_t first = rows(b, t, valid_t ? labels_b + 1 : 0, labels_b);
        std::fill(h + first * hidden, h + rows(b, t, positions, labels_b) * hidden, Scalar(0));
      }
      if (!valid_t) continue;
      const Scalar* f_row = f + (b * shape.max_time + t) * hidden;
      for (int64_t u = 0; u <= labels_b; ++u) {
        const Scalar* g_row = g + (b * positions + u) * hidden;
        Scalar* h_row = h + rows(b, t, u, labels_b) * hidden;
        if (relu) {
#pragma omp simd
          for (int64_t k = 0; k < hidden; ++k) h_row[k] = std::max(f_row[k] + g_row[k], Scalar(0));
        } else {
#pragma omp simd
          for (int64_t k = 0; k < hidden; ++k) h_row[k] = f_row[k] + g_row[k];
        }
      }
    }
  }
}

/// out += dh_row masked by ReLU (h_row > 0) when `relu`.
template <typename Scalar>
inline void accumulate(bool relu, const Scalar* h_row, const Scalar* dh_row, Scalar* out,
                       int64_t hidden) {
  if (relu) {
#pragma omp simd
    for (int64_t k = 0; k < hidden; ++k) out[k] += h_row[k] > 0 ? dh_row[k] : Scalar(0);
  } else {
#pragma omp simd
    for (int64_t k = 0; k < hidden; ++k) out[k] += dh_row[k];
  }
}

template <typename Scalar>
void backward(const JointShape& shape, JointActivation act, const Scalar* h, const Scalar* dh,
              const int32_t* frames, const int32_t* label_lengths, const Rows& rows, Scalar* df,
              Scalar* dg) {
  transducer_joint_validate(shape, frames, label_lengths);
  const int64_t hidden = shape.hidden;
  const int64_t positions = shape.max_labels + 1;
  const bool relu = act == JointActivation::kRelu;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t t = 0; t < shape.max_time; ++t) {
      Scalar* out = df + (b * shape.max_time + t) * hidden;
      std::fill(out, out + hidden, Scalar(0));
      if (t >= frames[b]) continue;
      const int64_t labels_b = label_lengths[b];
      for (int64_t u = 0; u <= labels_b; ++u) {
        const int64_t r = rows(b, t, u, labels_b);
        accumulate(relu, relu ? h + r * hidden : nullptr, dh + r * hidden, out, hidden);
      }
    }
  }
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t u = 0; u < positions; ++u) {
      Scalar* out = dg + (b * positions + u) * hidden;
      std::fill(out, out + hidden, Scalar(0));
      const int64_t labels_b = label_lengths[b];
      if (u > labels_b) continue;
      for (int64_t t = 0; t < frames[b]; ++t) {
        const int64_t r = rows(b, t, u, labels_b);
        accumulate(relu, relu ? h + r * hidden : nullptr, dh + r * hidden, out, hidden);
      }
    }
  }
}

std::string joint_sequence_prefix(int64_t b) {
  return "transducer_joint: sequence " + std::to_string(b) + ": ";
}

}  // namespace

void transducer_joint_validate(const JointShape& shape, const int32_t* frames,
                               const int32_t* label_lengths) {
  if (shape.batch < 0 || shape.max_time < 0 || shape.max_labels < 0 || shape.hidden < 0) {
    throw UsageError("transducer_joint: invalid shape B=" + std::to_string(shape.batch) + " T=" +
                     std::to_string(shape.max_time) + " U=" + std::to_string(shape.max_labels) +
                     " H=" + std::to_string(shape.hidden));
  }
  for (int64_t b = 0; b < shape.batch; ++b) {
    if (frames[b] < 0 || frames[b] > shape.max_time) {
      throw UsageError(joint_sequence_prefix(b) + "frame count " + std::to_string(frames[b]) +
                       " is outside [0, " + std::to_string(shape.max_time) + "]");
    }
    if (label_lengths[b] < 0 || label_lengths[b] > shape.max_labels) {
      throw UsageError(joint_sequence_prefix(b) + "label length " + std::to_string(label_lengths[b]) +
                       " is outside [0, " + std::to_string(shape.max_labels) + "]");
    }
  }
}

template <typename Scalar>
void transducer_joint_forward(const JointShape& shape, JointActivation act, const Scalar* f,
                              const Scalar* g, const int32_t* frames, const int32_t* label_lengths,
                              Scalar* h) {
  forward(shape, act, f, g, frames, label_lengths,
          Rows{nullptr, shape.max_time, shape.max_labels + 1}, h);
}

template <typename Scalar>
void transducer_joint_forward_packed(const JointShape& shape, JointActivation act, const Scalar* f,
                                     const Scalar* g, const int32_t* frames,
                                     const int32_t* label_lengths, const int64_t* offsets,
                                     Scalar* h) {
  forward(shape, act, f, g, frames, label_lengths,
          Rows{offsets, shape.max_time, shape.max_labels + 1}, h);
}

template <typename Scalar>
void transducer_joint_backward(const JointShape& shape, JointActivation act, const Scalar* h,
                               const Scalar* dh, const int32_t* frames,
                               const int32_t* label_lengths, Scalar* df, Scalar* dg) {
  backward(shape, act, h, dh, frames, label_lengths,
           Rows{nullptr, shape.max_time, shape.max_labels + 1}, df, dg);
}

template <typename Scalar>
void transducer_joint_backward_packed(const JointShape& shape, JointActivation act, const Scalar* h,
                                      const Scalar* dh, const int32_t* frames,
                                      const int32_t* label_lengths, const int64_t* offsets,
                                      Scalar* df, Scalar* dg) {
  backward(shape, act, h, dh, frames, label_lengths,
           Rows{offsets, shape.max_time, shape.max_labels + 1}, df, dg);
}

#define PERFLAB_JOINT_INSTANTIATE(Scalar)                                                       \
  template void transducer_joint_forward<Scalar>(const JointShape&, JointActivation,            \
                                                 const Scalar*, const Scalar*, const int32_t*,  \
                                                 const int32_t*, Scalar*);                      \
  template void transducer_joint_forward_packed<Scalar>(                                        \
      const JointShape&, JointActivation, const Scalar*, const Scalar*, const int32_t*,         \
      const int32_t*, const int64_t*, Scalar*);                                                 \
  template void transducer_joint_backward<Scalar>(const JointShape&, JointActivation,           \
                                                  const Scalar*, const Scalar*, const int32_t*, \
                                                  const int32_t*, Scalar*, Scalar*);            \
  template void transducer_joint_backward_packed<Scalar>(                                       \
      const JointShape&, JointActivation, const Scalar*, const Scalar*, const int32_t*,         \
      const int32_t*, const int64_t*, Scalar*, Scalar*);
PERFLAB_JOINT_INSTANTIATE(float)
PERFLAB_JOINT_INSTANTIATE(double)
#undef PERFLAB_JOINT_INSTANTIATE

}  // namespace perflab::kernels::cpu
