/*
 * C tests of the calls the C API shares with the Python binding: partitions (list, create,
 * drop), list offsets, count, bucket subsets, batch sizes and changelog reads, subscriptions in
 * every startup mode with a position to resume from, prefix lookups, and the warning of a
 * time-range window that starts before the log's retention (last-warning call and callback).
 * Built and run by tests/run.sh under ASan/UBSan/LSan against an embedded server. The last line
 * is "c-api parity: N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow_util.h"
#include "riverlet.h"

#include "check.h"

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Reads a stream to the end: its row count (-1 on error); the largest batch in *max_batch. */
static int64_t drain(struct ArrowArrayStream *s, int64_t *max_batch) {
  int64_t rows = 0;
  if (max_batch) *max_batch = 0;
  for (;;) {
    struct ArrowArray a;
    if (s->get_next(s, &a) != 0) {
      rows = -1;
      break;
    }
    if (a.release == NULL) break;
    rows += a.length;
    if (max_batch && a.length > *max_batch) *max_batch = a.length;
    a.release(&a);
  }
  s->release(s);
  return rows;
}

static char *stream_text(struct ArrowArrayStream *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  au_print_stream(s, "", f);
  fclose(f);
  return buf;
}

/* Sums an int64 column of a stream (the stream is released). */
static int64_t sum_int64(struct ArrowArrayStream *s, int col) {
  int64_t sum = 0;
  for (;;) {
    struct ArrowArray a;
    int64_t r;
    if (s->get_next(s, &a) != 0) {
      sum = -1;
      break;
    }
    if (a.release == NULL) break;
    for (r = 0; r < a.length; r++) {
      sum += ((const int64_t *)a.children[col]->buffers[1])[r + a.children[col]->offset];
    }
    a.release(&a);
  }
  s->release(s);
  return sum;
}

/* orders(id BIGINT NOT NULL, item STRING, dt STRING NOT NULL) */
static void orders_schema(struct ArrowSchema *s) {
  au_schema_init(s, 3);
  au_schema_set(s, 0, "id", "l", false);
  au_schema_set(s, 1, "item", "u", true);
  au_schema_set(s, 2, "dt", "u", false);
}

static void append_orders(RiverletWriter *w, int64_t first, int64_t rows, const char *dt) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  int64_t ids[16];
  const char *items[16];
  const char *dts[16];
  int64_t i;
  for (i = 0; i < rows; i++) {
    ids[i] = first + i;
    items[i] = (i % 2) ? "apple" : "pear";
    dts[i] = dt;
  }
  orders_schema(&schema);
  au_array_init(&array, rows, 3);
  au_array_set_int64(&array, 0, ids, NULL);
  au_array_set_utf8(&array, 1, items);
  au_array_set_utf8(&array, 2, dts);
  OK(riverlet_writer_append(w, &array, &schema));
  schema.release(&schema);
}

/* Polls until `want` rows arrived (at most 100 polls); returns the rows seen. */
static int64_t poll_rows(RiverletSubscription *sub, int64_t want, char **text_out) {
  int64_t rows = 0;
  int i;
  char *all = NULL;
  size_t all_len = 0;
  FILE *f = text_out ? open_memstream(&all, &all_len) : NULL;
  for (i = 0; i < 100 && rows < want; i++) {
    struct ArrowArrayStream s;
    if (!OK(riverlet_subscription_poll(sub, 50, &s))) break;
    if (f) {
      int64_t n = au_print_stream(&s, "", f);
      rows += n > 0 ? n : 0;
    } else {
      rows += drain(&s, NULL);
    }
  }
  if (f) {
    fclose(f);
    *text_out = all;
  }
  return rows;
}

static void test_partitions_offsets_count(RiverletConnection *conn) {
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTableOptions topts;
  RiverletReadOptions opts;
  RiverletTable *table = NULL;
  RiverletWriter *w = NULL;
  const char *part_keys[] = {"dt"};
  const char *v2024[] = {"2024"};
  const char *v2025[] = {"2025"};
  const char *v2099[] = {"2099"};
  const char *only2024[] = {"2024"};
  int32_t bucket0[] = {0}, bucket1[] = {1}, bad_bucket[] = {7};
  int64_t n = -1, max_batch = 0, r0, r1, t_between;

  memset(&topts, 0, sizeof topts);
  topts.partition_keys = part_keys;
  topts.num_partition_keys = 1;
  topts.bucket_count = 2;
  orders_schema(&schema);
  OK(riverlet_create_table(conn, "capi_parity", "orders", &schema, &topts, false));
  schema.release(&schema);

  OK(riverlet_create_partition(conn, "capi_parity", "orders", part_keys, v2024, 1, false));
  OK(riverlet_create_partition(conn, "capi_parity", "orders", part_keys, v2025, 1, false));
  EXPECT(riverlet_create_partition(conn, "capi_parity", "orders", part_keys, v2024, 1, false),
         RIVERLET_STATUS_ALREADY_EXISTS);
  OK(riverlet_create_partition(conn, "capi_parity", "orders", part_keys, v2024, 1, true));
  EXPECT(riverlet_create_partition(conn, "capi_parity", "orders", part_keys, v2024, 0, false),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  if (OK(riverlet_list_partitions(conn, "capi_parity", "orders", &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "partition_name='2024', partition_spec='dt=2024'") != NULL);
    CHECK(strstr(text, "partition_name='2025', partition_spec='dt=2025'") != NULL);
    free(text);
  }

  OK(riverlet_connection_get_table(conn, "capi_parity", "orders", &table));
  OK(riverlet_table_new_append_writer(table, &w));
  append_orders(w, 1, 6, "2024");
  OK(riverlet_writer_flush(w));
  sleep_ms(30);
  t_between = now_ms();
  sleep_ms(30);
  append_orders(w, 7, 4, "2024");
  OK(riverlet_writer_flush(w));
  append_orders(w, 11, 3, "2025");
  OK(riverlet_writer_flush(w));
  /* a partition that does not exist yet is created by the write (Fluss's default) */
  append_orders(w, 14, 2, "2026");
  OK(riverlet_writer_flush(w));
  OK(riverlet_writer_free(w));

  /* count: the whole table, a partition, a filter */
  OK(riverlet_table_count(table, NULL, &n));
  CHECK(n == 15);
  memset(&opts, 0, sizeof opts);
  opts.partitions = only2024;
  opts.num_partitions = 1;
  OK(riverlet_table_count(table, &opts, &n));
  CHECK(n == 10);
  opts.filter = "item = 'apple'";
  OK(riverlet_table_count(table, &opts, &n));
  CHECK(n == 5);

  /* offsets: the high watermarks of 2024's buckets add up to its rows; earliest is 0 */
  if (OK(riverlet_list_offsets(conn, "capi_parity", "orders", "2024", NULL, 0, RIVERLET_OFFSET_LATEST,
                               0, &stream)))
    CHECK(sum_int64(&stream, 1) == 10);
  if (OK(riverlet_list_offsets(conn, "capi_parity", "orders", "2024", bucket1, 1,
                               RIVERLET_OFFSET_EARLIEST, 0, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text, "{bucket=1, offset=0}\n") == 0);
    free(text);
  }
  /* at a timestamp between the two 2024 appends: the 6 rows before it */
  if (OK(riverlet_list_offsets(conn, "capi_parity", "orders", "2024", NULL, 0,
                               RIVERLET_OFFSET_TIMESTAMP, t_between, &stream)))
    CHECK(sum_int64(&stream, 1) == 6);
  /* a timestamp in the future is refused by the server, named */
  EXPECT(riverlet_list_offsets(conn, "capi_parity", "orders", "2024", NULL, 0,
                               RIVERLET_OFFSET_TIMESTAMP, now_ms() + 600000, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("timestamp");
  EXPECT(riverlet_list_offsets(conn, "capi_parity", "orders", "2024", NULL, 0, 42, 0, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("42");
  EXPECT(riverlet_list_offsets(conn, "capi_parity", "orders", "1999", NULL, 0,
                               RIVERLET_OFFSET_LATEST, 0, &stream),
         RIVERLET_STATUS_NOT_FOUND);

  /* bucket subsets: each bucket once, together the partition */
  memset(&opts, 0, sizeof opts);
  opts.partitions = only2024;
  opts.num_partitions = 1;
  opts.buckets = bucket0;
  opts.num_buckets = 1;
  r0 = -1;
  if (OK(riverlet_table_read(table, &opts, &stream))) r0 = drain(&stream, NULL);
  opts.buckets = bucket1;
  r1 = -1;
  if (OK(riverlet_table_read(table, &opts, &stream))) r1 = drain(&stream, NULL);
  CHECK(r0 >= 0 && r1 >= 0 && r0 + r1 == 10);
  OK(riverlet_table_count(table, &opts, &n));
  CHECK(n == r1);
  opts.buckets = bad_bucket;
  EXPECT(riverlet_table_read(table, &opts, &stream), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("bucket 7");
  opts.buckets = NULL;
  opts.num_buckets = 1;
  EXPECT(riverlet_table_read(table, &opts, &stream), RIVERLET_STATUS_NULL_ARGUMENT);

  /* batch size */
  memset(&opts, 0, sizeof opts);
  opts.batch_size = 2;
  if (OK(riverlet_table_read(table, &opts, &stream))) {
    CHECK(drain(&stream, &max_batch) == 15);
    CHECK(max_batch == 2);
  }

  /* changelog form */
  memset(&opts, 0, sizeof opts);
  opts.changelog = true;
  opts.filter = "id = 3";
  if (OK(riverlet_table_read(table, &opts, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strncmp(text, "{_change_type='insert', _log_offset=", 36) == 0);
    CHECK(strstr(text, "id=3, item='pear', dt='2024'}") != NULL);
    free(text);
  }

  /* drop a partition */
  OK(riverlet_drop_partition(conn, "capi_parity", "orders", part_keys, v2025, 1, false));
  EXPECT(riverlet_drop_partition(conn, "capi_parity", "orders", part_keys, v2099, 1, false),
         RIVERLET_STATUS_NOT_FOUND);
  OK(riverlet_drop_partition(conn, "capi_parity", "orders", part_keys, v2099, 1, true));
  if (OK(riverlet_list_partitions(conn, "capi_parity", "orders", &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "'2025'") == NULL);
    CHECK(strstr(text, "'2026'") != NULL);
    free(text);
  }
  OK(riverlet_table_count(table, NULL, &n));
  CHECK(n == 12);
  OK(riverlet_table_free(table));
}

/* The first row's int32 and int64 columns of each position row, as start offsets. */
static size_t read_position(RiverletSubscription *sub, RiverletBucketOffset *out, size_t cap) {
  struct ArrowArrayStream s;
  size_t n = 0;
  if (!OK(riverlet_subscription_position(sub, &s))) return 0;
  for (;;) {
    struct ArrowArray a;
    int64_t r;
    if (s.get_next(&s, &a) != 0 || a.release == NULL) break;
    for (r = 0; r < a.length && n < cap; r++, n++) {
      const struct ArrowArray *b = a.children[2], *o = a.children[3];
      out[n].partition_name = NULL;
      out[n].partition_id = -1;
      out[n].bucket = ((const int32_t *)b->buffers[1])[r + b->offset];
      out[n].offset = ((const int64_t *)o->buffers[1])[r + o->offset];
    }
    a.release(&a);
  }
  s.release(&s);
  return n;
}

static void test_subscriptions(RiverletConnection *conn) {
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTableOptions topts;
  RiverletSubscribeOptions sopts;
  RiverletTable *table = NULL;
  RiverletWriter *w = NULL;
  RiverletSubscription *sub = NULL;
  RiverletBucketOffset checkpoint[8];
  size_t n_pos, i;
  int64_t t_mid, total = 0;
  const char *id_only[] = {"id"};
  int32_t bucket1[] = {1};
  char *text = NULL;
  char ts[32];

  memset(&topts, 0, sizeof topts);
  topts.bucket_count = 2;
  au_schema_init(&schema, 2);
  au_schema_set(&schema, 0, "id", "l", false);
  au_schema_set(&schema, 1, "item", "u", true);
  OK(riverlet_create_table(conn, "capi_parity", "feed", &schema, &topts, false));
  OK(riverlet_connection_get_table(conn, "capi_parity", "feed", &table));
  OK(riverlet_table_new_append_writer(table, &w));
  for (i = 0; i < 3; i++) {
    struct ArrowArray a;
    int64_t ids[2] = {(int64_t)(10 * i + 1), (int64_t)(10 * i + 2)};
    const char *items[2] = {"x", "y"};
    au_array_init(&a, 2, 2);
    au_array_set_int64(&a, 0, ids, NULL);
    au_array_set_utf8(&a, 1, items);
    OK(riverlet_writer_append(w, &a, &schema));
    OK(riverlet_writer_flush(w));
  }
  sleep_ms(30);
  t_mid = now_ms();
  sleep_ms(30);
  {
    struct ArrowArray a;
    int64_t ids[1] = {99};
    const char *items[1] = {"late"};
    au_array_init(&a, 1, 2);
    au_array_set_int64(&a, 0, ids, NULL);
    au_array_set_utf8(&a, 1, items);
    OK(riverlet_writer_append(w, &a, &schema));
    OK(riverlet_writer_flush(w));
  }

  /* earliest (and the default, full, for a log table): every row */
  memset(&sopts, 0, sizeof sopts);
  sopts.startup_mode = "earliest";
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    CHECK(poll_rows(sub, 7, &text) == 7);
    CHECK(text != NULL && strstr(text, "_change_type='insert'") != NULL);
    CHECK(text != NULL && strstr(text, "id=99, item='late'") != NULL);
    free(text);
    text = NULL;
    n_pos = read_position(sub, checkpoint, 8);
    CHECK(n_pos == 2);
    for (i = 0; i < n_pos; i++) total += checkpoint[i].offset;
    CHECK(total == 7);
    OK(riverlet_subscription_free(sub));
  } else {
    n_pos = 0;
  }
  if (OK(riverlet_table_subscribe(table, NULL, &sub))) {
    CHECK(poll_rows(sub, 7, NULL) == 7);
    OK(riverlet_subscription_free(sub));
  }

  /* latest: nothing until a new row arrives */
  sopts.startup_mode = "LATEST";
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    OK(riverlet_subscription_poll(sub, 50, &stream));
    CHECK(drain(&stream, NULL) == 0);
    OK(riverlet_subscription_free(sub));
  }

  /* timestamp: the row after t_mid, as epoch ms and as a datetime in a zone */
  sopts.startup_mode = "timestamp";
  snprintf(ts, sizeof ts, "%" PRId64, t_mid);
  sopts.startup_timestamp = ts;
  sopts.columns = id_only;
  sopts.num_columns = 1;
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    CHECK(poll_rows(sub, 1, &text) == 1);
    CHECK(text != NULL && strstr(text, "id=99}") != NULL);
    free(text);
    text = NULL;
    OK(riverlet_subscription_free(sub));
  }
  sopts.startup_timestamp = "1970-01-01 08:00:00";
  sopts.time_zone = "+08:00";
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    CHECK(poll_rows(sub, 7, NULL) == 7);
    OK(riverlet_subscription_free(sub));
  }

  /* resume from the checkpoint: only what was written after it */
  {
    struct ArrowArray a;
    int64_t ids[2] = {100, 101};
    const char *items[2] = {"new", "newer"};
    au_array_init(&a, 2, 2);
    au_array_set_int64(&a, 0, ids, NULL);
    au_array_set_utf8(&a, 1, items);
    OK(riverlet_writer_append(w, &a, &schema));
    OK(riverlet_writer_flush(w));
  }
  memset(&sopts, 0, sizeof sopts);
  sopts.start_offsets = checkpoint;
  sopts.num_start_offsets = n_pos;
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    CHECK(poll_rows(sub, 2, &text) == 2);
    CHECK(text != NULL && strstr(text, "id=100") != NULL && strstr(text, "id=101") != NULL);
    CHECK(text != NULL && strstr(text, "id=99") == NULL);
    free(text);
    text = NULL;
    OK(riverlet_subscription_free(sub));
  }

  /* one bucket: its position alone */
  memset(&sopts, 0, sizeof sopts);
  sopts.startup_mode = "earliest";
  sopts.buckets = bucket1;
  sopts.num_buckets = 1;
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    RiverletBucketOffset one[4];
    CHECK(read_position(sub, one, 4) == 1 && one[0].bucket == 1);
    OK(riverlet_subscription_free(sub));
  }
  /* a start offset of a bucket not read is refused */
  checkpoint[0].bucket = 0;
  sopts.start_offsets = checkpoint;
  sopts.num_start_offsets = 1;
  EXPECT(riverlet_table_subscribe(table, &sopts, &sub), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("bucket 0");

  /* bad startup options */
  memset(&sopts, 0, sizeof sopts);
  sopts.startup_mode = "yesterday";
  EXPECT(riverlet_table_subscribe(table, &sopts, &sub), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("yesterday");
  sopts.startup_mode = "timestamp";
  EXPECT(riverlet_table_subscribe(table, &sopts, &sub), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("scan.startup.timestamp");
  sopts.startup_timestamp = "soon";
  EXPECT(riverlet_table_subscribe(table, &sopts, &sub), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("soon");

  /* a freed subscription */
  memset(&sopts, 0, sizeof sopts);
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    OK(riverlet_subscription_free(sub));
    EXPECT(riverlet_subscription_poll(sub, 0, &stream), RIVERLET_STATUS_CLOSED);
    EXPECT(riverlet_subscription_free(sub), RIVERLET_STATUS_CLOSED);
  }
  OK(riverlet_subscription_free(NULL));

  OK(riverlet_writer_free(w));
  schema.release(&schema);
  OK(riverlet_table_free(table));
}

/* A primary-key table: full startup (snapshot, then the log) and prefix lookups. */
static void test_pk_full_and_prefix(RiverletConnection *conn) {
  struct ArrowSchema schema, prefix_schema;
  struct ArrowArray a;
  struct ArrowArrayStream stream;
  RiverletTableOptions topts;
  RiverletSubscribeOptions sopts;
  RiverletTable *table = NULL;
  RiverletWriter *w = NULL;
  RiverletSubscription *sub = NULL;
  const char *pk[] = {"user_id", "day"};
  const char *bucket_key[] = {"user_id"};
  char *text = NULL;

  memset(&topts, 0, sizeof topts);
  topts.primary_key = pk;
  topts.num_primary_key = 2;
  topts.bucket_keys = bucket_key;
  topts.num_bucket_keys = 1;
  topts.bucket_count = 2;
  au_schema_init(&schema, 3);
  au_schema_set(&schema, 0, "user_id", "l", false);
  au_schema_set(&schema, 1, "day", "u", false);
  au_schema_set(&schema, 2, "clicks", "l", true);
  OK(riverlet_create_table(conn, "capi_parity", "clicks", &schema, &topts, false));
  OK(riverlet_connection_get_table(conn, "capi_parity", "clicks", &table));
  OK(riverlet_table_new_upsert_writer(table, NULL, 0, &w));
  {
    int64_t users[4] = {1, 1, 2, 3};
    const char *days[4] = {"mon", "tue", "mon", "mon"};
    int64_t clicks[4] = {5, 6, 7, 8};
    au_array_init(&a, 4, 3);
    au_array_set_int64(&a, 0, users, NULL);
    au_array_set_utf8(&a, 1, days);
    au_array_set_int64(&a, 2, clicks, NULL);
    OK(riverlet_writer_upsert(w, &a, &schema));
    OK(riverlet_writer_flush(w));
  }

  /* prefix lookup of user 1: both of its days */
  au_schema_init(&prefix_schema, 1);
  au_schema_set(&prefix_schema, 0, "user_id", "l", false);
  {
    int64_t users[1] = {1};
    au_array_init(&a, 1, 1);
    au_array_set_int64(&a, 0, users, NULL);
    if (OK(riverlet_table_prefix_lookup(table, &a, &prefix_schema, &stream))) {
      text = stream_text(&stream);
      CHECK(strcmp(text,
                   "{user_id=1, day='mon', clicks=5}\n"
                   "{user_id=1, day='tue', clicks=6}\n") == 0);
      free(text);
      text = NULL;
    }
    CHECK(a.release == NULL);
  }
  {
    int64_t users[1] = {42};
    au_array_init(&a, 1, 1);
    au_array_set_int64(&a, 0, users, NULL);
    if (OK(riverlet_table_prefix_lookup(table, &a, &prefix_schema, &stream)))
      CHECK(drain(&stream, NULL) == 0);
  }

  /* full startup: the current rows as a snapshot, then later changes */
  memset(&sopts, 0, sizeof sopts);
  sopts.startup_mode = "full";
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    CHECK(poll_rows(sub, 4, &text) == 4);
    CHECK(text != NULL && strstr(text, "_log_offset=-1") != NULL);
    free(text);
    text = NULL;
    {
      int64_t users[1] = {2};
      const char *days[1] = {"mon"};
      int64_t clicks[1] = {70};
      au_array_init(&a, 1, 3);
      au_array_set_int64(&a, 0, users, NULL);
      au_array_set_utf8(&a, 1, days);
      au_array_set_int64(&a, 2, clicks, NULL);
      OK(riverlet_writer_upsert(w, &a, &schema));
      OK(riverlet_writer_flush(w));
    }
    CHECK(poll_rows(sub, 2, &text) == 2);
    CHECK(text != NULL && strstr(text, "_change_type='update_before'") != NULL);
    CHECK(text != NULL && strstr(text, "_change_type='update_after'") != NULL);
    CHECK(text != NULL && strstr(text, "clicks=70") != NULL);
    free(text);
    text = NULL;
    OK(riverlet_subscription_free(sub));
  }
  prefix_schema.release(&prefix_schema);
  OK(riverlet_writer_free(w));
  schema.release(&schema);
  OK(riverlet_table_free(table));
}

static int callback_calls = 0;
static int callback_kind = 0;
static char callback_text[1024];

static void on_warning(int32_t kind, const char *message, void *user_data) {
  callback_calls++;
  callback_kind = kind;
  snprintf(callback_text, sizeof callback_text, "%s", message);
  *(int *)user_data += 1;
}

static void test_retention_warning(RiverletConnection *conn) {
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTableOptions topts;
  RiverletTable *table = NULL;
  RiverletWriter *w = NULL;
  const char *keys[] = {"table.log.ttl"};
  const char *values[] = {"1h"};
  int user_counter = 0;
  int64_t start;

  memset(&topts, 0, sizeof topts);
  topts.bucket_count = 1;
  topts.property_keys = keys;
  topts.property_values = values;
  topts.num_properties = 1;
  au_schema_init(&schema, 1);
  au_schema_set(&schema, 0, "id", "l", false);
  OK(riverlet_create_table(conn, "capi_parity", "short_lived", &schema, &topts, false));
  OK(riverlet_connection_get_table(conn, "capi_parity", "short_lived", &table));
  OK(riverlet_table_new_append_writer(table, &w));
  {
    struct ArrowArray a;
    int64_t ids[1] = {1};
    au_array_init(&a, 1, 1);
    au_array_set_int64(&a, 0, ids, NULL);
    OK(riverlet_writer_append(w, &a, &schema));
  }
  OK(riverlet_writer_free(w));

  /* a window within retention: no warning */
  start = now_ms() - 60 * 1000;
  if (OK(riverlet_table_read_between_ms(table, NULL, start, NULL, &stream))) {
    CHECK(riverlet_last_warning_message() == NULL);
    CHECK(riverlet_last_warning_kind() == 0);
    CHECK(drain(&stream, NULL) == 1);
  }
  /* two hours back with a one-hour TTL: the read works and warns */
  riverlet_set_warning_callback(on_warning, &user_counter);
  start = now_ms() - 2 * 3600 * 1000;
  if (OK(riverlet_table_read_between_ms(table, NULL, start, NULL, &stream))) {
    const char *warning = riverlet_last_warning_message();
    CHECK(warning != NULL && strstr(warning, "table.log.ttl") != NULL);
    CHECK(warning != NULL && strstr(warning, "capi_parity.short_lived") != NULL);
    CHECK(riverlet_last_warning_kind() == RIVERLET_WARNING_BEFORE_RETENTION);
    CHECK(callback_calls == 1 && user_counter == 1);
    CHECK(callback_kind == RIVERLET_WARNING_BEFORE_RETENTION);
    CHECK(strstr(callback_text, "table.log.ttl") != NULL);
    CHECK(drain(&stream, NULL) == 1);
  }
  /* the next call clears it; without a callback nothing is called */
  riverlet_set_warning_callback(NULL, NULL);
  OK(riverlet_table_read(table, NULL, &stream));
  CHECK(riverlet_last_warning_message() == NULL);
  CHECK(drain(&stream, NULL) == 1);
  OK(riverlet_table_read_between_ms(table, NULL, start, NULL, &stream));
  CHECK(riverlet_last_warning_message() != NULL);
  CHECK(callback_calls == 1);
  CHECK(drain(&stream, NULL) == 1);

  schema.release(&schema);
  OK(riverlet_table_free(table));
}

int main(void) {
  RiverletLocalServer *server = NULL;
  RiverletConnection *conn = NULL;
  const char *bootstrap = NULL;
  if (!OK(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, &server))) {
    printf("c-api parity: %d passed, %d failed\n", passed, failed + 1);
    return 1;
  }
  OK(riverlet_local_server_bootstrap_servers(server, &bootstrap));
  if (OK(riverlet_connect(bootstrap, NULL, NULL, 0, &conn))) {
    OK(riverlet_create_database(conn, "capi_parity", true));
    test_partitions_offsets_count(conn);
    test_subscriptions(conn);
    test_pk_full_and_prefix(conn);
    test_retention_warning(conn);
    OK(riverlet_drop_database(conn, "capi_parity", false, true));
    OK(riverlet_connection_free(conn));
  }
  OK(riverlet_local_server_stop(server));
  OK(riverlet_local_server_free(server));
  CHECK(riverlet_live_handles() == 0);
  printf("c-api parity: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
