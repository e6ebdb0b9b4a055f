/*
 * C++ tests of riverlet.hpp, the scenarios of test_parity.c through the C++ API: partitions,
 * offsets, count, bucket subsets, batch sizes, changelog reads, subscriptions in every startup
 * mode with a checkpoint to resume from, prefix lookups, and the retention warning (last
 * warning and handler). Built and run by tests/run.sh under ASan/UBSan/LSan against an embedded
 * server. The last line is "c++ api parity: N passed, N failed".
 */
#include <chrono>
#include <string>
#include <thread>

#include "check.hpp"

using riverlet::Array;
using riverlet::ArrayStream;
using riverlet::BucketOffset;
using riverlet::Connection;
using riverlet::LocalServer;
using riverlet::OffsetSpec;
using riverlet::ReadOptions;
using riverlet::Schema;
using riverlet::SubscribeOptions;
using riverlet::Subscription;
using riverlet::Table;
using riverlet::TableOptions;
using riverlet::Writer;

static const char *const DB = "cpp_parity";

static int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

static void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

/* Reads a stream to the end: its rows; the largest batch in *max_batch. */
static int64_t drain(ArrayStream s, int64_t *max_batch = nullptr) {
  int64_t rows = 0;
  if (max_batch) *max_batch = 0;
  for (Array &a : s) {
    rows += a.length();
    if (max_batch && a.length() > *max_batch) *max_batch = a.length();
  }
  return rows;
}

/* Sums an int64 column of a stream. */
static int64_t sum_int64(ArrayStream s, int col) {
  int64_t sum = 0;
  for (Array &a : s) {
    const struct ArrowArray *c = a->children[col];
    for (int64_t r = 0; r < a.length(); r++) sum += static_cast<const int64_t *>(c->buffers[1])[r + c->offset];
  }
  return sum;
}

/* orders(id BIGINT NOT NULL, item STRING, dt STRING NOT NULL) */
static Schema orders_schema() {
  return make_schema({{"id", "l", false}, {"item", "u", true}, {"dt", "u", false}});
}

static void append_orders(const Writer &w, int64_t first, int64_t rows, const char *dt) {
  std::vector<int64_t> ids;
  std::vector<const char *> items, dts;
  for (int64_t i = 0; i < rows; i++) {
    ids.push_back(first + i);
    items.push_back((i % 2) ? "apple" : "pear");
    dts.push_back(dt);
  }
  OK(w.append(Batch(rows, 3).i64(ids).utf8(items).utf8(dts).done(), orders_schema()));
}

/* Polls until `want` rows arrived (at most 100 polls of 50 ms); the rows seen, their text. */
static int64_t poll_rows(const Subscription &sub, int64_t want, std::string *text = nullptr) {
  int64_t rows = 0;
  for (int i = 0; i < 100 && rows < want; i++) {
    ArrayStream s;
    if (!OK(s = sub.poll(50))) break;
    if (text) {
      std::string t = stream_text(s);
      for (char c : t) rows += c == '\n';
      *text += t;
    } else {
      rows += drain(std::move(s));
    }
  }
  return rows;
}

static void test_partitions_offsets_count(const Connection &conn) {
  TableOptions topts;
  topts.partition_keys = {"dt"};
  topts.bucket_count = 2;
  OK(conn.create_table(DB, "orders", orders_schema(), topts));
  OK(conn.create_partition(DB, "orders", {{"dt", "2024"}}));
  OK(conn.create_partition(DB, "orders", {{"dt", "2025"}}));
  THROWS(conn.create_partition(DB, "orders", {{"dt", "2024"}}), AlreadyExists);
  OK(conn.create_partition(DB, "orders", {{"dt", "2024"}}, true));
  THROWS(conn.create_partition(DB, "orders", {}), InvalidArgument);
  std::string text;
  OK(text = stream_text(conn.list_partitions(DB, "orders")));
  CHECK(has(text, "partition_name='2024', partition_spec='dt=2024'"));
  CHECK(has(text, "partition_name='2025', partition_spec='dt=2025'"));

  Table table;
  if (!OK(table = conn.get_table(DB, "orders"))) return;
  int64_t t_between = 0;
  {
    Writer w = table.new_append_writer();
    append_orders(w, 1, 6, "2024");
    OK(w.flush());
    sleep_ms(30);
    t_between = now_ms();
    sleep_ms(30);
    append_orders(w, 7, 4, "2024");
    OK(w.flush());
    append_orders(w, 11, 3, "2025");
    OK(w.flush());
    /* a partition that does not exist yet is created by the write */
    append_orders(w, 14, 2, "2026");
    OK(w.close());
  }

  OK(CHECK(table.count() == 15));
  ReadOptions opts;
  opts.partitions = {"2024"};
  OK(CHECK(table.count(opts) == 10));
  opts.filter = "item = 'apple'";
  OK(CHECK(table.count(opts) == 5));

  OK(CHECK(sum_int64(conn.list_offsets(DB, "orders", std::string("2024"), {}, OffsetSpec::Latest), 1) == 10));
  OK(CHECK(stream_text(conn.list_offsets(DB, "orders", std::string("2024"), {1},
                                         OffsetSpec::Earliest)) == "{bucket=1, offset=0}\n"));
  OK(CHECK(sum_int64(conn.list_offsets(DB, "orders", std::string("2024"), {},
                                       OffsetSpec::Timestamp, t_between),
                     1) == 6));
  THROWS(conn.list_offsets(DB, "orders", std::string("2024"), {}, OffsetSpec::Timestamp,
                           now_ms() + 600000),
         InvalidArgument);
  MSG_HAS("timestamp");
  THROWS(conn.list_offsets(DB, "orders", std::string("2024"), {}, static_cast<OffsetSpec>(42)),
         InvalidArgument);
  MSG_HAS("42");
  THROWS(conn.list_offsets(DB, "orders", std::string("1999"), {}, OffsetSpec::Latest), NotFound);

  /* bucket subsets: each bucket once, together the partition */
  ReadOptions b;
  b.partitions = {"2024"};
  b.buckets = {0};
  int64_t r0 = -1, r1 = -1;
  OK(r0 = drain(table.read(b)));
  b.buckets = {1};
  OK(r1 = drain(table.read(b)));
  CHECK(r0 >= 0 && r1 >= 0 && r0 + r1 == 10);
  OK(CHECK(table.count(b) == r1));
  b.buckets = {7};
  THROWS(table.read(b), InvalidArgument);
  MSG_HAS("bucket 7");

  ReadOptions bs;
  bs.batch_size = 2;
  int64_t max_batch = 0;
  OK(CHECK(drain(table.read(bs), &max_batch) == 15));
  CHECK(max_batch == 2);

  ReadOptions cl;
  cl.changelog = true;
  cl.filter = "id = 3";
  OK(text = stream_text(table.read(cl)));
  CHECK(text.rfind("{_change_type='insert', _log_offset=", 0) == 0);
  CHECK(has(text, "id=3, item='pear', dt='2024'}"));

  OK(conn.drop_partition(DB, "orders", {{"dt", "2025"}}));
  THROWS(conn.drop_partition(DB, "orders", {{"dt", "2099"}}), NotFound);
  OK(conn.drop_partition(DB, "orders", {{"dt", "2099"}}, true));
  OK(text = stream_text(conn.list_partitions(DB, "orders")));
  CHECK(!has(text, "'2025'") && has(text, "'2026'"));
  OK(CHECK(table.count() == 12));
}

static void test_subscriptions(const Connection &conn) {
  TableOptions topts;
  topts.bucket_count = 2;
  Schema schema = make_schema({{"id", "l", false}, {"item", "u", true}});
  OK(conn.create_table(DB, "feed", schema, topts));
  Table table;
  if (!OK(table = conn.get_table(DB, "feed"))) return;
  Writer w = table.new_append_writer();
  for (int64_t i = 0; i < 3; i++) {
    OK(w.append(Batch(2, 2).i64({10 * i + 1, 10 * i + 2}).utf8({"x", "y"}).done(), schema));
    OK(w.flush());
  }
  sleep_ms(30);
  int64_t t_mid = now_ms();
  sleep_ms(30);
  OK(w.append(Batch(1, 2).i64({99}).utf8({"late"}).done(), schema));
  OK(w.flush());

  std::vector<BucketOffset> checkpoint;
  SubscribeOptions so;
  so.startup_mode = "earliest";
  {
    Subscription sub;
    if (OK(sub = table.subscribe(so))) {
      std::string text;
      CHECK(poll_rows(sub, 7, &text) == 7);
      CHECK(has(text, "_change_type='insert'") && has(text, "id=99, item='late'"));
      OK(checkpoint = sub.checkpoint());
      CHECK(checkpoint.size() == 2);
      int64_t total = 0;
      for (const auto &c : checkpoint) {
        total += c.offset;
        CHECK(c.partition_id == -1 && !c.partition_name);
      }
      CHECK(total == 7);
      OK(sub.close());
    }
  }
  {
    Subscription sub;
    if (OK(sub = table.subscribe())) CHECK(poll_rows(sub, 7) == 7);
  }
  /* latest: nothing until a new row arrives */
  so.startup_mode = "LATEST";
  {
    Subscription sub;
    if (OK(sub = table.subscribe(so))) OK(CHECK(drain(sub.poll(50)) == 0));
  }
  /* timestamp: the row after t_mid, as epoch ms and as a datetime in a zone */
  so.startup_mode = "timestamp";
  so.startup_timestamp = std::to_string(t_mid);
  so.columns = {"id"};
  {
    Subscription sub;
    if (OK(sub = table.subscribe(so))) {
      std::string text;
      CHECK(poll_rows(sub, 1, &text) == 1);
      CHECK(has(text, "id=99}"));
    }
  }
  so.startup_timestamp = "1970-01-01 08:00:00";
  so.time_zone = "+08:00";
  {
    Subscription sub;
    if (OK(sub = table.subscribe(so))) CHECK(poll_rows(sub, 7) == 7);
  }
  /* resume from the checkpoint: only what was written after it */
  OK(w.append(Batch(2, 2).i64({100, 101}).utf8({"new", "newer"}).done(), schema));
  OK(w.flush());
  SubscribeOptions resume;
  resume.start_offsets = checkpoint;
  {
    Subscription sub;
    if (OK(sub = table.subscribe(resume))) {
      std::string text;
      CHECK(poll_rows(sub, 2, &text) == 2);
      CHECK(has(text, "id=100") && has(text, "id=101") && !has(text, "id=99"));
    }
  }
  /* one bucket: its position alone */
  SubscribeOptions one;
  one.startup_mode = "earliest";
  one.buckets = {1};
  {
    Subscription sub;
    if (OK(sub = table.subscribe(one))) {
      std::vector<BucketOffset> pos;
      OK(pos = sub.checkpoint());
      CHECK(pos.size() == 1 && pos[0].bucket == 1);
    }
  }
  /* a start offset of a bucket not read is refused */
  if (!checkpoint.empty()) {
    one.start_offsets = {checkpoint[0]};
    one.start_offsets[0].bucket = 0;
    THROWS(table.subscribe(one), InvalidArgument);
    MSG_HAS("bucket 0");
  }
  /* bad startup options */
  SubscribeOptions bad;
  bad.startup_mode = "yesterday";
  THROWS(table.subscribe(bad), InvalidArgument);
  MSG_HAS("yesterday");
  bad.startup_mode = "timestamp";
  THROWS(table.subscribe(bad), InvalidArgument);
  MSG_HAS("scan.startup.timestamp");
  bad.startup_timestamp = "soon";
  THROWS(table.subscribe(bad), InvalidArgument);
  MSG_HAS("soon");
  /* a freed subscription, through its raw handle */
  {
    Subscription sub;
    if (OK(sub = table.subscribe())) {
      RiverletSubscription *raw = sub.native();
      OK(sub.close());
      THROWS(sub.poll(0), Closed);
      Subscription stale(raw);
      THROWS(stale.poll(0), Closed);
      THROWS(stale.close(), Closed);
    }
  }
  OK(w.close());
}

static void test_pk_full_and_prefix(const Connection &conn) {
  TableOptions topts;
  topts.primary_key = {"user_id", "day"};
  topts.bucket_keys = {"user_id"};
  topts.bucket_count = 2;
  Schema schema = make_schema({{"user_id", "l", false}, {"day", "u", false}, {"clicks", "l", true}});
  OK(conn.create_table(DB, "clicks", schema, topts));
  Table table;
  if (!OK(table = conn.get_table(DB, "clicks"))) return;
  Writer w = table.new_upsert_writer();
  OK(w.upsert(Batch(4, 3).i64({1, 1, 2, 3}).utf8({"mon", "tue", "mon", "mon"}).i64({5, 6, 7, 8}).done(),
              schema));
  OK(w.flush());

  Schema prefix_schema = make_schema({{"user_id", "l", false}});
  OK(CHECK(stream_text(table.prefix_lookup(Batch(1, 1).i64({1}).done(), prefix_schema)) ==
           "{user_id=1, day='mon', clicks=5}\n"
           "{user_id=1, day='tue', clicks=6}\n"));
  OK(CHECK(drain(table.prefix_lookup(Batch(1, 1).i64({42}).done(), prefix_schema)) == 0));

  SubscribeOptions so;
  so.startup_mode = "full";
  Subscription sub;
  if (OK(sub = table.subscribe(so))) {
    std::string text;
    CHECK(poll_rows(sub, 4, &text) == 4);
    CHECK(has(text, "_log_offset=-1"));
    OK(w.upsert(Batch(1, 3).i64({2}).utf8({"mon"}).i64({70}).done(), schema));
    OK(w.flush());
    text.clear();
    CHECK(poll_rows(sub, 2, &text) == 2);
    CHECK(has(text, "_change_type='update_before'") && has(text, "_change_type='update_after'"));
    CHECK(has(text, "clicks=70"));
  }
}

static void test_retention_warning(const Connection &conn) {
  TableOptions topts;
  topts.bucket_count = 1;
  topts.properties = {{"table.log.ttl", "1h"}};
  Schema schema = make_schema({{"id", "l", false}});
  OK(conn.create_table(DB, "short_lived", schema, topts));
  Table table;
  if (!OK(table = conn.get_table(DB, "short_lived"))) return;
  {
    Writer w = table.new_append_writer();
    OK(w.append(Batch(1, 1).i64({1}).done(), schema));
    OK(w.close());
  }
  /* a window within retention: no warning */
  ArrayStream s;
  OK(s = table.read_between_ms(now_ms() - 60 * 1000));
  CHECK(!riverlet::last_warning());
  OK(CHECK(drain(std::move(s)) == 1));

  /* two hours back with a one-hour TTL: the read works and warns */
  int calls = 0;
  int32_t kind = 0;
  std::string message;
  riverlet::set_warning_handler([&](int32_t k, const std::string &m) {
    calls++;
    kind = k;
    message = m;
  });
  int64_t start = now_ms() - 2 * 3600 * 1000;
  if (OK(s = table.read_between_ms(start))) {
    auto warning = riverlet::last_warning();
    CHECK(warning && has(warning->message, "table.log.ttl") &&
          has(warning->message, "cpp_parity.short_lived"));
    CHECK(warning && warning->kind == RIVERLET_WARNING_BEFORE_RETENTION);
    CHECK(calls == 1 && kind == RIVERLET_WARNING_BEFORE_RETENTION);
    CHECK(has(message, "table.log.ttl"));
    OK(CHECK(drain(std::move(s)) == 1));
  }
  /* a handler that throws does not unwind into Riverlet */
  riverlet::set_warning_handler([&](int32_t, const std::string &) {
    calls++;
    throw std::runtime_error("from the handler");
  });
  OK(CHECK(drain(table.read_between_ms(start)) == 1));
  CHECK(calls == 2);
  /* the next call clears it; without a handler nothing is called */
  riverlet::set_warning_handler(nullptr);
  OK(s = table.read());
  CHECK(!riverlet::last_warning());
  OK(CHECK(drain(std::move(s)) == 1));
  OK(s = table.read_between_ms(start));
  CHECK(riverlet::last_warning().has_value());
  CHECK(calls == 2);
  OK(CHECK(drain(std::move(s)) == 1));
}

int main() {
  {
    LocalServer server;
    if (!OK(server = LocalServer::start())) {
      printf("c++ api parity: %d passed, %d failed\n", passed, failed);
      return 1;
    }
    Connection conn;
    if (OK(conn = Connection::connect(server.bootstrap_servers()))) {
      OK(conn.create_database(DB, true));
      RUN(test_partitions_offsets_count(conn));
      RUN(test_subscriptions(conn));
      RUN(test_pk_full_and_prefix(conn));
      RUN(test_retention_warning(conn));
      OK(conn.drop_database(DB, false, true));
    }
    /* conn, then server, are freed by their destructors */
  }
  CHECK(riverlet::live_handles() == 0);
  printf("c++ api parity: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
