// Names and sizes of the collectives' element types and reductions.
#include <fmt/format.h>

#include "collectives/communicator.h"
#include "base/error.h"

namespace perflab::collectives {

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat16: return 2;
    case DataType::kBFloat16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kFloat64: return 8;
  }
  return 0;
}

const char* dtype_name(DataType t) {
  switch (t) {
    case DataType::kFloat32: return "float";
    case DataType::kFloat16: return "half";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kInt32: return "int32";
    case DataType::kFloat64: return "double";
  }
  return "?";
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

DataType parse_dtype(const std::string& text) {
  if (text == "float" || text == "fp32" || text == "float32") return DataType::kFloat32;
  if (text == "half" || text == "fp16" || text == "float16") return DataType::kFloat16;
  if (text == "bfloat16" || text == "bf16") return DataType::kBFloat16;
  if (text == "int32" || text == "int") return DataType::kInt32;
  if (text == "double" || text == "fp64" || text == "float64") return DataType::kFloat64;
  throw UsageError(fmt::format("unknown data type '{}': choose float, half, bfloat16, int32 or double", text));
}

ReduceOp parse_op(const std::string& text) {
  if (text == "sum") return ReduceOp::kSum;
  if (text == "max") return ReduceOp::kMax;
  if (text == "min") return ReduceOp::kMin;
  throw UsageError(fmt::format("unknown reduction '{}': choose sum, max or min", text));
}

}  // namespace perflab::collectives
