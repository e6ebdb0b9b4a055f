/*
 * The bad-input catalogue of test_bad_input.c through the C++ API: each case hands Riverlet one
 * bad value against a real embedded server and expects a riverlet::Error of the right kind whose
 * message names the bad value, never a crash. Built with ASan/UBSan/LSan by run.sh. The last
 * line is "c++ bad-input catalogue: N cases, N failed".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "check.hpp"

using riverlet::ArrayStream;
using riverlet::Connection;
using riverlet::ErrorKind;
using riverlet::LocalServer;
using riverlet::Options;
using riverlet::ReadOptions;
using riverlet::Schema;
using riverlet::SubscribeOptions;
using riverlet::Subscription;
using riverlet::Table;
using riverlet::TableOptions;
using riverlet::Writer;

static int cases = 0;

/* One case: `f` must throw riverlet::Error of kind `want` whose message contains `needle`. */
template <typename F>
static void bad_at(F &&f, ErrorKind want, const std::string &needle, const char *expr, int line) {
  cases++;
  if (!throws_at(f, want, __FILE__, line, expr)) return;
  if (last_msg.find(needle) == std::string::npos) {
    failed++;
    fprintf(stderr, "%s:%d: %s: the message '%s' does not name '%s'\n", __FILE__, line, expr,
            last_msg.c_str(), needle.c_str());
  }
}

#define BAD(expr, KIND, needle) \
  bad_at([&] { (void)(expr); }, ErrorKind::KIND, (needle), #expr, __LINE__)

static int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<struct sockaddr *>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<struct sockaddr *>(&addr), &len) != 0) {
    perror("closed_port");
    std::exit(1);
  }
  close(fd);
  return ntohs(addr.sin_port);
}

static Schema log_schema() { return make_schema({{"id", "l", true}, {"name", "u", true}}); }

static riverlet::Array log_batch() { return Batch(2, 2).i64({1, 2}).utf8({"a", "b"}).done(); }

static void connecting() {
  BAD(Connection::connect(""), InvalidArgument, "bootstrap");
  BAD(Connection::connect("localhost"), InvalidArgument, "localhost");
  BAD(Connection::connect("localhost:http"), InvalidArgument, "http");
  BAD(Connection::connect("localhost:70000"), InvalidArgument, "70000");
  BAD(Connection::connect("localhost:9123", {{"client.nonsense", "1"}}), InvalidArgument,
      "client.nonsense");
  BAD(Connection::connect("localhost:9123", {{"client.writer.acks", "maybe"}}), InvalidArgument,
      "maybe");
  BAD(Connection::connect("localhost:9123", {{"client.request-timeout", "soon"}}),
      InvalidArgument, "soon");
  BAD(Connection::connect("localhost:9123", {{"client.security.protocol", "KERBEROS"}}),
      InvalidArgument, "KERBEROS");
  /* nothing listens there: the first request fails (connecting may be lazy) */
  std::string dead = "127.0.0.1:" + std::to_string(closed_port());
  BAD(Connection::connect(dead).list_databases(), Network, dead.substr(10));
}

static void servers(const char *file) {
  BAD(LocalServer::start(std::string(file)), Io, file);
  BAD(LocalServer::start(std::nullopt, 0, {{"nonsense.option", "1"}}), InvalidArgument,
      "nonsense.option");
  BAD(LocalServer::start(std::nullopt, 0, {{"fsync", "sometimes"}}), InvalidArgument,
      "sometimes");
  LocalServer s = LocalServer::start(std::nullopt, 0, {{"sasl.user.alice", "secret"}});
  BAD(Connection::connect(s.bootstrap_servers(), {{"client.security.protocol", "SASL"},
                                                  {"client.security.sasl.username", "alice"},
                                                  {"client.security.sasl.password",
                                                   "wrong-password"}})
          .list_databases(),
      Authentication, "uthentication");
  if (last_msg.find("wrong-password") != std::string::npos) {
    failed++;
    fprintf(stderr, "the password is shown in an error: %s\n", last_msg.c_str());
  }
}

static void admin(const Connection &c) {
  Schema s = log_schema();
  BAD(c.create_database(""), InvalidArgument, "atabase");
  BAD(c.create_database("bad name"), InvalidArgument, "bad name");
  BAD(c.create_database("__internal"), InvalidArgument, "__internal");
  BAD(c.create_database("cat"), AlreadyExists, "cat");
  BAD(c.drop_database("nope_db"), NotFound, "nope_db");
  BAD(c.list_tables("nope_db"), NotFound, "nope_db");
  BAD(c.get_table("cat", "nope_table"), NotFound, "nope_table");
  BAD(c.get_table("nope_db", "t"), NotFound, "nope_db");
  {
    struct ArrowSchema raw;
    au_schema_init(&raw, 0);
    free(const_cast<char *>(raw.format));
    raw.format = au_strdup("l");
    Schema half(&raw);
    BAD(c.create_table("cat", "x", half), InvalidArgument, "+s");
  }
  BAD(c.create_table("cat", "x", make_schema({{"h", "e", true}})), Unsupported, "'h'");
  BAD(c.create_table("cat", "x", make_schema({{"a", "i", true}, {"a", "l", true}})),
      InvalidArgument, "a");
  BAD(c.create_table("cat", "a.b", s), InvalidArgument, "a.b");
  BAD(c.create_table("cat", "logs", s), AlreadyExists, "logs");
  TableOptions o;
  o.primary_key = {"nope"};
  BAD(c.create_table("cat", "x", s, o), InvalidArgument, "nope");
  o = TableOptions();
  o.partition_keys = {"nope"};
  BAD(c.create_table("cat", "x", s, o), InvalidArgument, "nope");
  o = TableOptions();
  o.bucket_keys = {"nope"};
  BAD(c.create_table("cat", "x", s, o), InvalidArgument, "nope");
  o = TableOptions();
  o.properties = {{"table.log.ttl", "forever"}};
  BAD(c.create_table("cat", "x", s, o), InvalidArgument, "forever");
  o = TableOptions();
  o.auto_increment_column = "nope";
  BAD(c.create_table("cat", "x", s, o), InvalidArgument, "primary-key");
  BAD(c.create_partition("cat", "parts", {{"nope", "1999-01-01"}}), InvalidArgument, "nope");
  BAD(c.drop_partition("cat", "parts", {{"dt", "1999-01-01"}}), NotFound, "1999-01-01");
  BAD(c.create_partition("cat", "logs", {{"dt", "1999-01-01"}}), InvalidArgument, "logs");
  BAD(c.list_offsets("cat", "logs", std::nullopt, {}, static_cast<riverlet::OffsetSpec>(9)),
      InvalidArgument, "9");
  BAD(c.list_offsets("cat", "logs", std::nullopt, {99}, riverlet::OffsetSpec::Latest),
      InvalidArgument, "99");
}

static void writes(const Table &logs, const Table &pk) {
  {
    Writer w = logs.new_append_writer();
    BAD(w.append(log_batch(), make_schema({{"zzz", "l", true}, {"name", "u", true}})),
        InvalidArgument, "zzz");
    BAD(w.append(Batch(2, 2).utf8({"one", "two"}).utf8({"a", "b"}).done(),
                 make_schema({{"id", "u", true}, {"name", "u", true}})),
        InvalidArgument, "id");
    /* a struct array whose children do not match its schema */
    BAD(w.append(Batch(2, 1).i64({1, 2}).done(), log_schema()), InvalidArgument, "2");
  }
  BAD(logs.new_upsert_writer(), InvalidArgument, "logs");
  BAD(pk.new_upsert_writer({"v"}), InvalidArgument, "k");
  BAD(pk.new_upsert_writer({"k", "nope"}), InvalidArgument, "nope");
  BAD(pk.new_append_writer(), InvalidArgument, "pk");
  {
    Writer w = pk.new_upsert_writer();
    BAD(w.upsert(Batch(1, 2).i32({0}, {false}).utf8({"x"}).done(),
                 make_schema({{"k", "i", true}, {"v", "u", true}})),
        InvalidArgument, "k");
  }
  BAD(logs.delete_where("id = 1"), Unsupported, "logs");
  BAD(pk.update_where("k = 1", "k = 2"), Unsupported, "k");
  BAD(pk.update_where("k = 1", "nope = 2"), InvalidArgument, "nope");
  BAD(pk.update_where("k = 1", "v = "), InvalidArgument, "v =");
}

static void reads(const Table &logs, const Table &pk, const Table &parts) {
  ReadOptions o;
  o.columns = {"nope"};
  BAD(logs.read(o), InvalidArgument, "nope");
  o = ReadOptions();
  o.filter = "nope = 1";
  BAD(logs.read(o), InvalidArgument, "nope");
  o.filter = "id >";
  BAD(logs.read(o), InvalidArgument, "id >");
  o.filter = "id ~~ 3";
  BAD(logs.read(o), InvalidArgument, "~~");
  o.filter = "id = 'abc'";
  BAD(logs.read(o), InvalidArgument, "abc");
  o.filter = "name = 'unclosed";
  BAD(logs.read(o), InvalidArgument, "unclosed");
  o.filter = std::string(20000, '(') + "id = 1" + std::string(20000, ')');
  BAD(logs.read(o), InvalidArgument, "deep");
  std::string nots;
  for (int i = 0; i < 20000; i++) nots += "NOT ";
  o.filter = nots + "id = 1";
  BAD(logs.read(o), InvalidArgument, "deep");
  o = ReadOptions();
  o.partitions = {"1999-01-01"};
  BAD(parts.read(o), NotFound, "1999-01-01");
  BAD(logs.read(o), InvalidArgument, "logs");
  o = ReadOptions();
  o.buckets = {99};
  BAD(logs.read(o), InvalidArgument, "99");
  o.buckets = {-1};
  BAD(logs.read(o), InvalidArgument, "-1");
  BAD(logs.read_between("garbage-time"), InvalidArgument, "garbage-time");
  BAD(logs.read_between("2024-01-02 00:00:00", std::string("2024-01-01 00:00:00")),
      InvalidArgument, "2024-01-02");
  BAD(logs.read_between("2024-02-30 00:00:00"), InvalidArgument, "2024-02-30");
  BAD(logs.read_between(""), InvalidArgument, "start");
  o = ReadOptions();
  o.time_zone = "Mars/Olympus_Mons";
  BAD(logs.read_between("2024-01-01 00:00:00", std::nullopt, o), InvalidArgument,
      "Mars/Olympus_Mons");
  BAD(logs.read_between_ms(2000, 1000), InvalidArgument, "2000");
  o = ReadOptions();
  o.read_optimized = true;
  BAD(pk.read_between_ms(0, std::nullopt, o), InvalidArgument, "read");
  BAD(logs.lookup(Batch(1, 1).i64({1}).done(), make_schema({{"id", "l", true}})), InvalidArgument,
      "logs");
  BAD(pk.lookup(Batch(1, 1).i32({1}).done(), make_schema({{"nope", "i", true}})), InvalidArgument,
      "'k'");
  BAD(pk.lookup(Batch(1, 1).i32({0}, {false}).done(), make_schema({{"k", "i", true}})),
      InvalidArgument, "k");
  BAD(logs.prefix_lookup(Batch(1, 1).i32({1}).done(), make_schema({{"k", "i", true}})),
      InvalidArgument, "logs");
}

static void subscriptions(const Table &logs) {
  SubscribeOptions o;
  o.startup_mode = "sometimes";
  BAD(logs.subscribe(o), InvalidArgument, "sometimes");
  o.startup_mode = "timestamp";
  BAD(logs.subscribe(o), InvalidArgument, "timestamp");
  o.startup_timestamp = "not-a-time";
  BAD(logs.subscribe(o), InvalidArgument, "not-a-time");
  o = SubscribeOptions();
  riverlet::BucketOffset off;
  off.bucket = 42;
  o.start_offsets = {off};
  BAD(logs.subscribe(o), InvalidArgument, "42");
  o = SubscribeOptions();
  o.startup_mode = "earliest";
  Subscription sub = logs.subscribe(o);
  BAD(sub.poll(-5), InvalidArgument, "-5");
  RiverletSubscription *raw = sub.native();
  sub.close();
  Subscription stale(raw);
  BAD(stale.poll(10), Closed, "freed");
  BAD(stale.close(), Closed, "freed");
  BAD(sub.poll(10), Closed, "Subscription");
}

static void closed_handles(const std::string &bootstrap) {
  Connection c = Connection::connect(bootstrap);
  Table t = c.get_table("cat", "logs");
  RiverletConnection *raw = c.native();
  c.close();
  BAD(t.read(), Closed, "closed");
  Connection stale(raw);
  BAD(stale.list_databases(), Closed, "freed");
  BAD(stale.close(), Closed, "freed");
  BAD(c.list_databases(), Closed, "Connection");
  RiverletTable *raw_t = t.native();
  t.close();
  Table stale_t(raw_t);
  BAD(stale_t.close(), Closed, "freed");
}

int main() {
  char file[] = "/tmp/riverlet-cpp-bad-input-XXXXXX";
  int fd = mkstemp(file);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  close(fd);
  try {
    LocalServer server = LocalServer::start();
    std::string bootstrap = server.bootstrap_servers();
    Connection c = Connection::connect(bootstrap);
    c.create_database("cat");
    c.create_table("cat", "logs", log_schema());
    TableOptions o;
    o.primary_key = {"k"};
    c.create_table("cat", "pk", make_schema({{"k", "i", false}, {"v", "u", true}}), o);
    o = TableOptions();
    o.partition_keys = {"dt"};
    c.create_table("cat", "parts", make_schema({{"id", "l", true}, {"dt", "u", true}}), o);
    Table logs = c.get_table("cat", "logs");
    Table pk = c.get_table("cat", "pk");
    Table parts = c.get_table("cat", "parts");
    {
      Writer w = logs.new_append_writer();
      w.append(log_batch(), log_schema());
      w.close();
    }
    RUN(connecting());
    RUN(servers(file));
    RUN(admin(c));
    RUN(writes(logs, pk));
    RUN(reads(logs, pk, parts));
    RUN(subscriptions(logs));
    RUN(closed_handles(bootstrap));
  } catch (const riverlet::Error &e) {
    fprintf(stderr, "setup failed: %s: %s\n", e.kind_name(), e.what());
    failed++;
  }
  unlink(file);
  if (riverlet::live_handles() != 0) {
    failed++;
    fprintf(stderr, "%zu handles left\n", riverlet::live_handles());
  }
  printf("c++ bad-input catalogue: %d cases, %d failed\n", cases, failed);
  if (cases < 50) {
    fprintf(stderr, "the catalogue must hold at least 50 cases\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}
