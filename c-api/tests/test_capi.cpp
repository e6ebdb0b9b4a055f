/*
 * C++ tests of riverlet.hpp, the scenarios of test_capi.c through the C++ API: RAII handles,
 * streams, and every failure a riverlet::Error of the C API's kind. Built with g++ -std=c++17
 * -fsanitize=address,undefined by tests/run.sh and run with LeakSanitizer on, against embedded
 * servers. The last line is "c++ api: N passed, N failed".
 */
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "check.hpp"

using riverlet::Array;
using riverlet::ArrayStream;
using riverlet::Connection;
using riverlet::ErrorKind;
using riverlet::LocalServer;
using riverlet::ReadOptions;
using riverlet::Schema;
using riverlet::Table;
using riverlet::TableOptions;
using riverlet::Writer;

static int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

static void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

/* events(id BIGINT NOT NULL, name STRING, score INT) */
static Schema events_schema() {
  return make_schema({{"id", "l", false}, {"name", "u", true}, {"score", "i", true}});
}

static Array events_batch(int64_t first_id, int64_t rows) {
  static const char *pool[] = {"ann", "bob", "cy", "dee", nullptr, "eve", "fay", "gus"};
  std::vector<int64_t> ids;
  std::vector<int32_t> scores;
  std::vector<const char *> names;
  for (int64_t i = 0; i < rows; i++) {
    ids.push_back(first_id + i);
    scores.push_back(static_cast<int32_t>(10 * (first_id + i)));
    names.push_back(pool[(first_id + i) % 8]);
  }
  return Batch(rows, 3).i64(ids).utf8(names).i32(scores).done();
}

/* Handles and Arrow owners have one owner: move-only, moves and destructors never throw. */
template <typename T>
constexpr bool one_owner() {
  return !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
         std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T> &&
         std::is_nothrow_destructible_v<T>;
}
static_assert(one_owner<LocalServer>() && one_owner<Connection>() && one_owner<Table>() &&
              one_owner<Writer>() && one_owner<riverlet::Subscription>());
static_assert(one_owner<Schema>() && one_owner<Array>() && one_owner<ArrayStream>());
static_assert(std::is_base_of_v<std::runtime_error, riverlet::Error>);

static LocalServer g_server;
static std::string g_bootstrap;

static void test_status_codes() {
  CHECK(static_cast<int32_t>(ErrorKind::Ok) == 0 && static_cast<int32_t>(ErrorKind::NotFound) == 1 &&
        static_cast<int32_t>(ErrorKind::Internal) == 12 &&
        static_cast<int32_t>(ErrorKind::NullArgument) == 100 &&
        static_cast<int32_t>(ErrorKind::Panic) == 101);
  CHECK(std::string(riverlet::kind_name(ErrorKind::Closed)) == "CLOSED");
  CHECK(std::string(riverlet::kind_name(static_cast<ErrorKind>(12345))) == "UNKNOWN");
  CHECK(std::string(riverlet::fluss_code_name(12)) == "NOT_LEADER_OR_FOLLOWER");
  CHECK(std::strlen(riverlet::version()) > 0);
  riverlet::Error e(ErrorKind::Network, "boom", 0);
  CHECK(e.retriable() && e.status() == 6 && std::string(e.what()) == "boom");
  CHECK(!riverlet::Error(ErrorKind::NotFound, "x").retriable());
  /* the stream error text names the kind */
  CHECK(riverlet::detail::stream_error_kind("riverlet not_found: x") == ErrorKind::NotFound);
  CHECK(riverlet::detail::stream_error_kind("riverlet network: x") == ErrorKind::Network);
  CHECK(riverlet::detail::stream_error_kind("riverlet arrow: x") == ErrorKind::Internal);
  CHECK(riverlet::detail::stream_error_kind(nullptr) == ErrorKind::Internal);
}

/* The C test's NULL arguments: in C++ an empty (default, moved-from, closed) object throws
 * Closed, and a batch handed to an empty writer is still consumed. */
static void test_empty_objects() {
  Connection conn;
  Table table;
  Writer writer;
  LocalServer server;
  riverlet::Subscription sub;
  CHECK(!conn && !table && !writer && !server && !sub);
  THROWS(conn.list_databases(), Closed);
  MSG_HAS("Connection");
  THROWS(conn.get_table("db", "t"), Closed);
  THROWS(table.read(), Closed);
  THROWS(table.schema(), Closed);
  THROWS(server.bootstrap_servers(), Closed);
  THROWS(sub.poll(0), Closed);
  Schema schema = events_schema();
  Array batch = events_batch(0, 2);
  THROWS(writer.append(std::move(batch), schema), Closed);
  CHECK(!batch.valid());
  THROWS(table.lookup(events_batch(0, 1), schema), Closed);
  /* closing an empty object is a no-op; an empty stream throws Closed */
  OK(conn.close());
  OK(writer.close());
  ArrayStream empty;
  THROWS(empty.next(), Closed);
  CHECK(empty.last_error() == nullptr);
}

static void test_foreign_handles() {
  /* values that were never handles are reported, not dereferenced; the destructor's free of
   * them fails quietly */
  Connection fake_conn(reinterpret_cast<RiverletConnection *>(static_cast<uintptr_t>(0x1000)));
  Table fake_table(reinterpret_cast<RiverletTable *>(static_cast<uintptr_t>(0x7fff0)));
  THROWS(fake_conn.database_exists("db"), InvalidArgument);
  MSG_HAS("connection");
  THROWS(fake_table.has_primary_key(), InvalidArgument);
  THROWS(fake_conn.close(), InvalidArgument);
}

static void test_server_and_connect() {
  THROWS(LocalServer::start(std::nullopt, 0, {{"fsync", "sometimes"}}), InvalidArgument);
  MSG_HAS("sometimes");
  if (!OK(g_server = LocalServer::start())) return;
  OK(g_bootstrap = g_server.bootstrap_servers());
  CHECK(g_bootstrap.rfind("127.0.0.1:", 0) == 0);

  THROWS(Connection::connect(g_bootstrap, {{"client.no-such-option", "1"}}), InvalidArgument);
  MSG_HAS("client.no-such-option");
  THROWS(Connection::connect("no-port"), InvalidArgument);

  Connection conn;
  OK(conn = Connection::connect(g_bootstrap));
  CHECK(static_cast<bool>(conn));
  /* moving leaves one owner */
  Connection moved = std::move(conn);
  CHECK(!conn && moved);
  OK(CHECK(moved.database_exists("fluss")));
  /* use after free through the raw handle: the C API's CLOSED */
  RiverletConnection *raw = moved.native();
  OK(moved.close());
  CHECK(!moved);
  Connection stale(raw);
  THROWS(stale.database_exists("fluss"), Closed);
  MSG_HAS("freed");
  THROWS(stale.close(), Closed);
}

static void test_sasl() {
  LocalServer server;
  if (!OK(server = LocalServer::start(std::nullopt, 0,
                                      {{"sasl.user.alice", "secret"}, {"fsync", "never"}})))
    return;
  std::string bootstrap = server.bootstrap_servers();
  THROWS(Connection::connect(bootstrap, {{"client.security.protocol", "SASL"},
                                         {"client.security.sasl.username", "alice"},
                                         {"client.security.sasl.password", "wrong"}}),
         Authentication);
  {
    Connection conn;
    OK(conn = Connection::connect(bootstrap, {{"client.security.protocol", "SASL"},
                                              {"client.security.sasl.username", "alice"},
                                              {"client.security.sasl.password", "secret"}}));
    OK(conn.database_exists("fluss"));
  }
  OK(server.stop());
  THROWS(server.stop(), Closed);
  THROWS(server.bootstrap_servers(), Closed);
  OK(server.close());
}

static void test_admin(const Connection &conn) {
  OK(conn.create_database("capi"));
  THROWS(conn.create_database("capi"), AlreadyExists);
  OK(conn.create_database("capi", true));
  OK(CHECK(conn.database_exists("capi")));
  /* an error the server answered carries its Fluss error code (Fluss's Errors: 6 is
   * DATABASE_ALREADY_EXIST, 7 TABLE_NOT_EXIST); one found client-side carries none */
  {
    auto e = caught([&] { conn.create_database("capi"); });
    CHECK(e && e->kind() == ErrorKind::AlreadyExists && e->fluss_code() == 6 &&
          std::string(e->fluss_code_name()) == "DATABASE_ALREADY_EXIST");
    e = caught([&] { conn.get_table("capi", "no_such_table"); });
    CHECK(e && e->kind() == ErrorKind::NotFound && e->fluss_code() == 7 &&
          std::string(e->fluss_code_name()) == "TABLE_NOT_EXIST");
    e = caught([&] { conn.create_database("bad name"); });
    CHECK(e && e->kind() == ErrorKind::InvalidArgument);
    e = caught([&] { Connection::connect("no-port"); });
    CHECK(e && e->kind() == ErrorKind::InvalidArgument && e->fluss_code() == 0);
  }
  OK(CHECK(!conn.database_exists("no_such_db")));
  OK(CHECK(has(stream_text(conn.list_databases()), "database_name='capi'")));

  Schema schema = events_schema();
  OK(conn.create_table("capi", "events", schema));
  CHECK(schema.valid()); /* borrowed, not released */
  THROWS(conn.create_table("capi", "events", schema), AlreadyExists);
  OK(conn.create_table("capi", "events", schema, {}, true));
  THROWS(conn.create_table("no_such_db", "events", schema), NotFound);

  TableOptions opts;
  opts.primary_key = {"nope"};
  THROWS(conn.create_table("capi", "bad1", schema, opts), InvalidArgument);
  MSG_HAS("nope");
  {
    struct ArrowSchema raw;
    au_schema_init(&raw, 0);
    free(const_cast<char *>(raw.format));
    raw.format = au_strdup("l");
    Schema not_struct(&raw);
    THROWS(conn.create_table("capi", "bad2", not_struct), InvalidArgument);
    MSG_HAS("struct");
  }
  THROWS(conn.create_table("capi", "bad3", make_schema({{"id", "l", false}, {"d", "tDs", true}})),
         Unsupported);
  MSG_HAS("'d'");
  THROWS(conn.create_table("capi", "bad4", make_schema({{"x", "?!", true}})), InvalidArgument);
  {
    Schema released; /* an empty wrapper holds a released schema */
    THROWS(conn.create_table("capi", "bad5", released), InvalidArgument);
    MSG_HAS("released");
  }
  OK(CHECK(conn.table_exists("capi", "events")));
  OK(CHECK(!conn.table_exists("capi", "bad1")));
  THROWS(conn.get_table("capi", "no_such_table"), NotFound);
  THROWS(conn.drop_table("capi", "no_such_table"), NotFound);
  OK(conn.drop_table("capi", "no_such_table", true));
  OK(CHECK(stream_text(conn.list_tables("capi")) == "{table_name='events'}\n"));
}

static void test_log_table(const Connection &conn) {
  Table table;
  if (!OK(table = conn.get_table("capi", "events"))) return;
  OK(CHECK(!table.has_primary_key()));
  {
    Schema s = table.schema();
    CHECK(std::strcmp(s->format, "+s") == 0 && s->n_children == 3);
    CHECK(std::strcmp(s->children[0]->name, "id") == 0 &&
          std::strcmp(s->children[0]->format, "l") == 0);
    CHECK(std::strcmp(s->children[1]->format, "u") == 0);
  }
  Writer writer;
  OK(writer = table.new_append_writer());
  Schema schema = events_schema();
  OK(writer.append(events_batch(1, 3), schema));
  OK(writer.flush());

  /* upsert into a log table is refused; the batch is consumed */
  {
    Array batch = events_batch(9, 1);
    THROWS(writer.upsert(std::move(batch), schema), InvalidArgument);
    CHECK(!batch.valid());
  }
  /* a batch whose columns do not match the table */
  THROWS(writer.append(Batch(1, 1).i64({1}).done(), make_schema({{"unrelated", "l", false}})),
         InvalidArgument);
  /* an array that was already released */
  THROWS(writer.append(Array(), schema), InvalidArgument);

  sleep_ms(30);
  int64_t t_mid = now_ms();
  sleep_ms(30);
  OK(writer.append(events_batch(4, 2), schema));
  OK(writer.flush());
  OK(writer.close());
  CHECK(!writer);

  std::string text;
  OK(text = stream_text(table.read()));
  CHECK(text ==
        "{id=1, name='bob', score=10}\n"
        "{id=2, name='cy', score=20}\n"
        "{id=3, name='dee', score=30}\n"
        "{id=4, name=null, score=40}\n"
        "{id=5, name='eve', score=50}\n");
  ReadOptions opts;
  opts.columns = {"name", "id"};
  opts.filter = "score >= 20 AND name IS NOT NULL";
  OK(text = stream_text(table.read(opts)));
  CHECK(text ==
        "{name='cy', id=2}\n"
        "{name='dee', id=3}\n"
        "{name='eve', id=5}\n");
  ReadOptions limit;
  limit.limit = 2;
  OK(CHECK(table.read(limit).count_rows() == 2));

  /* bad reads fail before any stream is made */
  ReadOptions bad;
  bad.filter = "score >>> 3";
  THROWS(table.read(bad), InvalidArgument);
  bad.filter = "no_such_column = 1";
  THROWS(table.read(bad), InvalidArgument);
  MSG_HAS("no_such_column");
  ReadOptions bad_cols;
  bad_cols.columns = {"nope"};
  THROWS(table.read(bad_cols), InvalidArgument);
  MSG_HAS("nope");

  /* time-range reads */
  OK(text = stream_text(table.read_between_ms(t_mid)));
  CHECK(text ==
        "{id=4, name=null, score=40}\n"
        "{id=5, name='eve', score=50}\n");
  OK(CHECK(table.read_between_ms(0, t_mid).count_rows() == 3));
  ReadOptions utc;
  utc.time_zone = "UTC";
  OK(CHECK(table.read_between("1970-01-01 00:00:00", std::nullopt, utc).count_rows() == 5));
  utc.time_zone = "+08:00";
  OK(CHECK(table.read_between("1970-01-01 08:00:00", std::nullopt, utc).count_rows() == 5));
  OK(CHECK(table.read_between(std::to_string(t_mid)).count_rows() == 2));
  THROWS(table.read_between("yesterday-ish"), InvalidArgument);
  MSG_HAS("yesterday-ish");
  THROWS(table.read_between(""), InvalidArgument);
  THROWS(table.read_between("2024-01-02", std::string("2024-01-01")), InvalidArgument);
  THROWS(table.read_between_ms(10, 5), InvalidArgument);
  utc.time_zone = "Mars/Olympus_Mons";
  THROWS(table.read_between("2024-01-01", std::nullopt, utc), InvalidArgument);

  /* use after free of a table, through its raw handle */
  RiverletTable *raw = table.native();
  OK(table.close());
  THROWS(table.read(), Closed);
  Table stale(raw);
  THROWS(stale.read(), Closed);
  THROWS(stale.close(), Closed);
}

/* kv(k INT NOT NULL, v STRING, n BIGINT), primary key k */
static Schema kv_schema() {
  return make_schema({{"k", "i", false}, {"v", "u", true}, {"n", "l", true}});
}

static Array kv_batch(const std::vector<int32_t> &k, const std::vector<const char *> &v,
                      const std::vector<int64_t> &n) {
  return Batch(static_cast<int64_t>(k.size()), 3).i32(k).utf8(v).i64(n).done();
}

static void test_pk_table(const Connection &conn) {
  Schema schema = kv_schema();
  TableOptions opts;
  opts.primary_key = {"k"};
  opts.bucket_count = 2;
  opts.properties = {{"table.replication.factor", "1"}};
  opts.comment = "a primary-key table";
  OK(conn.create_table("capi", "kv", schema, opts));
  Table table;
  if (!OK(table = conn.get_table("capi", "kv"))) return;
  OK(CHECK(table.has_primary_key()));
  THROWS(table.new_append_writer(), InvalidArgument);

  Writer writer;
  OK(writer = table.new_upsert_writer());
  OK(writer.upsert(kv_batch({1, 2, 3}, {"one", "two", "three"}, {100, 200, 300}), schema));
  THROWS(writer.append(kv_batch({}, {}, {}), schema), InvalidArgument);
  OK(writer.flush());
  {
    Writer partial;
    OK(partial = table.new_upsert_writer({"k", "n"}));
    OK(partial.upsert(kv_batch({2}, {"ignored"}, {222}), schema));
    OK(partial.close());
  }
  THROWS(table.new_upsert_writer({"table.replication.factor"}), InvalidArgument);

  Schema key_schema = make_schema({{"k", "i", false}});
  OK(writer.delete_rows(Batch(1, 1).i32({3}).done(), key_schema));
  OK(writer.flush());
  std::string text;
  OK(text = stream_text(table.read()));
  CHECK(text ==
        "{k=1, v='one', n=100}\n"
        "{k=2, v='two', n=222}\n");

  /* read-optimized: each bucket's KV snapshot without the log after it */
  ReadOptions ro;
  ro.read_optimized = true;
  OK(CHECK(stream_text(table.read(ro)).empty()));
  OK(g_server.take_kv_snapshots());
  OK(writer.upsert(kv_batch({4}, {"four"}, {400}), schema));
  OK(writer.flush());
  OK(text = stream_text(table.read(ro)));
  CHECK(text ==
        "{k=1, v='one', n=100}\n"
        "{k=2, v='two', n=222}\n");
  OK(CHECK(has(stream_text(table.read()), "{k=4, v='four', n=400}")));

  /* point lookups: found and missing keys */
  OK(text = stream_text(table.lookup(Batch(3, 1).i32({2, 3, 1}).done(), key_schema)));
  CHECK(text ==
        "{k=1, v='one', n=100}\n"
        "{k=2, v='two', n=222}\n");
  THROWS(table.lookup(Batch(1, 1).i64({1}).done(), make_schema({{"v", "l", false}})),
         InvalidArgument);

  /* use after free of a writer, through its raw handle */
  RiverletWriter *raw = writer.native();
  OK(writer.close());
  Writer stale(raw);
  THROWS(stale.delete_rows(Batch(1, 1).i32({9}).done(), key_schema), Closed);
  THROWS(stale.flush(), Closed);
  THROWS(stale.close(), Closed);
}

static void test_add_columns(const Connection &conn) {
  OK(conn.add_columns("capi", "kv", make_schema({{"note", "u", true}})));
  THROWS(conn.add_columns("capi", "kv", make_schema({{"m", "l", false}})), InvalidArgument);
  std::string text;
  OK(text = stream_text(conn.get_table("capi", "kv").read()));
  CHECK(text ==
        "{k=1, v='one', n=100, note=null}\n"
        "{k=2, v='two', n=222, note=null}\n"
        "{k=4, v='four', n=400, note=null}\n");
}

static void test_delete_update_where(const Connection &conn) {
  Schema schema = kv_schema();
  TableOptions opts;
  opts.primary_key = {"k"};
  opts.bucket_count = 2;
  OK(conn.create_table("capi", "kv2", schema, opts));
  Table table;
  if (!OK(table = conn.get_table("capi", "kv2"))) return;
  {
    Writer w = table.new_upsert_writer();
    OK(w.upsert(kv_batch({1, 2, 3, 4}, {"one", "two", "three", "four"}, {100, 200, 300, 400}),
                schema));
    OK(w.close());
  }
  OK(CHECK(table.delete_where("k = 1") == 1));
  OK(CHECK(table.delete_where("k = 1") == 0));
  OK(CHECK(table.update_where("n >= 300", "v = 'big', n = 0") == 2));
  OK(CHECK(table.delete_where("v LIKE 't%'") == 1));
  OK(CHECK(stream_text(table.read()) ==
           "{k=3, v='big', n=0}\n"
           "{k=4, v='big', n=0}\n"));
  THROWS(table.update_where("n = 0", "k = 5"), Unsupported);
  MSG_HAS("column 'k'");
  THROWS(table.update_where("n = 0", "n = 'many'"), InvalidArgument);
  MSG_HAS("'many'");
  THROWS(table.update_where("n = 0", "n 1"), InvalidArgument);
  MSG_HAS("expected '='");
  THROWS(table.delete_where("nope = 1"), InvalidArgument);
  MSG_HAS("nope");
  THROWS(conn.get_table("capi", "events").delete_where("id = 1"), Unsupported);
  MSG_HAS("Log Table");
  OK(CHECK(table.read().count_rows() == 2));
}

static void test_auto_increment(const Connection &conn) {
  Schema schema = make_schema({{"name", "u", false}, {"id", "l", true}, {"note", "u", true}});
  TableOptions opts;
  opts.primary_key = {"name"};
  opts.bucket_count = 1;
  opts.auto_increment_column = "id";
  OK(conn.create_table("capi", "dict", schema, opts));
  Table table;
  if (!OK(table = conn.get_table("capi", "dict"))) return;
  {
    Writer w = table.new_upsert_writer({"name", "note"});
    OK(w.upsert(Batch(2, 2).utf8({"a", "b"}).utf8({"first", "second"}).done(),
                make_schema({{"name", "u", false}, {"note", "u", true}})));
    OK(w.close());
  }
  /* a full-row writer is refused by the server, at flush (or at the write) */
  {
    Writer w = table.new_upsert_writer();
    bool thrown = false;
    try {
      w.upsert(Batch(1, 3).utf8({"x"}).i64({99}).utf8({"n"}).done(), schema);
      w.flush();
    } catch (const riverlet::Error &e) {
      thrown = true;
      last_msg = e.what();
      CHECK(e.kind() == ErrorKind::InvalidArgument);
    }
    CHECK(thrown);
    MSG_HAS("auto-increment column [id]");
    /* the destructor frees the writer without throwing */
  }
  std::string text;
  OK(text = stream_text(table.lookup_or_insert(Batch(2, 1).utf8({"c", "a"}).done(),
                                               make_schema({{"name", "u", false}}))));
  CHECK(text ==
        "{name='a', id=1, note='first'}\n"
        "{name='c', id=3, note=null}\n");
  OK(CHECK(table.read().count_rows() == 3));
}

static void test_bucket_leaders(const Connection &conn) {
  TableOptions opts;
  opts.bucket_count = 3;
  OK(conn.create_table("capi", "leaders", events_schema(), opts));
  Table table;
  if (!OK(table = conn.get_table("capi", "leaders"))) return;
  std::string text;
  OK(text = stream_text(table.bucket_leaders()));
  for (int b = 0; b < 3; b++) {
    std::string want = "{partition_id=null, partition_name=null, bucket=" + std::to_string(b) +
                       ", leader_id=0, leader_address='" + g_bootstrap + "'}\n";
    CHECK(has(text, want.c_str()));
  }
  CHECK(!has(text, "bucket=3"));
  OK(conn.drop_table("capi", "leaders"));
  THROWS(table.bucket_leaders(), NotFound);
  MSG_HAS("leaders");
  OK(table.close());
  THROWS(table.bucket_leaders(), Closed);

  /* a partitioned table: no partition, no row; then two partitions of 2 buckets each */
  TableOptions popts;
  popts.partition_keys = {"day"};
  popts.bucket_count = 2;
  OK(conn.create_table("capi", "leaders_by_day", make_schema({{"id", "l", false}, {"day", "u", false}}),
                       popts));
  if (!OK(table = conn.get_table("capi", "leaders_by_day"))) return;
  OK(CHECK(table.bucket_leaders().count_rows() == 0));
  OK(conn.create_partition("capi", "leaders_by_day", {{"day", "2026-01-02"}}));
  OK(conn.create_partition("capi", "leaders_by_day", {{"day", "2026-01-01"}}));
  OK(text = stream_text(table.bucket_leaders()));
  for (const char *day : {"2026-01-01", "2026-01-02"}) {
    for (int b = 0; b < 2; b++) {
      std::string want = std::string("partition_name='") + day + "', bucket=" + std::to_string(b) +
                         ", leader_id=0, leader_address='" + g_bootstrap + "'}\n";
      CHECK(has(text, want.c_str()));
    }
  }
  CHECK(!has(text, "partition_id=null"));
  /* rows come partition by partition (by name), buckets in order */
  try {
    ArrayStream s = table.bucket_leaders();
    Schema schema = s.schema();
    CHECK(schema->n_children == 5 && std::strcmp(schema->children[2]->name, "bucket") == 0);
    auto batch = s.next();
    CHECK(batch.has_value());
    if (batch && (*batch)->length == 4) {
      const int32_t *buckets = static_cast<const int32_t *>((*batch)->children[2]->buffers[1]);
      const int32_t *off = static_cast<const int32_t *>((*batch)->children[1]->buffers[1]);
      const char *names = static_cast<const char *>((*batch)->children[1]->buffers[2]);
      CHECK(buckets[0] == 0 && buckets[1] == 1 && buckets[2] == 0 && buckets[3] == 1);
      CHECK(off[1] - off[0] == 10 && std::memcmp(names + off[0], "2026-01-01", 10) == 0 &&
            std::memcmp(names + off[2], "2026-01-02", 10) == 0);
    } else {
      CHECK(false);
    }
  } catch (const riverlet::Error &e) {
    failed++;
    fprintf(stderr, "bucket_leaders stream: %s\n", e.what());
  }
}

static void test_statistics_pushdown(const Connection &conn) {
  TableOptions opts;
  opts.bucket_count = 1;
  opts.properties = {{"table.statistics.columns", "id"}};
  Schema schema = events_schema();
  OK(conn.create_table("capi", "stats", schema, opts));
  Table table;
  if (!OK(table = conn.get_table("capi", "stats"))) return;
  {
    Writer w = table.new_append_writer();
    for (int batch = 0; batch < 5; batch++) {
      OK(w.append(events_batch(1 + 3 * batch, 3), schema));
      OK(w.flush());
    }
    OK(w.close());
  }
  ReadOptions ro;
  ro.filter = "id >= 13";
  OK(CHECK(stream_text(table.read(ro)) ==
           "{id=13, name='eve', score=130}\n"
           "{id=14, name='fay', score=140}\n"
           "{id=15, name='gus', score=150}\n"));
  std::string text;
  OK(text = stream_text(riverlet::metrics()));
  const char *row =
      "name='riverlet_client_scan_skipped_batches_total', labels='table=capi.stats', value=";
  size_t at = text.find(row);
  CHECK(at != std::string::npos);
  if (at != std::string::npos) CHECK(std::strtod(text.c_str() + at + std::strlen(row), nullptr) == 4.0);
}

static void test_closed_connection() {
  Connection conn;
  if (!OK(conn = Connection::connect(g_bootstrap))) return;
  Table table = conn.get_table("capi", "events");
  Writer writer = table.new_append_writer();
  ArrayStream open_stream;
  OK(open_stream = table.read());
  OK(conn.close());
  THROWS(table.read(), Closed);
  THROWS((writer.append(events_batch(100, 1), events_schema()), writer.flush()), Closed);
  /* a stream opened before the connection closed either finishes or throws Closed */
  try {
    open_stream.count_rows();
  } catch (const riverlet::Error &e) {
    CHECK(e.kind() == ErrorKind::Closed);
    CHECK(has(e.what(), "riverlet closed: "));
  }
  /* the writer's destructor reports nothing; the table closes fine */
  OK(table.close());
}

static void test_stream_error() {
  LocalServer server;
  if (!OK(server = LocalServer::start())) return;
  Connection conn = Connection::connect(server.bootstrap_servers(),
                                        {{"client.request-timeout", "2 s"}, {"client.retries", "0"}});
  OK(conn.create_database("s"));
  TableOptions opts;
  opts.bucket_count = 4;
  opts.bucket_keys = {"id"};
  Schema schema = events_schema();
  OK(conn.create_table("s", "t", schema, opts));
  Table table = conn.get_table("s", "t");
  {
    Writer w = table.new_append_writer();
    bool all_ok = true;
    std::vector<const char *> names(500, "a somewhat longer name so that batches have some weight");
    for (int bucket = 0; bucket < 32; bucket++) {
      std::vector<int64_t> ids;
      std::vector<int32_t> scores;
      for (int64_t i = 0; i < 500; i++) {
        ids.push_back(bucket * 500 + i);
        scores.push_back(static_cast<int32_t>(i));
      }
      try {
        w.append(Batch(500, 3).i64(ids).utf8(names).i32(scores).done(), schema);
        w.flush();
      } catch (const riverlet::Error &) {
        all_ok = false;
      }
    }
    CHECK(all_ok);
    OK(w.close());
  }
  ArrayStream stream;
  if (!OK(stream = table.read())) return;
  OK(server.stop());
  try {
    stream.count_rows();
    fprintf(stderr, "note: the read was fetched ahead before the server stopped\n");
  } catch (const riverlet::Error &e) {
    CHECK(e.kind() == ErrorKind::Network || e.kind() == ErrorKind::Timeout);
    if (e.kind() == ErrorKind::Network) CHECK(e.stream_errno() == EIO);
    fprintf(stderr, "note: stream error as expected (%s, errno %d): %s\n", e.kind_name(),
            e.stream_errno(), e.what());
  }
  /* the server is gone: planning a new read fails with a typed error naming the table */
  try {
    table.read();
    CHECK(false);
  } catch (const riverlet::Error &e) {
    CHECK(e.kind() == ErrorKind::Network || e.kind() == ErrorKind::Timeout);
    CHECK(e.retriable());
    CHECK(has(e.what(), "'s.t'") && (has(e.what(), "connect") || has(e.what(), "timed out")));
  }
}

static void test_many_cycles() {
  Connection conn = Connection::connect(g_bootstrap);
  int bad = 0;
  for (int i = 0; i < 1000; i++) {
    try {
      Table table = conn.get_table("capi", "events");
      if (table.read().count_rows() != 5) bad++;
    } catch (const riverlet::Error &e) {
      if (bad++ == 0) fprintf(stderr, "cycle %d: %s\n", i, e.what());
    }
  }
  CHECK(bad == 0);
  for (int i = 0; i < 20; i++) {
    try {
      Connection c = Connection::connect(g_bootstrap);
    } catch (const riverlet::Error &) {
      bad++;
    }
  }
  CHECK(bad == 0);
}

static std::string id_score_text(int64_t first, int64_t last) {
  std::string out;
  for (int64_t i = first; i <= last; i++)
    out += "{id=" + std::to_string(i) + ", score=" + std::to_string(10 * i) + "}\n";
  return out;
}

/* riverlet_lake_snapshot through Connection::lake_snapshot after one lake commit of the
 * 2-bucket finance.events: both buckets, the latest, readable and by-id snapshot the same. */
static void check_lake_snapshot(const Connection &conn) {
  std::optional<riverlet::LakeSnapshot> latest = conn.lake_snapshot("finance", "events");
  CHECK(latest.has_value());
  if (!latest) return;
  CHECK(latest->buckets.count_rows() == 2);
  std::optional<riverlet::LakeSnapshot> readable = conn.lake_snapshot("finance", "events", std::nullopt, true);
  CHECK(readable.has_value() && readable->snapshot_id == latest->snapshot_id);
  std::optional<riverlet::LakeSnapshot> by_id = conn.lake_snapshot("finance", "events", latest->snapshot_id);
  CHECK(by_id.has_value() && by_id->snapshot_id == latest->snapshot_id);
  const int64_t id = latest->snapshot_id;
  THROWS(conn.lake_snapshot("finance", "events", id, true), InvalidArgument);
  MSG_HAS("not both");
}

static void test_lake() {
  char warehouse[] = "/tmp/riverlet-cpp-lake.XXXXXX";
  if (mkdtemp(warehouse) == nullptr) {
    failed++;
    fprintf(stderr, "mkdtemp: %s\n", std::strerror(errno));
    return;
  }
  {
    LocalServer server;
    if (!OK(server = LocalServer::start(std::nullopt, 0,
                                        {{"fsync", "never"},
                                         {"datalake.format", "iceberg"},
                                         {"datalake.iceberg.warehouse", warehouse}})))
      return;
    Connection conn = Connection::connect(server.bootstrap_servers());
    OK(conn.create_database("finance"));
    TableOptions topts;
    topts.bucket_count = 2;
    topts.properties = {{"table.datalake.enabled", "true"}, {"table.datalake.freshness", "1h"}};
    Schema schema = events_schema();
    OK(conn.create_table("finance", "events", schema, topts));
    OK(conn.create_table("finance", "plain", schema));
    Table table = conn.get_table("finance", "events");
    Writer writer = table.new_append_writer();
    OK(writer.append(events_batch(1, 3), schema));
    OK(writer.flush());
    OK(CHECK(!conn.lake_snapshot("finance", "events").has_value()));
    OK(server.commit_lake());
    OK(writer.append(events_batch(4, 2), schema));
    OK(writer.flush());
    /* the commit's snapshot: both buckets, the latest and the readable one the same */
    OK(check_lake_snapshot(conn));

    ReadOptions ro;
    ro.columns = {"id", "score"};
    Table lake;
    OK(lake = conn.get_table("finance", "events$lake"));
    OK(CHECK(stream_text(lake.read(ro)) == id_score_text(1, 3)));
    THROWS(lake.new_append_writer(), Unsupported);
    OK(CHECK(conn.get_table("finance", "events$lake$snapshots").read().count_rows() == 1));
    OK(CHECK(stream_text(table.read(ro)) == id_score_text(1, 5)));
    Table plain;
    OK(plain = conn.get_table("finance", "plain$lake"));
    THROWS(plain.read(), NotFound);
    MSG_HAS("not lake-enabled");
    OK(writer.close());
    OK(server.stop());
    /* the remaining objects are freed by their destructors, in reverse order */
  }
  std::string cmd = std::string("rm -rf ") + warehouse;
  CHECK(std::system(cmd.c_str()) == 0);
}

int main() {
  RUN(test_status_codes());
  RUN(test_empty_objects());
  RUN(test_foreign_handles());
  RUN(test_server_and_connect());
  RUN(test_sasl());
  if (g_server) {
    Connection conn;
    if (OK(conn = Connection::connect(g_bootstrap))) {
      RUN(test_admin(conn));
      RUN(test_log_table(conn));
      RUN(test_pk_table(conn));
      RUN(test_add_columns(conn));
      RUN(test_delete_update_where(conn));
      RUN(test_auto_increment(conn));
      RUN(test_bucket_leaders(conn));
      RUN(test_statistics_pushdown(conn));
      RUN(test_closed_connection());
      RUN(test_stream_error());
      RUN(test_many_cycles());
      RUN(test_lake());
      OK(conn.drop_database("capi", false, true));
    }
    conn = Connection();
    OK(g_server.stop());
    OK(g_server.close());
  }
  /* every handle this program created was freed (by close() or a destructor) */
  CHECK(riverlet::live_handles() == 0);
  printf("c++ api: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
