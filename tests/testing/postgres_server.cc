#include "tests/testing/postgres_server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "tests/testing/free_port.h"

namespace tunedb::testing_util {
namespace {

// Runs a shell command line; returns its exit status and output.
int Shell(const std::string& command, std::string* output) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  if (output != nullptr) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

}  // namespace

std::string PostgresServer::BinDir(std::string* why) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    std::string bin = entry.path().string() + "/bin";
    if (access((bin + "/initdb").c_str(), X_OK) == 0 &&
        access((bin + "/pg_ctl").c_str(), X_OK) == 0) {
      found.push_back(bin);
    }
  }
  if (found.empty()) {
    if (why != nullptr) {
      *why =
          "no PostgreSQL server programs (initdb, pg_ctl) under "
          "/usr/lib/postgresql/*/bin: install Debian's postgresql package "
          "(scripts/install-deps.sh)";
    }
    return "";
  }
  std::sort(found.begin(), found.end());
  return found.back();
}

PostgresServer::PostgresServer(const std::string& dir)
    : bin_(BinDir(nullptr)), dir_(dir + "/pg"), data_(dir_ + "/data") {}

PostgresServer::~PostgresServer() {
  if (running_) Stop("immediate");
}

int PostgresServer::RunAsOwner(const std::string& command,
                               std::string* output) const {
  if (getuid() != 0) return Shell(command, output);
  return Shell("setpriv --reuid=nobody --regid=nogroup --clear-groups " +
                   command,
               output);
}

bool PostgresServer::Template(std::string* data, std::string* error) const {
  // One initdb per user and PostgreSQL build, shared by the test programs
  // (each copies it): initdb is most of a server's start-up time.
  const std::string root = "/tmp/tunedb-pg-template-" +
                           std::to_string(getuid()) + "-" +
                           std::to_string(std::hash<std::string>()(bin_));
  *data = root + "/data";
  std::filesystem::create_directories(root);
  chmod(root.c_str(), 0755);
  const std::string lock_path = root + "/lock";
  int lock = open(lock_path.c_str(), O_CREAT | O_RDWR, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) {
    *error = "cannot lock " + lock_path;
    if (lock >= 0) close(lock);
    return false;
  }
  bool ok = true;
  if (access((*data + "/PG_VERSION").c_str(), F_OK) != 0) {
    const std::string work = root + "/work";
    std::string out;
    Shell("rm -rf " + Quote(work), &out);
    std::filesystem::create_directories(work);
    const std::string pwfile = work + "/pw";
    std::ofstream(pwfile) << kPassword << "\n";
    if (getuid() == 0) Shell("chown -R nobody:nogroup " + Quote(work), &out);
    int rc = RunAsOwner(bin_ + "/initdb --no-sync -A scram-sha-256 -U tunedb"
                               " --pwfile=" + Quote(pwfile) +
                            " -D " + Quote(work + "/data"),
                        &out);
    if (rc != 0) {
      *error = "initdb failed: " + out;
      ok = false;
    } else {
      // Complete only once renamed: a crashed initdb leaves no template.
      std::filesystem::rename(work + "/data", *data);
    }
  }
  flock(lock, LOCK_UN);
  close(lock);
  return ok;
}

bool PostgresServer::Start(std::string* error) {
  if (bin_.empty()) {
    BinDir(error);  // says what it looked for
    return false;
  }
  if (!initialized_) {
    std::filesystem::create_directories(dir_);
    // The folders above must let the server's user through.
    chmod(std::filesystem::path(dir_).parent_path().c_str(), 0755);
    chmod(dir_.c_str(), 0755);
    std::string template_data;
    if (!Template(&template_data, error)) return false;
    std::string out;
    // The server writes its log and socket here.
    if (getuid() == 0) Shell("chown nobody:nogroup " + Quote(dir_), &out);
    if (Shell("cp -a " + Quote(template_data) + " " + Quote(data_), &out) != 0) {
      *error = "copying the initdb template failed: " + out;
      return false;
    }
    initialized_ = true;
    port_ = FreeLoopbackPort();
  }
  std::string out;
  int rc = RunAsOwner(
      bin_ + "/pg_ctl -w -t 30 -D " + Quote(data_) + " -l " +
          Quote(dir_ + "/log") + " -o " +
          Quote("-p " + std::to_string(port_) + " -k " + dir_ +
                " -c listen_addresses=127.0.0.1 -c fsync=off"
                " -c max_connections=200") +
          " start",
      &out);
  if (rc != 0) {
    std::string log;
    Shell("tail -20 " + Quote(dir_ + "/log"), &log);
    *error = "pg_ctl start failed: " + out + "\n" + log;
    return false;
  }
  running_ = true;
  return true;
}

bool PostgresServer::Stop(const std::string& mode) {
  if (!running_) return true;
  std::string out;
  int rc = RunAsOwner(
      bin_ + "/pg_ctl -w -D " + Quote(data_) + " -m " + mode + " stop", &out);
  running_ = false;
  return rc == 0;
}

std::string PostgresServer::Url(const std::string& db,
                                const std::string& password) const {
  return "postgresql://tunedb:" + password + "@127.0.0.1:" +
         std::to_string(port_) + "/" + db;
}

std::string PostgresServer::CreateDatabase(const std::string& name) {
  Sql("postgres", "CREATE DATABASE " + name);
  return Url(name);
}

std::string PostgresServer::Sql(const std::string& db,
                                const std::string& sql) const {
  std::string out;
  int rc = Shell(bin_ + "/psql -X -q -t -A -v ON_ERROR_STOP=1 " +
                     Quote(Url(db)) + " -c " + Quote(sql),
                 &out);
  if (rc != 0 && out.rfind("ERROR", 0) != 0) out = "ERROR: " + out;
  return out;
}

}  // namespace tunedb::testing_util
