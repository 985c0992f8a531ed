// Temporary files next to a target: unpredictable names, exclusive creation (a planted symlink is
// never followed), permissions, and the removal of leftovers of dead processes.
#include "tessera/core/temp_file.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/io_test_util.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
namespace fs = std::filesystem;

namespace {

// A pid that belonged to a process which has exited (and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// `path` with the pid in its temporary name replaced.
std::string with_pid(const std::string& path, pid_t pid) {
  const size_t marker = path.rfind(kTempMarker) + std::strlen(kTempMarker);
  const size_t pid_at = path.find('-', marker) + 1, pid_end = path.find('-', pid_at);
  return path.substr(0, pid_at) + std::to_string(pid) + path.substr(pid_end);
}

void make_old(const std::string& path, int hours) {
  const fs::file_time_type t = fs::file_time_type::clock::now() - std::chrono::hours(hours);
  fs::last_write_time(path, t);
}

}  // namespace

TEST(TempFile, NamesAreUnpredictableAndNextToTheTarget) {
  ScratchDir dir;
  const TempFile a = create_temp_file(dir.file("model.gguf"), 0644);
  const TempFile b = create_temp_file(dir.file("model.gguf"), 0644);
  ::close(a.fd);
  ::close(b.fd);
  EXPECT_NE(a.path, b.path);
  EXPECT_EQ(fs::path(a.path).parent_path(), dir.path());
  const std::string name = fs::path(a.path).filename().string();
  EXPECT_EQ(name.rfind(".model.gguf" + std::string(kTempMarker), 0), 0u) << name;
  EXPECT_NE(name.find("-" + std::to_string(::getpid()) + "-"), std::string::npos) << name;
  EXPECT_EQ(name.find(".tmp." + std::to_string(::getpid())), std::string::npos) << "the old predictable name";
  // Names stay below NAME_MAX however long the target's name is.
  const TempFile c = create_temp_file(dir.file(std::string(250, 'n')), 0644);
  ::close(c.fd);
  EXPECT_LT(fs::path(c.path).filename().string().size(), 255u);
}

TEST(TempFile, PermissionsFollowTheModeLessTheUmask) {
  ScratchDir dir;
  const mode_t old = ::umask(022);
  const TempFile f = create_temp_file(dir.file("out"), 0644);
  const TempFile p = create_temp_file(dir.file("private"), 0600);
  ::umask(old);
  ::close(f.fd);
  ::close(p.fd);
  struct stat st {};
  ASSERT_EQ(::stat(f.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_EQ(::stat(p.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string folder = create_temp_directory(dir.file("work"));
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::ofstream(folder + "/kernels.so") << "x";
  remove_temp_directory(folder);
  EXPECT_FALSE(fs::exists(folder));
}

TEST(TempFile, AMissingFolderIsAClearError) {
  EXPECT_TESSERA_ERROR(create_temp_file("/nonexistent/dir/out.gguf", 0644), "cannot write '/nonexistent/dir/out.gguf'",
                       "/nonexistent/dir", "No such file or directory");
}

TEST(TempFile, LeftoversOfDeadProcessesAreRemoved) {
  ScratchDir dir;
  // Leftovers as a killed process leaves them: a file and a folder made on this host by a dead pid.
  const TempFile f = create_temp_file(dir.file("a.gguf"), 0644);
  ::close(f.fd);
  const std::string dead_file = with_pid(f.path, dead_pid());
  fs::rename(f.path, dead_file);
  const std::string folder = create_temp_directory(dir.file("b.so"));
  std::ofstream(folder + "/kernels.so") << "partial";
  const std::string dead_folder = with_pid(folder, dead_pid());
  fs::rename(folder, dead_folder);
  // One from another host: judged by age only.
  const std::string other_host = dir.file(".c.gguf" + std::string(kTempMarker) + "0badf00d-1-0123456789abcdef");
  const std::string other_host_old = dir.file(".d.gguf" + std::string(kTempMarker) + "0badf00d-1-0123456789abcdef");
  std::ofstream(other_host) << "x";
  std::ofstream(other_host_old) << "x";
  make_old(other_host_old, 2);
  // A live writer's file (this process) and files that are not ours stay.
  const TempFile live = create_temp_file(dir.file("e.gguf"), 0644);
  ::close(live.fd);
  std::ofstream(dir.file("f.gguf.tmp.12345")) << "not ours";
  std::ofstream(dir.file("g" + std::string(kTempMarker) + "not-a-tag")) << "not ours";

  EXPECT_EQ(remove_stale_temp_files(dir.path().string()), 3);
  EXPECT_FALSE(fs::exists(dead_file));
  EXPECT_FALSE(fs::exists(dead_folder));
  EXPECT_FALSE(fs::exists(other_host_old));
  EXPECT_TRUE(fs::exists(other_host));
  EXPECT_TRUE(fs::exists(live.path));
  EXPECT_TRUE(fs::exists(dir.file("f.gguf.tmp.12345")));
  EXPECT_TRUE(fs::exists(dir.file("g" + std::string(kTempMarker) + "not-a-tag")));
}

TEST(TempFile, TheFirstTemporaryFileInAFolderCleansIt) {
  ScratchDir dir;
  const TempFile f = create_temp_file(dir.file("x"), 0644);
  ::close(f.fd);
  ::unlink(f.path.c_str());
  // A new folder: the process has not cleaned it yet, so the next temporary file there does.
  const fs::path sub = dir.path() / "sub";
  fs::create_directories(sub);
  const std::string leftover = with_pid((sub / fs::path(f.path).filename()).string(), dead_pid());
  std::ofstream(leftover) << "partial";
  const TempFile g = create_temp_file((sub / "y").string(), 0644);
  ::close(g.fd);
  EXPECT_FALSE(fs::exists(leftover));
}

TEST(TempFile, SymlinksNamedLikeLeftoversAreNotFollowed) {
  ScratchDir dir;
  const std::string victim = dir.file("victim");
  std::ofstream(victim) << "keep me";
  const TempFile f = create_temp_file(dir.file("a"), 0644);
  ::close(f.fd);
  ::unlink(f.path.c_str());
  const std::string link = with_pid(f.path, dead_pid());
  fs::create_symlink(victim, link);
  make_old(victim, 3);
  remove_stale_temp_files(dir.path().string());
  EXPECT_EQ(read_bytes(victim), "keep me");
  EXPECT_TRUE(fs::is_symlink(link));  // only files and folders we make are ever removed
}
