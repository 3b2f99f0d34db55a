// The RNN-T loss on arrays supplied as NumPy .npy files, so perflab's loss can
// be checked against any other implementation's test vectors and back.
//
// Inputs (C order, little-endian):
//   logits         <f4 or <f8, [B, T, U+1, V] (padded) or [R, V] (packed,
//                  R = Σ_b T_b·(U_b+1), rows (b, t, u) in that order)
//   labels         <i4 or <i8, [B, U] (entries past U_b ignored)
//   logit_lengths  <i4 or <i8, [B] (T_b)
//   label_lengths  <i4 or <i8, [B] (U_b)
// Outputs, in the output folder:
//   costs.npy      <f8 [B]: −log P(y_b | x_b), unreduced
//   loss.npy       <f8 []: the reduced loss (none and sum: Σ costs; mean: Σ costs / B)
//   grads.npy      the logits' dtype and shape: d loss / d logits (0 in padding)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace perflab::transducer {

struct LossFileOptions {
  std::filesystem::path logits, labels, logit_lengths, label_lengths;
  std::filesystem::path out_dir;
  int64_t blank = -1;              ///< -1: V-1.
  std::string reduction = "mean";  ///< none | sum | mean
};

struct LossFileSummary {
  int64_t batch = 0;
  std::string layout;  ///< "padded" or "packed"
  std::string dtype;   ///< of the logits
  double loss = 0;
};

/// Reads the inputs, checks their dtypes and shapes (UsageError naming the
/// file and what was expected), evaluates the loss and its gradient in
/// double accumulation, and writes costs.npy, loss.npy and grads.npy.
LossFileSummary evaluate_loss_files(const LossFileOptions& options);

}  // namespace perflab::transducer
