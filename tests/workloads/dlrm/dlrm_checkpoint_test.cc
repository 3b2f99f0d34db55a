// DLRM checkpoints (workloads/dlrm/checkpoint.h): a trained model saved and
// loaded into a model from another seed predicts exactly what the trained
// one does (fp32 and emulated bf16); a file that is missing, not a
// checkpoint, cut short, too long, or of another shape or precision is
// refused in one line naming what is wrong; {seed} is replaced in paths.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/workloads/dlrm/tiny_dlrm.h"
#include "workloads/dlrm/checkpoint.h"

namespace perflab::dlrm {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir() {
  const fs::path dir = fs::temp_directory_path() / ("perflab_checkpoint_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// A model of tiny_shape(dim) trained a few steps from `seed`.
void train(CpuModel& model, const Dataset& data) {
  for (int64_t step = 0; step < 6; ++step) model.train_step(data.batch(step * 7 % 40, 9), 0.5f);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

TEST(DlrmCheckpoint, ALoadedModelPredictsWhatTheSavedOneDid) {
  const fs::path dir = fresh_dir();
  const Dataset data = tiny_data(50, 7);
  const std::vector<size_t> all = [] {
    std::vector<size_t> v(50);
    for (size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }();
  for (CpuPrecision precision : {CpuPrecision::kFp32, CpuPrecision::kBf16}) {
    CpuModel trained(tiny_shape(5), 3, EmbeddingStorage::kTables, precision);
    train(trained, data);
    const fs::path path = checkpoint_path((dir / "m-{seed}.ckpt").string(), 3);
    EXPECT_EQ(path.filename(), "m-3.ckpt");
    save_checkpoint(trained, 3, path);
    CpuModel loaded(tiny_shape(5), 99, EmbeddingStorage::kTables, precision);  // other initial values
    ASSERT_NE(tiny_predictions(loaded, data, all), tiny_predictions(trained, data, all));
    check_checkpoint(path, tiny_shape(5), precision);
    load_checkpoint(path, loaded);
    EXPECT_EQ(tiny_predictions(loaded, data, all), tiny_predictions(trained, data, all));
  }
  fs::remove_all(dir);
}

TEST(DlrmCheckpoint, AFileThatIsNotThisModelsCheckpointIsRefusedInOneLine) {
  const fs::path dir = fresh_dir();
  CpuModel model(tiny_shape(5), 3);
  const fs::path good = dir / "good.ckpt";
  save_checkpoint(model, 3, good);
  const std::string bytes = read_all(good);
  write_all(dir / "short.ckpt", bytes.substr(0, bytes.size() - 4));
  write_all(dir / "long.ckpt", bytes + "x");
  write_all(dir / "text.ckpt", "hello\n");
  write_all(dir / "header.ckpt", "perflab-dlrm-checkpoint 1\n{not json\n");
  const struct {
    fs::path file;
    ModelShape shape;
    CpuPrecision precision;
    const char* expect;
  } cases[] = {
      {dir / "missing.ckpt", tiny_shape(5), CpuPrecision::kFp32, "cannot be read"},
      {dir / "text.ckpt", tiny_shape(5), CpuPrecision::kFp32, "not a perflab DLRM checkpoint"},
      {dir / "header.ckpt", tiny_shape(5), CpuPrecision::kFp32, "header is not JSON"},
      {dir / "short.ckpt", tiny_shape(5), CpuPrecision::kFp32, "cut short"},
      {dir / "long.ckpt", tiny_shape(5), CpuPrecision::kFp32, "longer than its header says"},
      {good, tiny_shape(4), CpuPrecision::kFp32, "the checkpoint's bottom_mlp is [8,5], this model's is [8,4]"},
      {good, tiny_shape(5), CpuPrecision::kBf16, "trained in \"fp32\", served in bf16"},
  };
  for (const auto& c : cases) {
    try {
      CpuModel target(c.shape, 1, EmbeddingStorage::kTables, c.precision);
      load_checkpoint(c.file, target);
      FAIL() << "accepted: " << c.expect;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  ModelShape other = tiny_shape(5);
  other.table_sizes = {5, 7, 4};
  EXPECT_THROW(check_checkpoint(good, other, CpuPrecision::kFp32), UsageError);
  // The setup's check reads the header and the length only: a cut-short file is refused there already.
  EXPECT_THROW(check_checkpoint(dir / "short.ckpt", tiny_shape(5), CpuPrecision::kFp32), UsageError);
  EXPECT_THROW(check_checkpoint(dir / "long.ckpt", tiny_shape(5), CpuPrecision::kFp32), UsageError);
  EXPECT_NO_THROW(check_checkpoint(good, tiny_shape(5), CpuPrecision::kFp32));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perflab::dlrm
