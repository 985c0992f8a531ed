#include <sys/stat.h>
#include <unistd.h>

#include "io_test_util.h"
#include "tessera/core/temp_file.h"
#include "tessera/io/atomic_file.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
namespace fs = std::filesystem;

namespace {

// Every entry of the directory except `keep`: a leftover temporary file would show up here.
std::vector<std::string> other_entries(const ScratchDir& dir, const std::string& keep) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (e.path().filename() != keep) names.push_back(e.path().filename().string());
  }
  return names;
}

}  // namespace

TEST(AtomicFile, WritesAndReplaces) {
  ScratchDir dir;
  const std::string path = dir.file("out.bin");
  io::write_file_atomic(path, std::string_view("first version"));
  EXPECT_EQ(read_bytes(path), "first version");
  io::write_file_atomic(path, std::string_view("2nd"));
  EXPECT_EQ(read_bytes(path), "2nd");
  EXPECT_TRUE(other_entries(dir, "out.bin").empty());
}

TEST(AtomicFile, StreamsThroughWriter) {
  ScratchDir dir;
  const std::string path = dir.file("streamed");
  io::write_file_atomic(path, [](io::AtomicFile& f) {
    f.write(std::string_view("abc"));
    const char more[] = {'\0', 'd'};
    f.write(more, 2);
    EXPECT_EQ(f.bytes_written(), 5u);
  });
  EXPECT_EQ(read_bytes(path), std::string("abc\0d", 5));
}

TEST(AtomicFile, TempNameIsNextToTarget) {
  ScratchDir dir;
  const std::string path = dir.file("x.safetensors");
  io::AtomicFile f(path);
  EXPECT_EQ(fs::path(f.temp_path()).parent_path(), dir.path());
  EXPECT_NE(f.temp_path().find(kTempMarker), std::string::npos) << f.temp_path();
  EXPECT_TRUE(fs::exists(f.temp_path()));
  EXPECT_FALSE(fs::exists(path));  // nothing visible until commit
  f.write(std::string_view("data"));
  EXPECT_FALSE(fs::exists(path));
  f.commit();
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(f.temp_path()));
}

TEST(AtomicFile, WriterExceptionKeepsOldContents) {
  ScratchDir dir;
  const std::string path = dir.file("keep.txt");
  io::write_file_atomic(path, std::string_view("old"));
  EXPECT_THROW(io::write_file_atomic(path,
                                     [](io::AtomicFile& f) {
                                       f.write(std::string_view("half-writ"));
                                       throw std::runtime_error("producer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read_bytes(path), "old");
  EXPECT_TRUE(other_entries(dir, "keep.txt").empty()) << "temporary file left behind";
}

TEST(AtomicFile, UncommittedIsDiscarded) {
  ScratchDir dir;
  const std::string path = dir.file("never");
  {
    io::AtomicFile f(path);
    f.write(std::string_view("lost"));
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(other_entries(dir, "").empty());
}

TEST(AtomicFile, MissingDirectoryNamesPathAndErrno) {
  ScratchDir dir;
  const std::string path = dir.file("no/such/dir/file.bin");
  EXPECT_TESSERA_ERROR(io::write_file_atomic(path, std::string_view("x")), path, "No such file or directory");
  EXPECT_TESSERA_ERROR(io::write_file_atomic("", std::string_view("x")), "empty path");
}

TEST(AtomicFile, RenameOntoDirectoryFailsCleanly) {
  ScratchDir dir;
  const std::string path = dir.file("target");
  fs::create_directory(path);
  fs::create_directory(path + "/inside");  // a non-empty directory cannot be replaced by a file
  EXPECT_TESSERA_ERROR(io::write_file_atomic(path, std::string_view("x")), path, "rename");
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_TRUE(other_entries(dir, "target").empty()) << "temporary file left behind";
}

TEST(AtomicFile, ParentIsAFile) {
  ScratchDir dir;
  write_bytes(dir.file("plain"), "x");
  EXPECT_TESSERA_ERROR(io::write_file_atomic(dir.file("plain/child"), std::string_view("x")), "plain/child",
                       "Not a directory");
  EXPECT_EQ(read_bytes(dir.file("plain")), "x");
}

TEST(AtomicFile, DoubleCommitIsAnError) {
  ScratchDir dir;
  io::AtomicFile f(dir.file("twice"));
  f.commit();
  EXPECT_TESSERA_ERROR(f.commit(), "already committed");
  EXPECT_TESSERA_ERROR(f.write(std::string_view("late")), "already committed");
  EXPECT_EQ(read_bytes(dir.file("twice")), "");
}

TEST(MappedFile, MapsContentsAndReportsErrors) {
  ScratchDir dir;
  write_bytes(dir.file("m"), std::string("hello\0world", 11));
  {
    io::MappedFile m(dir.file("m"));
    ASSERT_EQ(m.size(), 11u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(m.data()), m.size()), std::string("hello\0world", 11));
  }
  write_bytes(dir.file("empty"), "");
  io::MappedFile empty_map(dir.file("empty"));
  EXPECT_EQ(empty_map.size(), 0u);
  EXPECT_TESSERA_ERROR(io::MappedFile(dir.file("absent")), dir.file("absent"), "No such file or directory");
  EXPECT_TESSERA_ERROR(io::MappedFile(dir.path().string()), "not a regular file");
}

TEST(AtomicFile, PlantedSymlinksAtTheOldTemporaryNamesAreNotFollowed) {
  // Temporary names used to be predictable (OUT.tmp.PID, .OUT.tmp.PID): a symlink planted there made
  // the write land in the link's target.
  ScratchDir dir;
  const std::string victim = dir.file("victim.txt"), out = dir.file("out.gguf");
  write_bytes(victim, "precious");
  const std::string pid = std::to_string(::getpid());
  fs::create_symlink(victim, out + ".tmp." + pid);
  fs::create_symlink(victim, dir.file(".out.gguf.tmp." + pid));
  io::write_file_atomic(out, std::string_view("model bytes"));
  EXPECT_EQ(read_bytes(victim), "precious");
  EXPECT_EQ(read_bytes(out), "model bytes");
  EXPECT_FALSE(fs::is_symlink(out));
}

TEST(AtomicFile, FinalFileIsReadableByOthersButNotWritable) {
  ScratchDir dir;
  const mode_t old = ::umask(022);
  io::write_file_atomic(dir.file("m"), std::string_view("x"));
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("m").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(MappedFile, DevicesAndFifosAreRefusedWithoutReading) {
  // /dev/zero would map or read forever; opening a FIFO without a writer would block.
  EXPECT_TESSERA_ERROR(io::MappedFile("/dev/zero"), "/dev/zero", "a character device, not a regular file");
  ScratchDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TESSERA_ERROR(io::MappedFile{fifo}, fifo, "a FIFO, not a regular file");
  EXPECT_TESSERA_ERROR(io::MappedFile(dir.path().string()), "a directory, not a regular file");
}
