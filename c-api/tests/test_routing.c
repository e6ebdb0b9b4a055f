/*
 * Routing through the C API: a 9-bucket log table and a 6-bucket primary-key table are written,
 * read (whole and bucket by bucket), looked up and subscribed to; riverlet_table_bucket_leaders
 * must name a leader for every bucket, and every tablet server must lead buckets of each table.
 *
 * Server: RIVERLET_TEST_BOOTSTRAP=host:port with FLUSS_TABLETS=0=host:port,1=host:port,...
 * (tests/fluss-cluster/run-interop.sh: three Apache Fluss tablet servers), or, without
 * RIVERLET_TEST_BOOTSTRAP, an embedded server started here (one server, id 0, leads all; run by
 * tests/run.sh). The last line is "c-api routing: N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arrow_util.h"
#include "riverlet.h"

#include "check.h"

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

#define MAX_SERVERS 16
#define MAX_BUCKETS 64
#define LOG_BUCKETS 9
#define PK_BUCKETS 6
#define LOG_ROWS 270
#define PK_ROWS 120

/* The tablet servers: ids and "host:port" addresses. */
static int n_servers = 0;
static int32_t server_ids[MAX_SERVERS];
static char server_addresses[MAX_SERVERS][128];

/* FLUSS_TABLETS "0=127.0.0.1:P0,1=127.0.0.1:P1,..." */
static bool parse_tablets(const char *text) {
  const char *p = text;
  while (*p != '\0' && n_servers < MAX_SERVERS) {
    char *end = NULL;
    long id = strtol(p, &end, 10);
    const char *comma;
    size_t len;
    if (end == p || *end != '=') return false;
    p = end + 1;
    comma = strchr(p, ',');
    len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= sizeof server_addresses[0]) return false;
    server_ids[n_servers] = (int32_t)id;
    memcpy(server_addresses[n_servers], p, len);
    server_addresses[n_servers][len] = '\0';
    n_servers++;
    p = comma ? comma + 1 : p + len;
  }
  return n_servers > 0;
}

/* One bucket's leader as riverlet_table_bucket_leaders gives it. */
typedef struct {
  int32_t bucket;
  bool led;
  int32_t leader_id;
  char address[128];
} Leader;

/* Reads the leaders of a table without partitions; the number of rows, -1 on an error. */
static int read_leaders(RiverletTable *table, Leader *out, int cap) {
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  int n = 0;
  if (!OK(riverlet_table_bucket_leaders(table, &stream))) return -1;
  if (stream.get_schema(&stream, &schema) != 0) {
    stream.release(&stream);
    return -1;
  }
  CHECK(schema.n_children == 5 && strcmp(schema.children[2]->name, "bucket") == 0 &&
        strcmp(schema.children[3]->name, "leader_id") == 0 &&
        strcmp(schema.children[4]->name, "leader_address") == 0);
  schema.release(&schema);
  for (;;) {
    struct ArrowArray a;
    int64_t r;
    if (stream.get_next(&stream, &a) != 0) {
      n = -1;
      break;
    }
    if (a.release == NULL) break;
    for (r = 0; r < a.length && n < cap; r++, n++) {
      int64_t i = r + a.offset;
      const struct ArrowArray *ids = a.children[3];
      const struct ArrowArray *addr = a.children[4];
      out[n].bucket = ((const int32_t *)a.children[2]->buffers[1])[i];
      out[n].led = au_is_valid(ids, i);
      out[n].leader_id = out[n].led ? ((const int32_t *)ids->buffers[1])[i] : -1;
      out[n].address[0] = '\0';
      if (au_is_valid(addr, i)) {
        const int32_t *off = (const int32_t *)addr->buffers[1];
        int len = off[i + 1] - off[i];
        if (len >= (int)sizeof out[n].address) len = (int)sizeof out[n].address - 1;
        memcpy(out[n].address, (const char *)addr->buffers[2] + off[i], (size_t)len);
        out[n].address[len] = '\0';
      }
    }
    a.release(&a);
  }
  stream.release(&stream);
  return n;
}

/* Creates the table and waits until every bucket has a leader. Apache Fluss 0.9.1's coordinator
 * now and then never assigns a new table's buckets (tests/README.md): then the table is dropped
 * and created again, up to three attempts. Returns the open table or NULL. */
static RiverletTable *create_led_table(RiverletConnection *conn, const char *db, const char *name,
                                       const struct ArrowSchema *schema,
                                       const RiverletTableOptions *opts) {
  int attempt, i, n;
  Leader leaders[MAX_BUCKETS];
  for (attempt = 1; attempt <= 3; attempt++) {
    RiverletTable *table = NULL;
    if (!OK(riverlet_create_table(conn, db, name, schema, opts, false))) return NULL;
    if (!OK(riverlet_connection_get_table(conn, db, name, &table))) return NULL;
    for (i = 0; i < 100; i++) { /* 20 s */
      bool all = true;
      int b;
      n = read_leaders(table, leaders, MAX_BUCKETS);
      if (n != opts->bucket_count) return table; /* the caller's checks report it */
      for (b = 0; b < n; b++) all = all && leaders[b].led;
      if (all) return table;
      sleep_ms(200);
    }
    fprintf(stderr, "table %s.%s got no leader within 20 s (attempt %d): creating it again\n", db,
            name, attempt);
    OK(riverlet_table_free(table));
    OK(riverlet_drop_table(conn, db, name, false));
  }
  CHECK(!"a table got no leader in three attempts (see the coordinator log)");
  return NULL;
}

/* Every bucket in order with a leader; every server leads at least one at its own address. */
static void check_leaders(RiverletTable *table, int buckets, const char *what) {
  Leader leaders[MAX_BUCKETS];
  int led_by[MAX_SERVERS] = {0};
  int n = read_leaders(table, leaders, MAX_BUCKETS);
  int b, s;
  CHECK(n == buckets);
  for (b = 0; b < n; b++) {
    bool known = false;
    CHECK(leaders[b].bucket == b);
    CHECK(leaders[b].led);
    for (s = 0; s < n_servers; s++) {
      if (leaders[b].led && leaders[b].leader_id == server_ids[s]) {
        known = true;
        led_by[s]++;
        CHECK(strcmp(leaders[b].address, server_addresses[s]) == 0);
      }
    }
    CHECK(known);
  }
  printf("c-api routing: %s:", what);
  for (s = 0; s < n_servers; s++) {
    printf(" server %d leads %d bucket(s)", server_ids[s], led_by[s]);
    CHECK(led_by[s] > 0);
  }
  printf("\n");
}

/* (id BIGINT NOT NULL, name STRING, score INT) */
static void rows_schema(struct ArrowSchema *s) {
  au_schema_init(s, 3);
  au_schema_set(s, 0, "id", "l", false);
  au_schema_set(s, 1, "name", "u", true);
  au_schema_set(s, 2, "score", "i", true);
}

/* The row of id i (version v): name "n<i>" or "v<v>-<i>", score i * 10 + v. */
static void rows_batch(struct ArrowArray *a, int64_t first, int64_t count, int64_t step, int v) {
  int64_t *ids = (int64_t *)calloc((size_t)count, sizeof(int64_t));
  int32_t *scores = (int32_t *)calloc((size_t)count, sizeof(int32_t));
  char **names = (char **)calloc((size_t)count, sizeof(char *));
  int64_t i;
  for (i = 0; i < count; i++) {
    char buf[32];
    ids[i] = first + i * step;
    scores[i] = (int32_t)(ids[i] * 10 + v);
    if (v == 0) {
      snprintf(buf, sizeof buf, "n%" PRId64, ids[i]);
    } else {
      snprintf(buf, sizeof buf, "v%d-%" PRId64, v, ids[i]);
    }
    names[i] = au_strdup(buf);
  }
  au_array_init(a, count, 3);
  au_array_set_int64(a, 0, ids, NULL);
  au_array_set_utf8(a, 1, (const char *const *)names);
  au_array_set_int32(a, 2, scores, NULL);
  for (i = 0; i < count; i++) free(names[i]);
  free(names);
  free(ids);
  free(scores);
}

/* Reads a stream to its end: the number of rows, the sum of column `col` (int64) and of the
 * scores (column `col` + 2, int32) into the out-pointers; -1 on a stream error. */
static int64_t sum_rows(struct ArrowArrayStream *s, int col, int64_t *id_sum, int64_t *score_sum) {
  int64_t rows = 0;
  *id_sum = 0;
  *score_sum = 0;
  for (;;) {
    struct ArrowArray a;
    int64_t r;
    if (s->get_next(s, &a) != 0) {
      fprintf(stderr, "stream error: %s\n", s->get_last_error(s));
      rows = -1;
      break;
    }
    if (a.release == NULL) break;
    for (r = 0; r < a.length; r++) {
      *id_sum += ((const int64_t *)a.children[col]->buffers[1])[r + a.offset];
      *score_sum += ((const int32_t *)a.children[col + 2]->buffers[1])[r + a.offset];
    }
    rows += a.length;
    a.release(&a);
  }
  s->release(s);
  return rows;
}

static void test_log_table(RiverletConnection *conn, const char *db) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  RiverletReadOptions ropts;
  RiverletSubscribeOptions sopts;
  RiverletTable *table;
  RiverletWriter *writer = NULL;
  RiverletSubscription *sub = NULL;
  const char *bucket_keys[] = {"id"};
  int64_t want_ids = (int64_t)LOG_ROWS * (LOG_ROWS - 1) / 2, want_scores = want_ids * 10;
  int64_t ids, scores, total = 0;
  int32_t b;

  rows_schema(&schema);
  memset(&opts, 0, sizeof opts);
  opts.bucket_keys = bucket_keys;
  opts.num_bucket_keys = 1;
  opts.bucket_count = LOG_BUCKETS;
  table = create_led_table(conn, db, "events", &schema, &opts);
  if (table == NULL) {
    au_schema_release(&schema);
    return;
  }
  check_leaders(table, LOG_BUCKETS, "log table");

  if (OK(riverlet_table_new_append_writer(table, &writer))) {
    rows_batch(&array, 0, LOG_ROWS / 2, 1, 0);
    OK(riverlet_writer_append(writer, &array, &schema));
    rows_batch(&array, LOG_ROWS / 2, LOG_ROWS - LOG_ROWS / 2, 1, 0);
    OK(riverlet_writer_append(writer, &array, &schema));
    OK(riverlet_writer_flush(writer));
    OK(riverlet_writer_free(writer));
  }

  /* the whole table, then each bucket from its leader: every bucket holds rows */
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    CHECK(sum_rows(&stream, 0, &ids, &scores) == LOG_ROWS);
    CHECK(ids == want_ids && scores == want_scores);
  }
  memset(&ropts, 0, sizeof ropts);
  ropts.num_buckets = 1;
  for (b = 0; b < LOG_BUCKETS; b++) {
    int64_t n;
    ropts.buckets = &b;
    if (!OK(riverlet_table_read(table, &ropts, &stream))) continue;
    n = sum_rows(&stream, 0, &ids, &scores);
    CHECK(n > 0);
    total += n > 0 ? n : 0;
  }
  CHECK(total == LOG_ROWS);

  /* a subscription from the earliest offset: every row once */
  memset(&sopts, 0, sizeof sopts);
  sopts.startup_mode = "earliest";
  if (OK(riverlet_table_subscribe(table, &sopts, &sub))) {
    int64_t rows = 0, id_sum = 0, i;
    for (i = 0; i < 600 && rows < LOG_ROWS; i++) {
      int64_t n, s_ids, s_scores;
      if (!OK(riverlet_subscription_poll(sub, 100, &stream))) break;
      /* columns: _change_type, _log_offset, _commit_timestamp, id, name, score */
      n = sum_rows(&stream, 3, &s_ids, &s_scores);
      if (n < 0) break;
      rows += n;
      id_sum += s_ids;
    }
    CHECK(rows == LOG_ROWS);
    CHECK(id_sum == want_ids);
    OK(riverlet_subscription_free(sub));
  }
  check_leaders(table, LOG_BUCKETS, "log table, after the reads");
  OK(riverlet_table_free(table));
  au_schema_release(&schema);
}

static void test_pk_table(RiverletConnection *conn, const char *db) {
  struct ArrowSchema schema, key_schema;
  struct ArrowArray array;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  RiverletTable *table;
  RiverletWriter *writer = NULL;
  const char *pk[] = {"id"};
  int64_t ids, scores, i;
  int64_t want_ids = 0, want_scores = 0;

  rows_schema(&schema);
  memset(&opts, 0, sizeof opts);
  opts.primary_key = pk;
  opts.num_primary_key = 1;
  opts.bucket_count = PK_BUCKETS;
  table = create_led_table(conn, db, "accounts", &schema, &opts);
  if (table == NULL) {
    au_schema_release(&schema);
    return;
  }
  check_leaders(table, PK_BUCKETS, "primary-key table");

  /* every key once (version 0), then every fourth key again (version 1) */
  if (OK(riverlet_table_new_upsert_writer(table, NULL, 0, &writer))) {
    rows_batch(&array, 0, PK_ROWS, 1, 0);
    OK(riverlet_writer_upsert(writer, &array, &schema));
    rows_batch(&array, 0, PK_ROWS / 4, 4, 1);
    OK(riverlet_writer_upsert(writer, &array, &schema));
    OK(riverlet_writer_flush(writer));
    OK(riverlet_writer_free(writer));
  }
  for (i = 0; i < PK_ROWS; i++) {
    want_ids += i;
    want_scores += i * 10 + (i % 4 == 0 ? 1 : 0);
  }
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    CHECK(sum_rows(&stream, 0, &ids, &scores) == PK_ROWS);
    CHECK(ids == want_ids && scores == want_scores);
  }
  /* lookups of every key plus two without a row */
  {
    int64_t keys[PK_ROWS + 2];
    for (i = 0; i < PK_ROWS + 2; i++) keys[i] = i;
    au_schema_init(&key_schema, 1);
    au_schema_set(&key_schema, 0, "id", "l", false);
    au_array_init(&array, PK_ROWS + 2, 1);
    au_array_set_int64(&array, 0, keys, NULL);
    if (OK(riverlet_table_lookup(table, &array, &key_schema, &stream))) {
      CHECK(sum_rows(&stream, 0, &ids, &scores) == PK_ROWS);
      CHECK(ids == want_ids && scores == want_scores);
    }
    au_schema_release(&key_schema);
  }
  check_leaders(table, PK_BUCKETS, "primary-key table, after the reads");
  OK(riverlet_table_free(table));
  au_schema_release(&schema);
}

int main(void) {
  RiverletLocalServer *server = NULL;
  RiverletConnection *conn = NULL;
  const char *bootstrap = getenv("RIVERLET_TEST_BOOTSTRAP");
  char db[64];

  if (bootstrap != NULL && bootstrap[0] != '\0') {
    const char *tablets = getenv("FLUSS_TABLETS");
    if (tablets == NULL || !parse_tablets(tablets)) {
      fprintf(stderr, "RIVERLET_TEST_BOOTSTRAP is set: FLUSS_TABLETS must name the tablet "
                      "servers (id=host:port,...)\n");
      return 1;
    }
  } else {
    if (!OK(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, &server))) return 1;
    if (!OK(riverlet_local_server_bootstrap_servers(server, &bootstrap))) return 1;
    server_ids[0] = 0;
    snprintf(server_addresses[0], sizeof server_addresses[0], "%s", bootstrap);
    n_servers = 1;
  }
  snprintf(db, sizeof db, "c_routing_%ld_%ld", (long)getpid(), (long)time(NULL));
  if (OK(riverlet_connect(bootstrap, NULL, NULL, 0, &conn))) {
    if (OK(riverlet_create_database(conn, db, false))) {
      test_log_table(conn, db);
      test_pk_table(conn, db);
      OK(riverlet_drop_database(conn, db, false, true));
    }
    OK(riverlet_connection_free(conn));
  }
  if (server != NULL) {
    OK(riverlet_local_server_stop(server));
    OK(riverlet_local_server_free(server));
  }
  CHECK(riverlet_live_handles() == 0);
  printf("c-api routing: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
