// The rules that find the cuDNN a program will load (tuner/cudnn_locator.h).
#include "tuner/cudnn_locator.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace tunedb::tuner {
namespace {

using testing_util::TempDir;

TEST(CudnnLocatorTest, PythonInterpretersAreKnownByTheirFileName) {
  EXPECT_TRUE(IsPythonInterpreter("python"));
  EXPECT_TRUE(IsPythonInterpreter("python3"));
  EXPECT_TRUE(IsPythonInterpreter("/venv/bin/python3.11"));
  EXPECT_TRUE(IsPythonInterpreter("python3.13t"));
  EXPECT_FALSE(IsPythonInterpreter("train.py"));
  EXPECT_FALSE(IsPythonInterpreter("/usr/bin/python-config"));
  EXPECT_FALSE(IsPythonInterpreter("python3.x"));
  EXPECT_FALSE(IsPythonInterpreter("/opt/python3/bin/torchrun"));
  EXPECT_FALSE(IsPythonInterpreter("sh"));
}

TEST(CudnnLocatorTest, TheFirstLibraryPathFolderHoldingCudnnWins) {
  auto has = [](const std::string& d) { return d == "/b" || d == "/c"; };
  EXPECT_EQ(CudnnDirInLibraryPath("/a::/b:/c", has), "/b");
  EXPECT_EQ(CudnnDirInLibraryPath("/a", has), "");
  EXPECT_EQ(CudnnDirInLibraryPath("", has), "");
}

TEST(CudnnLocatorTest, LdconfigGivesTheNewestMainLibrarysFolder) {
  const std::string out =
      "1234 libs found in cache `/etc/ld.so.cache'\n"
      "\tlibcudnn_ops.so.9 (libc6,x86-64) => /opt/ops/libcudnn_ops.so.9\n"
      "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/cudnn8/libcudnn.so.8\n"
      "\tlibcudnn.so.9 (libc6,x86-64) => /usr/local/cuda/lib/libcudnn.so.9\n"
      "\tlibcudnn.so (libc6,x86-64) => /elsewhere/libcudnn.so\n";
  EXPECT_EQ(CudnnDirInLdconfig(out), "/usr/local/cuda/lib");
  EXPECT_EQ(CudnnDirInLdconfig("\tlibc.so.6 (libc6) => /lib/libc.so.6\n"), "");
}

TEST(CudnnLocatorTest, AFolderHoldsCudnnOnlyWithTheMainLibrary) {
  TempDir dir;
  EXPECT_FALSE(DirHoldsCudnn(dir.path()));
  std::ofstream(dir.File("libcudnn_ops.so.9")) << "";
  EXPECT_FALSE(DirHoldsCudnn(dir.path()));
  std::ofstream(dir.File("libcudnn.so.9")) << "";
  EXPECT_TRUE(DirHoldsCudnn(dir.path()));
  EXPECT_FALSE(DirHoldsCudnn(dir.File("missing")));
}

TEST(CudnnLocatorTest, OutputOfGivesStdoutOfASuccessAndNothingOtherwise) {
  EXPECT_EQ(OutputOf({"sh", "-c", "echo one; echo two >&2"}, 5), "one\n");
  EXPECT_EQ(OutputOf({"sh", "-c", "echo one; exit 3"}, 5), "");
  EXPECT_EQ(OutputOf({"/no/such/program"}, 5), "");
}

TEST(CudnnLocatorTest, OutputOfKillsAProgramThatTakesTooLong) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(OutputOf({"sh", "-c", "echo early; exec sleep 30"}, 0.3), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// A fake interpreter named python3 that prints `lib` for the probe.
std::string FakePython(const TempDir& dir, const std::string& lib) {
  const std::string path = dir.File("python3");
  std::ofstream(path) << "#!/bin/sh\necho " << lib << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

TEST(CudnnLocatorTest, APythonProgramGetsTheCudnnItsInterpreterImports) {
  TempDir dir;
  mkdir(dir.File("lib").c_str(), 0755);
  std::ofstream(dir.File("lib/libcudnn.so.9")) << "";
  EXPECT_EQ(LocateCudnnDir({FakePython(dir, dir.File("lib")), "train.py"}),
            dir.File("lib"));
}

TEST(CudnnLocatorTest, LibraryPathIsUsedWhenThePythonPackageHasNoCudnn) {
  TempDir dir;
  mkdir(dir.File("lib").c_str(), 0755);
  mkdir(dir.File("ld").c_str(), 0755);
  std::ofstream(dir.File("ld/libcudnn.so.9")) << "";
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string saved = old != nullptr ? old : "";
  setenv("LD_LIBRARY_PATH", dir.File("ld").c_str(), 1);
  EXPECT_EQ(LocateCudnnDir({FakePython(dir, dir.File("lib")), "train.py"}),
            dir.File("ld"));
  EXPECT_EQ(LocateCudnnDir({"sh", "-c", "true"}), dir.File("ld"));
  if (old != nullptr) {
    setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
  } else {
    unsetenv("LD_LIBRARY_PATH");
  }
}

}  // namespace
}  // namespace tunedb::tuner
