/*
 * C tests of the Riverlet C API, built with -Wall -Wextra -Werror -fsanitize=address,undefined
 * by tests/run.sh and run with LeakSanitizer on. They start an embedded server, so they need no
 * cluster. The last line is "c-api: N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
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

/* Reads a stream to the end, returning its row count (-1 on a stream error) and releasing it. */
static int64_t count_rows(struct ArrowArrayStream *s) {
  int64_t rows = 0;
  for (;;) {
    struct ArrowArray a;
    if (s->get_next(s, &a) != 0) {
      rows = -1;
      break;
    }
    if (a.release == NULL) break;
    rows += a.length;
    a.release(&a);
  }
  s->release(s);
  return rows;
}

/* Prints a stream into a buffer (sorted rows), for comparisons. */
static char *stream_text(struct ArrowArrayStream *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  au_print_stream(s, "", f);
  fclose(f);
  return buf;
}

/* ---- the schemas and batches used below ---- */

/* events(id BIGINT NOT NULL, name STRING, score INT) */
static void events_schema(struct ArrowSchema *s) {
  au_schema_init(s, 3);
  au_schema_set(s, 0, "id", "l", false);
  au_schema_set(s, 1, "name", "u", true);
  au_schema_set(s, 2, "score", "i", true);
}

static void events_batch(struct ArrowArray *a, int64_t first_id, int64_t rows) {
  int64_t ids[16];
  int32_t scores[16];
  const char *names[16];
  static const char *pool[] = {"ann", "bob", "cy", "dee", NULL, "eve", "fay", "gus"};
  int64_t i;
  for (i = 0; i < rows; i++) {
    ids[i] = first_id + i;
    scores[i] = (int32_t)(10 * (first_id + i));
    names[i] = pool[(first_id + i) % 8];
  }
  au_array_init(a, rows, 3);
  au_array_set_int64(a, 0, ids, NULL);
  au_array_set_utf8(a, 1, names);
  au_array_set_int32(a, 2, scores, NULL);
}

/* ---- tests ---- */

static void test_status_codes(void) {
  CHECK(strcmp(riverlet_status_name(RIVERLET_STATUS_OK), "OK") == 0);
  CHECK(strcmp(riverlet_status_name(RIVERLET_STATUS_NOT_FOUND), "NOT_FOUND") == 0);
  CHECK(strcmp(riverlet_status_name(RIVERLET_STATUS_CLOSED), "CLOSED") == 0);
  CHECK(strcmp(riverlet_status_name(RIVERLET_STATUS_NULL_ARGUMENT), "NULL_ARGUMENT") == 0);
  CHECK(strcmp(riverlet_status_name(RIVERLET_STATUS_PANIC), "PANIC") == 0);
  CHECK(strcmp(riverlet_status_name(12345), "UNKNOWN") == 0);
  CHECK(RIVERLET_STATUS_OK == 0 && RIVERLET_STATUS_NOT_FOUND == 1 &&
        RIVERLET_STATUS_INTERNAL == 12 && RIVERLET_STATUS_NULL_ARGUMENT == 100 &&
        RIVERLET_STATUS_PANIC == 101);
  CHECK(strlen(riverlet_version()) > 0);
  CHECK(riverlet_last_error_message() == NULL);
  CHECK(riverlet_last_error_fluss_code() == 0);
}

static void test_null_arguments(void) {
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  struct ArrowArray array;
  RiverletConnection *conn = NULL;
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  const char *text = NULL;
  bool flag = false;

  /* freeing NULL is fine */
  OK(riverlet_connection_free(NULL));
  OK(riverlet_table_free(NULL));
  OK(riverlet_writer_free(NULL));
  OK(riverlet_local_server_free(NULL));
  CHECK(riverlet_last_error_message() == NULL);

  EXPECT(riverlet_connect(NULL, NULL, NULL, 0, &conn), RIVERLET_STATUS_NULL_ARGUMENT);
  CHECK(riverlet_last_error_message() != NULL);
  MSG_HAS("bootstrap_servers");
  CHECK(conn == NULL);
  EXPECT(riverlet_connect("127.0.0.1:1", NULL, NULL, 0, NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_connect("127.0.0.1:1", NULL, NULL, 1, &conn), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, NULL),
         RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_local_server_bootstrap_servers(NULL, &text), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_local_server_stop(NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_create_database(NULL, "db", false), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_drop_database(NULL, "db", false, false), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_database_exists(NULL, "db", &flag), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_list_databases(NULL, &stream), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_list_tables(NULL, "db", &stream), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_create_table(NULL, "db", "t", NULL, NULL, false),
         RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_drop_table(NULL, "db", "t", false), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_add_columns(NULL, "db", "t", NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_exists(NULL, "db", "t", &flag), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_connection_get_table(NULL, "db", "t", &table), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_schema(NULL, &schema), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_has_primary_key(NULL, &flag), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_new_append_writer(NULL, &writer), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_new_upsert_writer(NULL, NULL, 0, &writer),
         RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_writer_flush(NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_read(NULL, NULL, &stream), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_read_between(NULL, NULL, "0", NULL, &stream),
         RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_read_between_ms(NULL, NULL, 0, NULL, &stream),
         RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_writer_append(NULL, NULL, NULL), RIVERLET_STATUS_NULL_ARGUMENT);

  /* a NULL writer still consumes (releases) the array it was given */
  events_schema(&schema);
  events_batch(&array, 0, 2);
  EXPECT(riverlet_writer_append(NULL, &array, &schema), RIVERLET_STATUS_NULL_ARGUMENT);
  CHECK(array.release == NULL);
  events_batch(&array, 0, 2);
  EXPECT(riverlet_writer_upsert(NULL, &array, &schema), RIVERLET_STATUS_NULL_ARGUMENT);
  CHECK(array.release == NULL);
  events_batch(&array, 0, 2);
  EXPECT(riverlet_writer_delete(NULL, &array, NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  CHECK(array.release == NULL);
  events_batch(&array, 0, 2);
  EXPECT(riverlet_table_lookup(NULL, &array, &schema, &stream), RIVERLET_STATUS_NULL_ARGUMENT);
  CHECK(array.release == NULL);
  schema.release(&schema);

  /* a successful call clears the last error */
  OK(riverlet_table_free(NULL));
  CHECK(riverlet_last_error_message() == NULL);
}

static void test_foreign_handles(void) {
  /* values that were never handles are reported, not dereferenced */
  RiverletConnection *fake_conn = (RiverletConnection *)(uintptr_t)0x1000;
  RiverletTable *fake_table = (RiverletTable *)(uintptr_t)0x7fff0;
  bool flag;
  EXPECT(riverlet_database_exists(fake_conn, "db", &flag), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("connection");
  EXPECT(riverlet_table_has_primary_key(fake_table, &flag), RIVERLET_STATUS_INVALID_ARGUMENT);
  EXPECT(riverlet_connection_free(fake_conn), RIVERLET_STATUS_INVALID_ARGUMENT);
}

static RiverletLocalServer *g_server = NULL;
static const char *g_bootstrap = NULL;

static void test_server_and_connect(void) {
  RiverletConnection *conn = NULL;
  const char *bad_keys[] = {"client.no-such-option"};
  const char *bad_values[] = {"1"};
  const char *server_bad_keys[] = {"fsync"};
  const char *server_bad_values[] = {"sometimes"};
  RiverletLocalServer *other = NULL;

  EXPECT(riverlet_local_server_start(NULL, 0, server_bad_keys, server_bad_values, 1, &other),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("sometimes");
  CHECK(other == NULL);

  OK(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, &g_server));
  CHECK(g_server != NULL);
  OK(riverlet_local_server_bootstrap_servers(g_server, &g_bootstrap));
  CHECK(g_bootstrap != NULL && strncmp(g_bootstrap, "127.0.0.1:", 10) == 0);

  EXPECT(riverlet_connect(g_bootstrap, bad_keys, bad_values, 1, &conn),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("client.no-such-option");
  CHECK(conn == NULL);
  EXPECT(riverlet_connect("no-port", NULL, NULL, 0, &conn), RIVERLET_STATUS_INVALID_ARGUMENT);

  OK(riverlet_connect(g_bootstrap, NULL, NULL, 0, &conn));
  CHECK(conn != NULL);
  OK(riverlet_connection_free(conn));
  /* use after free and double free are reported */
  {
    bool flag;
    EXPECT(riverlet_database_exists(conn, "fluss", &flag), RIVERLET_STATUS_CLOSED);
    MSG_HAS("freed");
    EXPECT(riverlet_connection_free(conn), RIVERLET_STATUS_CLOSED);
  }
}

static void test_sasl(void) {
  RiverletLocalServer *server = NULL;
  RiverletConnection *conn = NULL;
  const char *bootstrap = NULL;
  const char *skeys[] = {"sasl.user.alice", "fsync"};
  const char *svalues[] = {"secret", "never"};
  const char *ckeys[] = {"client.security.protocol", "client.security.sasl.username",
                         "client.security.sasl.password"};
  const char *good[] = {"SASL", "alice", "secret"};
  const char *bad[] = {"SASL", "alice", "wrong"};
  bool flag = false;

  OK(riverlet_local_server_start(NULL, 0, skeys, svalues, 2, &server));
  OK(riverlet_local_server_bootstrap_servers(server, &bootstrap));
  EXPECT(riverlet_connect(bootstrap, ckeys, bad, 3, &conn), RIVERLET_STATUS_AUTHENTICATION);
  CHECK(conn == NULL);
  OK(riverlet_connect(bootstrap, ckeys, good, 3, &conn));
  OK(riverlet_database_exists(conn, "fluss", &flag));
  OK(riverlet_connection_free(conn));
  OK(riverlet_local_server_stop(server));
  EXPECT(riverlet_local_server_stop(server), RIVERLET_STATUS_CLOSED);
  EXPECT(riverlet_local_server_bootstrap_servers(server, &bootstrap), RIVERLET_STATUS_CLOSED);
  OK(riverlet_local_server_free(server));
  EXPECT(riverlet_local_server_free(server), RIVERLET_STATUS_CLOSED);
}

static void test_admin(RiverletConnection *conn) {
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTable *table = NULL;
  bool flag = true;
  const char *pk_missing[] = {"nope"};
  RiverletTableOptions opts;

  OK(riverlet_create_database(conn, "capi", false));
  EXPECT(riverlet_create_database(conn, "capi", false), RIVERLET_STATUS_ALREADY_EXISTS);
  OK(riverlet_create_database(conn, "capi", true));
  OK(riverlet_database_exists(conn, "capi", &flag));
  CHECK(flag);
  OK(riverlet_database_exists(conn, "no_such_db", &flag));
  CHECK(!flag);

  if (OK(riverlet_list_databases(conn, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "database_name='capi'") != NULL);
    free(text);
  }

  /* a log table */
  events_schema(&schema);
  OK(riverlet_create_table(conn, "capi", "events", &schema, NULL, false));
  CHECK(schema.release != NULL); /* borrowed, not released */
  EXPECT(riverlet_create_table(conn, "capi", "events", &schema, NULL, false),
         RIVERLET_STATUS_ALREADY_EXISTS);
  OK(riverlet_create_table(conn, "capi", "events", &schema, NULL, true));
  EXPECT(riverlet_create_table(conn, "no_such_db", "events", &schema, NULL, false),
         RIVERLET_STATUS_NOT_FOUND);

  /* bad schemas */
  memset(&opts, 0, sizeof opts);
  opts.primary_key = pk_missing;
  opts.num_primary_key = 1;
  EXPECT(riverlet_create_table(conn, "capi", "bad1", &schema, &opts, false),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("nope");
  memset(&opts, 0, sizeof opts);
  opts.num_partition_keys = 1; /* partition_keys is NULL */
  EXPECT(riverlet_create_table(conn, "capi", "bad1", &schema, &opts, false),
         RIVERLET_STATUS_NULL_ARGUMENT);
  schema.release(&schema);
  {
    struct ArrowSchema not_struct;
    au_schema_init(&not_struct, 0);
    free((void *)not_struct.format);
    not_struct.format = au_strdup("l");
    EXPECT(riverlet_create_table(conn, "capi", "bad2", &not_struct, NULL, false),
           RIVERLET_STATUS_INVALID_ARGUMENT);
    MSG_HAS("struct");
    not_struct.release(&not_struct);
  }
  {
    struct ArrowSchema dur;
    au_schema_init(&dur, 2);
    au_schema_set(&dur, 0, "id", "l", false);
    au_schema_set(&dur, 1, "d", "tDs", true); /* duration: no Fluss type */
    EXPECT(riverlet_create_table(conn, "capi", "bad3", &dur, NULL, false),
           RIVERLET_STATUS_UNSUPPORTED);
    MSG_HAS("'d'");
    dur.release(&dur);
  }
  {
    struct ArrowSchema garbage;
    au_schema_init(&garbage, 1);
    au_schema_set(&garbage, 0, "x", "?!", true);
    EXPECT(riverlet_create_table(conn, "capi", "bad4", &garbage, NULL, false),
           RIVERLET_STATUS_INVALID_ARGUMENT);
    garbage.release(&garbage);
  }
  {
    struct ArrowSchema released;
    memset(&released, 0, sizeof released);
    EXPECT(riverlet_create_table(conn, "capi", "bad5", &released, NULL, false),
           RIVERLET_STATUS_INVALID_ARGUMENT);
    MSG_HAS("released");
  }

  OK(riverlet_table_exists(conn, "capi", "events", &flag));
  CHECK(flag);
  OK(riverlet_table_exists(conn, "capi", "bad1", &flag));
  CHECK(!flag);

  /* unknown table */
  EXPECT(riverlet_connection_get_table(conn, "capi", "no_such_table", &table),
         RIVERLET_STATUS_NOT_FOUND);
  CHECK(table == NULL);
  EXPECT(riverlet_drop_table(conn, "capi", "no_such_table", false), RIVERLET_STATUS_NOT_FOUND);
  OK(riverlet_drop_table(conn, "capi", "no_such_table", true));

  if (OK(riverlet_list_tables(conn, "capi", &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text, "{table_name='events'}\n") == 0);
    free(text);
  }
}

static void append_events(RiverletWriter *w, int64_t first, int64_t rows) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  events_schema(&schema);
  events_batch(&array, first, rows);
  OK(riverlet_writer_append(w, &array, &schema));
  CHECK(array.release == NULL); /* moved */
  schema.release(&schema);
}

static void test_log_table(RiverletConnection *conn) {
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  bool has_pk = true;
  int64_t t_mid, end_ms;
  RiverletReadOptions opts;
  const char *cols[] = {"name", "id"};
  const char *bad_cols[] = {"nope"};

  OK(riverlet_connection_get_table(conn, "capi", "events", &table));
  OK(riverlet_table_has_primary_key(table, &has_pk));
  CHECK(!has_pk);
  OK(riverlet_table_schema(table, &schema));
  CHECK(strcmp(schema.format, "+s") == 0 && schema.n_children == 3);
  CHECK(strcmp(schema.children[0]->name, "id") == 0 && strcmp(schema.children[0]->format, "l") == 0);
  CHECK(strcmp(schema.children[1]->format, "u") == 0);
  schema.release(&schema);

  OK(riverlet_table_new_append_writer(table, &writer));
  append_events(writer, 1, 3);
  OK(riverlet_writer_flush(writer));

  /* upsert into a log table is refused */
  {
    struct ArrowArray array;
    events_schema(&schema);
    events_batch(&array, 9, 1);
    EXPECT(riverlet_writer_upsert(writer, &array, &schema), RIVERLET_STATUS_INVALID_ARGUMENT);
    CHECK(array.release == NULL);
    schema.release(&schema);
  }
  /* a batch whose columns do not match the table */
  {
    struct ArrowSchema other;
    struct ArrowArray array;
    int64_t v[1] = {1};
    au_schema_init(&other, 1);
    au_schema_set(&other, 0, "unrelated", "l", false);
    au_array_init(&array, 1, 1);
    au_array_set_int64(&array, 0, v, NULL);
    EXPECT(riverlet_writer_append(writer, &array, &other), RIVERLET_STATUS_INVALID_ARGUMENT);
    CHECK(array.release == NULL);
    other.release(&other);
  }
  /* an array that was already released */
  {
    struct ArrowArray released;
    memset(&released, 0, sizeof released);
    events_schema(&schema);
    EXPECT(riverlet_writer_append(writer, &released, &schema), RIVERLET_STATUS_INVALID_ARGUMENT);
    schema.release(&schema);
  }

  sleep_ms(30);
  t_mid = now_ms();
  sleep_ms(30);
  append_events(writer, 4, 2);
  OK(riverlet_writer_flush(writer));
  OK(riverlet_writer_free(writer));

  /* full read */
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{id=1, name='bob', score=10}\n"
                 "{id=2, name='cy', score=20}\n"
                 "{id=3, name='dee', score=30}\n"
                 "{id=4, name=null, score=40}\n"
                 "{id=5, name='eve', score=50}\n") == 0);
    if (strstr(text, "id=5") == NULL) fprintf(stderr, "full read was:\n%s", text);
    free(text);
  }
  /* projection, filter, limit */
  memset(&opts, 0, sizeof opts);
  opts.columns = cols;
  opts.num_columns = 2;
  opts.filter = "score >= 20 AND name IS NOT NULL";
  if (OK(riverlet_table_read(table, &opts, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{name='cy', id=2}\n"
                 "{name='dee', id=3}\n"
                 "{name='eve', id=5}\n") == 0);
    free(text);
  }
  memset(&opts, 0, sizeof opts);
  opts.limit = 2;
  if (OK(riverlet_table_read(table, &opts, &stream))) CHECK(count_rows(&stream) == 2);

  /* bad reads fail before any stream is made */
  memset(&opts, 0, sizeof opts);
  opts.filter = "score >>> 3";
  EXPECT(riverlet_table_read(table, &opts, &stream), RIVERLET_STATUS_INVALID_ARGUMENT);
  opts.filter = "no_such_column = 1";
  EXPECT(riverlet_table_read(table, &opts, &stream), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("no_such_column");
  memset(&opts, 0, sizeof opts);
  opts.columns = bad_cols;
  opts.num_columns = 1;
  EXPECT(riverlet_table_read(table, &opts, &stream), RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("nope");

  /* time-range reads */
  if (OK(riverlet_table_read_between_ms(table, NULL, t_mid, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{id=4, name=null, score=40}\n"
                 "{id=5, name='eve', score=50}\n") == 0);
    free(text);
  }
  end_ms = t_mid;
  if (OK(riverlet_table_read_between_ms(table, NULL, 0, &end_ms, &stream))) CHECK(count_rows(&stream) == 3);
  memset(&opts, 0, sizeof opts);
  opts.time_zone = "UTC";
  if (OK(riverlet_table_read_between(table, &opts, "1970-01-01 00:00:00", NULL, &stream))) CHECK(count_rows(&stream) == 5);
  opts.time_zone = "+08:00";
  if (OK(riverlet_table_read_between(table, &opts, "1970-01-01 08:00:00", NULL, &stream))) CHECK(count_rows(&stream) == 5);
  {
    char start[32];
    snprintf(start, sizeof start, "%" PRId64, t_mid);
    if (OK(riverlet_table_read_between(table, NULL, start, NULL, &stream))) CHECK(count_rows(&stream) == 2);
  }
  /* bad timestamps and windows */
  EXPECT(riverlet_table_read_between(table, NULL, "yesterday-ish", NULL, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("yesterday-ish");
  EXPECT(riverlet_table_read_between(table, NULL, "", NULL, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  EXPECT(riverlet_table_read_between(table, NULL, "2024-01-02", "2024-01-01", &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  end_ms = 5;
  EXPECT(riverlet_table_read_between_ms(table, NULL, 10, &end_ms, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  EXPECT(riverlet_table_read_between(table, NULL, NULL, "2024-01-01", &stream),
         RIVERLET_STATUS_NULL_ARGUMENT);
  opts.time_zone = "Mars/Olympus_Mons";
  EXPECT(riverlet_table_read_between(table, &opts, "2024-01-01", NULL, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);

  /* use after free of a table */
  OK(riverlet_table_free(table));
  EXPECT(riverlet_table_read(table, NULL, &stream), RIVERLET_STATUS_CLOSED);
  EXPECT(riverlet_table_free(table), RIVERLET_STATUS_CLOSED);
}

/* kv(k INT NOT NULL, v STRING, n BIGINT), primary key k */
static void kv_schema(struct ArrowSchema *s) {
  au_schema_init(s, 3);
  au_schema_set(s, 0, "k", "i", false);
  au_schema_set(s, 1, "v", "u", true);
  au_schema_set(s, 2, "n", "l", true);
}

static void kv_batch(struct ArrowArray *a, int64_t rows, const int32_t *k, const char *const *v,
                     const int64_t *n) {
  au_array_init(a, rows, 3);
  au_array_set_int32(a, 0, k, NULL);
  au_array_set_utf8(a, 1, v);
  au_array_set_int64(a, 2, n, NULL);
}

static void test_pk_table(RiverletConnection *conn) {
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL, *partial = NULL;
  struct ArrowSchema schema, key_schema;
  struct ArrowArray array;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  const char *pk[] = {"k"};
  const char *pkeys[] = {"table.replication.factor"};
  const char *pvalues[] = {"1"};
  const char *partial_cols[] = {"k", "n"};
  bool has_pk = false;

  memset(&opts, 0, sizeof opts);
  opts.primary_key = pk;
  opts.num_primary_key = 1;
  opts.bucket_count = 2;
  opts.property_keys = pkeys;
  opts.property_values = pvalues;
  opts.num_properties = 1;
  opts.comment = "a primary-key table";
  kv_schema(&schema);
  OK(riverlet_create_table(conn, "capi", "kv", &schema, &opts, false));
  OK(riverlet_connection_get_table(conn, "capi", "kv", &table));
  OK(riverlet_table_has_primary_key(table, &has_pk));
  CHECK(has_pk);

  /* an append writer is refused for a primary-key table */
  EXPECT(riverlet_table_new_append_writer(table, &writer), RIVERLET_STATUS_INVALID_ARGUMENT);
  CHECK(writer == NULL);

  OK(riverlet_table_new_upsert_writer(table, NULL, 0, &writer));
  {
    int32_t k[] = {1, 2, 3};
    const char *v[] = {"one", "two", "three"};
    int64_t n[] = {100, 200, 300};
    kv_batch(&array, 3, k, v, n);
    OK(riverlet_writer_upsert(writer, &array, &schema));
  }
  EXPECT(riverlet_writer_append(writer, (kv_batch(&array, 0, NULL, NULL, NULL), &array), &schema),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  OK(riverlet_writer_flush(writer));

  /* partial update of n only */
  OK(riverlet_table_new_upsert_writer(table, partial_cols, 2, &partial));
  {
    int32_t k[] = {2};
    const char *v[] = {"ignored"};
    int64_t n[] = {222};
    kv_batch(&array, 1, k, v, n);
    OK(riverlet_writer_upsert(partial, &array, &schema));
  }
  OK(riverlet_writer_free(partial));
  EXPECT(riverlet_table_new_upsert_writer(table, pkeys, 1, &partial),
         RIVERLET_STATUS_INVALID_ARGUMENT);

  /* delete by key batch (key columns only) */
  au_schema_init(&key_schema, 1);
  au_schema_set(&key_schema, 0, "k", "i", false);
  {
    int32_t k[] = {3};
    au_array_init(&array, 1, 1);
    au_array_set_int32(&array, 0, k, NULL);
    OK(riverlet_writer_delete(writer, &array, &key_schema));
  }
  OK(riverlet_writer_flush(writer));

  if (OK(riverlet_table_read(table, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{k=1, v='one', n=100}\n"
                 "{k=2, v='two', n=222}\n") == 0);
    if (strstr(text, "n=222") == NULL) fprintf(stderr, "pk read was:\n%s", text);
    free(text);
  }

  /* read-optimized: each bucket's KV snapshot without the log after it */
  {
    RiverletReadOptions ro;
    memset(&ro, 0, sizeof ro);
    ro.read_optimized = true;
    if (OK(riverlet_table_read(table, &ro, &stream))) {
      char *text = stream_text(&stream);
      CHECK(strcmp(text, "") == 0); /* no snapshot yet: no rows */
      free(text);
    }
    OK(riverlet_local_server_take_kv_snapshots(g_server));
    {
      int32_t k[] = {4};
      const char *v[] = {"four"};
      int64_t n[] = {400};
      kv_batch(&array, 1, k, v, n);
      OK(riverlet_writer_upsert(writer, &array, &schema));
      OK(riverlet_writer_flush(writer));
    }
    if (OK(riverlet_table_read(table, &ro, &stream))) {
      char *text = stream_text(&stream);
      CHECK(strcmp(text,
                   "{k=1, v='one', n=100}\n"
                   "{k=2, v='two', n=222}\n") == 0);
      free(text);
    }
    if (OK(riverlet_table_read(table, NULL, &stream))) {
      char *text = stream_text(&stream);
      CHECK(strstr(text, "{k=4, v='four', n=400}") != NULL);
      free(text);
    }
  }

  /* point lookups: found and missing keys */
  {
    int32_t k[] = {2, 3, 1};
    au_array_init(&array, 3, 1);
    au_array_set_int32(&array, 0, k, NULL);
    if (OK(riverlet_table_lookup(table, &array, &key_schema, &stream))) {
      char *text = stream_text(&stream);
      CHECK(strcmp(text,
                   "{k=1, v='one', n=100}\n"
                   "{k=2, v='two', n=222}\n") == 0);
      free(text);
    }
    CHECK(array.release == NULL);
  }
  {
    struct ArrowSchema wrong;
    int64_t k[] = {1};
    au_schema_init(&wrong, 1);
    au_schema_set(&wrong, 0, "v", "l", false);
    au_array_init(&array, 1, 1);
    au_array_set_int64(&array, 0, k, NULL);
    EXPECT(riverlet_table_lookup(table, &array, &wrong, &stream),
           RIVERLET_STATUS_INVALID_ARGUMENT);
    CHECK(array.release == NULL);
    wrong.release(&wrong);
  }

  OK(riverlet_writer_free(writer));
  /* use after free of a writer */
  {
    int32_t k[] = {9};
    au_array_init(&array, 1, 1);
    au_array_set_int32(&array, 0, k, NULL);
    EXPECT(riverlet_writer_delete(writer, &array, &key_schema), RIVERLET_STATUS_CLOSED);
    CHECK(array.release == NULL);
    EXPECT(riverlet_writer_flush(writer), RIVERLET_STATUS_CLOSED);
    EXPECT(riverlet_writer_free(writer), RIVERLET_STATUS_CLOSED);
  }
  key_schema.release(&key_schema);
  schema.release(&schema);
  OK(riverlet_table_free(table));
}

/* ALTER TABLE ... ADD COLUMN on capi.kv (after test_pk_table): old rows read the column null */
static void test_add_columns(RiverletConnection *conn) {
  struct ArrowSchema cols, bad;
  struct ArrowArrayStream stream;
  RiverletTable *table = NULL;
  au_schema_init(&cols, 1);
  au_schema_set(&cols, 0, "note", "u", true);
  OK(riverlet_add_columns(conn, "capi", "kv", &cols));
  cols.release(&cols);
  au_schema_init(&bad, 1);
  au_schema_set(&bad, 0, "m", "l", false);
  EXPECT(riverlet_add_columns(conn, "capi", "kv", &bad), RIVERLET_STATUS_INVALID_ARGUMENT);
  bad.release(&bad);
  OK(riverlet_connection_get_table(conn, "capi", "kv", &table));
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{k=1, v='one', n=100, note=null}\n"
                 "{k=2, v='two', n=222, note=null}\n"
                 "{k=4, v='four', n=400, note=null}\n") == 0);
    if (strstr(text, "note=null") == NULL) fprintf(stderr, "read after ADD COLUMN:\n%s", text);
    free(text);
  }
  OK(riverlet_table_free(table));
}

/* DELETE / UPDATE by condition on kv2(k INT NOT NULL, v STRING, n BIGINT), primary key k */
static void test_delete_update_where(RiverletConnection *conn) {
  RiverletTable *table = NULL, *log = NULL;
  RiverletWriter *writer = NULL;
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  const char *pk[] = {"k"};
  uint64_t count = 99;

  memset(&opts, 0, sizeof opts);
  opts.primary_key = pk;
  opts.num_primary_key = 1;
  opts.bucket_count = 2;
  kv_schema(&schema);
  OK(riverlet_create_table(conn, "capi", "kv2", &schema, &opts, false));
  OK(riverlet_connection_get_table(conn, "capi", "kv2", &table));
  OK(riverlet_table_new_upsert_writer(table, NULL, 0, &writer));
  {
    int32_t k[] = {1, 2, 3, 4};
    const char *v[] = {"one", "two", "three", "four"};
    int64_t n[] = {100, 200, 300, 400};
    kv_batch(&array, 4, k, v, n);
    OK(riverlet_writer_upsert(writer, &array, &schema));
  }
  OK(riverlet_writer_free(writer));

  /* by key, then by any condition */
  OK(riverlet_table_delete_where(table, "k = 1", &count));
  CHECK(count == 1);
  OK(riverlet_table_delete_where(table, "k = 1", &count));
  CHECK(count == 0);
  OK(riverlet_table_update_where(table, "n >= 300", "v = 'big', n = 0", &count));
  CHECK(count == 2);
  OK(riverlet_table_delete_where(table, "v LIKE 't%'", &count));
  CHECK(count == 1);
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{k=3, v='big', n=0}\n"
                 "{k=4, v='big', n=0}\n") == 0);
    free(text);
  }

  /* errors name what is wrong and change nothing */
  count = 99;
  EXPECT(riverlet_table_update_where(table, "n = 0", "k = 5", &count),
         RIVERLET_STATUS_UNSUPPORTED);
  MSG_HAS("column 'k'");
  CHECK(count == 99);
  EXPECT(riverlet_table_update_where(table, "n = 0", "n = 'many'", &count),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("'many'");
  EXPECT(riverlet_table_update_where(table, "n = 0", "n 1", &count),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("expected '='");
  EXPECT(riverlet_table_delete_where(table, "nope = 1", &count),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("nope");
  EXPECT(riverlet_table_delete_where(table, NULL, &count), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_delete_where(table, "k = 3", NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_update_where(table, "k = 3", NULL, &count),
         RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_delete_where(NULL, "k = 3", &count), RIVERLET_STATUS_NULL_ARGUMENT);
  CHECK(count == 99);
  OK(riverlet_connection_get_table(conn, "capi", "events", &log));
  EXPECT(riverlet_table_delete_where(log, "id = 1", &count), RIVERLET_STATUS_UNSUPPORTED);
  MSG_HAS("Log Table");
  OK(riverlet_table_free(log));
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    CHECK(count_rows(&stream) == 2);
  }
  schema.release(&schema);
  OK(riverlet_table_free(table));
}

/* auto-increment column and lookup-or-insert on dict(name STRING, id BIGINT, note STRING) */
static void test_auto_increment(RiverletConnection *conn) {
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  struct ArrowSchema schema, part_schema, key_schema;
  struct ArrowArray array;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  const char *pk[] = {"name"};
  const char *cols[] = {"name", "note"};

  memset(&opts, 0, sizeof opts);
  opts.primary_key = pk;
  opts.num_primary_key = 1;
  opts.bucket_count = 1;
  opts.auto_increment_column = "id";
  au_schema_init(&schema, 3);
  au_schema_set(&schema, 0, "name", "u", false);
  au_schema_set(&schema, 1, "id", "l", true);
  au_schema_set(&schema, 2, "note", "u", true);
  OK(riverlet_create_table(conn, "capi", "dict", &schema, &opts, false));
  OK(riverlet_connection_get_table(conn, "capi", "dict", &table));

  /* a partial writer that leaves the auto-increment column out */
  OK(riverlet_table_new_upsert_writer(table, cols, 2, &writer));
  au_schema_init(&part_schema, 2);
  au_schema_set(&part_schema, 0, "name", "u", false);
  au_schema_set(&part_schema, 1, "note", "u", true);
  {
    const char *names[] = {"a", "b"};
    const char *notes[] = {"first", "second"};
    au_array_init(&array, 2, 2);
    au_array_set_utf8(&array, 0, names);
    au_array_set_utf8(&array, 1, notes);
    OK(riverlet_writer_upsert(writer, &array, &part_schema));
  }
  OK(riverlet_writer_free(writer));

  /* a full-row writer is refused by the server */
  OK(riverlet_table_new_upsert_writer(table, NULL, 0, &writer));
  {
    const char *names[] = {"x"};
    const char *notes[] = {"n"};
    int64_t ids[] = {99};
    au_array_init(&array, 1, 3);
    au_array_set_utf8(&array, 0, names);
    au_array_set_int64(&array, 1, ids, NULL);
    au_array_set_utf8(&array, 2, notes);
    if (riverlet_writer_upsert(writer, &array, &schema) == RIVERLET_STATUS_OK) {
      EXPECT(riverlet_writer_flush(writer), RIVERLET_STATUS_INVALID_ARGUMENT);
    }
    MSG_HAS("auto-increment column [id]");
  }
  riverlet_writer_free(writer);

  /* lookup-or-insert: "a" exists, "c" is created with the next value */
  au_schema_init(&key_schema, 1);
  au_schema_set(&key_schema, 0, "name", "u", false);
  {
    const char *names[] = {"c", "a"};
    au_array_init(&array, 2, 1);
    au_array_set_utf8(&array, 0, names);
    if (OK(riverlet_table_lookup_or_insert(table, &array, &key_schema, &stream))) {
      char *text = stream_text(&stream);
      CHECK(strcmp(text,
                   "{name='a', id=1, note='first'}\n"
                   "{name='c', id=3, note=null}\n") == 0);
      if (strstr(text, "id=3") == NULL) fprintf(stderr, "lookup_or_insert was:\n%s", text);
      free(text);
    }
    CHECK(array.release == NULL);
  }
  if (OK(riverlet_table_read(table, NULL, &stream))) {
    CHECK(count_rows(&stream) == 3);
  }
  key_schema.release(&key_schema);
  part_schema.release(&part_schema);
  schema.release(&schema);
  OK(riverlet_table_free(table));
}

static void test_closed_connection(void) {
  RiverletConnection *conn = NULL;
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  struct ArrowArrayStream stream;
  struct ArrowArrayStream open_stream;
  int rc;
  struct ArrowArray batch;

  OK(riverlet_connect(g_bootstrap, NULL, NULL, 0, &conn));
  OK(riverlet_connection_get_table(conn, "capi", "events", &table));
  OK(riverlet_table_new_append_writer(table, &writer));
  bool have_stream = OK(riverlet_table_read(table, NULL, &open_stream));
  OK(riverlet_connection_free(conn));

  /* the table and writer outlive their connection's handle but report CLOSED */
  EXPECT(riverlet_table_read(table, NULL, &stream), RIVERLET_STATUS_CLOSED);
  {
    struct ArrowSchema schema;
    struct ArrowArray array;
    events_schema(&schema);
    events_batch(&array, 100, 1);
    {
      RiverletStatus st = riverlet_writer_append(writer, &array, &schema);
      if (st == RIVERLET_STATUS_OK) st = riverlet_writer_flush(writer);
      EXPECT(st, RIVERLET_STATUS_CLOSED);
    }
    schema.release(&schema);
  }
  /* a stream opened before the connection closed either finishes or fails with a message */
  if (have_stream) {
    rc = open_stream.get_next(&open_stream, &batch);
    while (rc == 0 && batch.release != NULL) {
      batch.release(&batch);
      rc = open_stream.get_next(&open_stream, &batch);
    }
    if (rc != 0) {
      const char *e = open_stream.get_last_error(&open_stream);
      CHECK(e != NULL && strstr(e, "riverlet closed: ") != NULL);
      if (e != NULL && strstr(e, "riverlet closed: ") == NULL) fprintf(stderr, "stream error: %s\n", e);
    }
    open_stream.release(&open_stream);
  }
  riverlet_writer_free(writer);
  OK(riverlet_table_free(table));
}

/* A stream that fails inside get_next: the server goes away between batches. */
static void test_stream_error(void) {
  RiverletLocalServer *server = NULL;
  RiverletConnection *conn = NULL;
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  struct ArrowArray batch;
  RiverletTableOptions opts;
  const char *bootstrap = NULL;
  const char *ckeys[] = {"client.request-timeout", "client.retries"};
  const char *cvalues[] = {"2 s", "0"};
  const char *bucket_key[] = {"id"};
  int rc = 0, bucket;

  OK(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, &server));
  OK(riverlet_local_server_bootstrap_servers(server, &bootstrap));
  OK(riverlet_connect(bootstrap, ckeys, cvalues, 2, &conn));
  OK(riverlet_create_database(conn, "s", false));
  /* rows spread over 4 buckets by id. The reader fetches ahead (within a byte budget) from the
   * moment the read is planned, so a read of this small table may be complete before the server
   * is stopped: draining it then succeeds; if it does not, the error must be a typed network or
   * timeout error. A read planned after the stop must fail, always. */
  memset(&opts, 0, sizeof opts);
  opts.bucket_count = 4;
  opts.bucket_keys = bucket_key;
  opts.num_bucket_keys = 1;
  events_schema(&schema);
  OK(riverlet_create_table(conn, "s", "t", &schema, &opts, false));
  schema.release(&schema);
  OK(riverlet_connection_get_table(conn, "s", "t", &table));
  OK(riverlet_table_new_append_writer(table, &writer));
  /* 32 separately flushed writes: many log batches in every bucket */
  for (bucket = 0; bucket < 32; bucket++) {
    int64_t rows = 500, i;
    int64_t *ids = (int64_t *)malloc((size_t)rows * sizeof(int64_t));
    int32_t *scores = (int32_t *)malloc((size_t)rows * sizeof(int32_t));
    const char **names = (const char **)malloc((size_t)rows * sizeof(char *));
    struct ArrowArray array;
    for (i = 0; i < rows; i++) {
      ids[i] = bucket * rows + i;
      scores[i] = (int32_t)i;
      names[i] = "a somewhat longer name so that batches have some weight";
    }
    events_schema(&schema);
    au_array_init(&array, rows, 3);
    au_array_set_int64(&array, 0, ids, NULL);
    au_array_set_utf8(&array, 1, names);
    au_array_set_int32(&array, 2, scores, NULL);
    if (riverlet_writer_append(writer, &array, &schema) != RIVERLET_STATUS_OK) rc = 1;
    if (riverlet_writer_flush(writer) != RIVERLET_STATUS_OK) rc = 1;
    schema.release(&schema);
    free(ids);
    free(scores);
    free(names);
  }
  CHECK(rc == 0);
  OK(riverlet_writer_free(writer));

  if (!OK(riverlet_table_read(table, NULL, &stream))) {
    riverlet_table_free(table);
    riverlet_connection_free(conn);
    riverlet_local_server_free(server);
    return;
  }
  OK(riverlet_local_server_stop(server));
  for (;;) {
    rc = stream.get_next(&stream, &batch);
    if (rc != 0 || batch.release == NULL) break;
    batch.release(&batch);
  }
  if (rc != 0) {
    const char *e = stream.get_last_error(&stream);
    CHECK(e != NULL);
    if (e != NULL) {
      CHECK(strstr(e, "riverlet network: ") != NULL || strstr(e, "riverlet timeout: ") != NULL);
      if (strstr(e, "riverlet network: ") != NULL) CHECK(rc == EIO);
      fprintf(stderr, "note: stream error as expected (errno %d): %s\n", rc, e);
    }
  } else {
    fprintf(stderr, "note: the read was fetched ahead before the server stopped\n");
  }
  stream.release(&stream);
  {
    /* The server is gone: planning a new read fails with a typed error naming the cause. */
    RiverletStatus st = riverlet_table_read(table, NULL, &stream);
    const char *m = riverlet_last_error_message();
    CHECK(st == RIVERLET_STATUS_NETWORK || st == RIVERLET_STATUS_TIMEOUT);
    /* e.g. "read of table 's.t': connecting to 127.0.0.1:N: cannot connect ...: Connection
     * refused" */
    CHECK(m != NULL && strstr(m, "'s.t'") != NULL &&
          (strstr(m, "connect") != NULL || strstr(m, "timed out") != NULL));
    if (st == RIVERLET_STATUS_OK) stream.release(&stream);
  }
  OK(riverlet_table_free(table));
  OK(riverlet_connection_free(conn));
  OK(riverlet_local_server_free(server));
}

static void test_many_cycles(void) {
  int i, bad = 0;
  RiverletConnection *conn = NULL;
  OK(riverlet_connect(g_bootstrap, NULL, NULL, 0, &conn));
  for (i = 0; i < 1000; i++) {
    RiverletTable *table = NULL;
    struct ArrowArrayStream stream;
    if (riverlet_connection_get_table(conn, "capi", "events", &table) != RIVERLET_STATUS_OK) {
      bad++;
      continue;
    }
    if (riverlet_table_read(table, NULL, &stream) != RIVERLET_STATUS_OK ||
        count_rows(&stream) != 5) {
      bad++;
    }
    if (riverlet_table_free(table) != RIVERLET_STATUS_OK) bad++;
  }
  if (bad) fprintf(stderr, "%d of 1000 open/read/close cycles failed: %s\n", bad, msg());
  CHECK(bad == 0);
  OK(riverlet_connection_free(conn));
  /* connections too */
  for (i = 0; i < 20; i++) {
    RiverletConnection *c = NULL;
    if (riverlet_connect(g_bootstrap, NULL, NULL, 0, &c) != RIVERLET_STATUS_OK) bad++;
    if (riverlet_connection_free(c) != RIVERLET_STATUS_OK) bad++;
  }
  CHECK(bad == 0);
}

/* A filtered read of a table with batch statistics lets the server skip the batches whose
 * id range excludes the filter; riverlet_metrics reports how many. */
static void test_statistics_pushdown(RiverletConnection *conn) {
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  RiverletReadOptions ropts;
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  const char *keys[] = {"table.statistics.columns"};
  const char *values[] = {"id"};
  const char *row = "name='riverlet_client_scan_skipped_batches_total', labels='table=capi.stats', value=";
  int batch;

  memset(&opts, 0, sizeof opts);
  opts.bucket_count = 1;
  opts.property_keys = keys;
  opts.property_values = values;
  opts.num_properties = 1;
  events_schema(&schema);
  OK(riverlet_create_table(conn, "capi", "stats", &schema, &opts, false));
  schema.release(&schema);
  OK(riverlet_connection_get_table(conn, "capi", "stats", &table));
  OK(riverlet_table_new_append_writer(table, &writer));
  /* five acknowledged batches: ids 1-3, 4-6, ..., 13-15 */
  for (batch = 0; batch < 5; batch++) {
    append_events(writer, 1 + 3 * batch, 3);
    OK(riverlet_writer_flush(writer));
  }
  OK(riverlet_writer_free(writer));

  memset(&ropts, 0, sizeof ropts);
  ropts.filter = "id >= 13";
  if (OK(riverlet_table_read(table, &ropts, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{id=13, name='eve', score=130}\n"
                 "{id=14, name='fay', score=140}\n"
                 "{id=15, name='gus', score=150}\n") == 0);
    free(text);
  }
  EXPECT(riverlet_metrics(NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  if (OK(riverlet_metrics(&stream))) {
    char *text = stream_text(&stream);
    const char *at = strstr(text, row);
    CHECK(at != NULL);
    /* the first four batches lie below 13 */
    if (at != NULL) CHECK(strtod(at + strlen(row), NULL) == 4.0);
    free(text);
  }
  OK(riverlet_table_free(table));
}

/* The text stream_text prints for events first..last projected to (id, score). */
static char *id_score_text(int64_t first, int64_t last) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int64_t i;
  for (i = first; i <= last; i++) fprintf(f, "{id=%" PRId64 ", score=%" PRId64 "}\n", i, 10 * i);
  fclose(f);
  return buf;
}

/* riverlet_lake_snapshot of finance.events (2 buckets) after one lake commit of 3 rows: the
 * latest, the readable and the by-id snapshot are one, listing both buckets, whose offsets add
 * up to the 3 rows tiered (one record per row); bad requests are typed errors. */
static void check_lake_snapshot(RiverletConnection *conn) {
  struct ArrowArrayStream stream;
  bool found = false;
  int64_t latest = -1, again = -1;
  if (OK(riverlet_lake_snapshot(conn, "finance", "events", NULL, false, &found, &latest,
                                &stream))) {
    char *text = stream_text(&stream), *p = text;
    int64_t tiered = 0;
    int buckets = 0;
    CHECK(found);
    CHECK(latest != -1);
    while ((p = strstr(p, "log_offset=")) != NULL) {
      p += strlen("log_offset=");
      tiered += strtoll(p, NULL, 10); /* "null" (nothing of the bucket tiered) reads as 0 */
      buckets++;
    }
    CHECK(tiered == 3);
    CHECK(buckets == 2);
    CHECK(strstr(text, "{partition_id=null, bucket=0, log_offset=") != NULL);
    CHECK(strstr(text, "{partition_id=null, bucket=1, log_offset=") != NULL);
    free(text);
  }
  found = false;
  if (OK(riverlet_lake_snapshot(conn, "finance", "events", NULL, true, &found, &again, &stream))) {
    CHECK(found && again == latest);
    CHECK(count_rows(&stream) == 2);
  }
  found = false;
  again = -1;
  if (OK(riverlet_lake_snapshot(conn, "finance", "events", &latest, false, &found, &again,
                                &stream))) {
    CHECK(found && again == latest);
    CHECK(count_rows(&stream) == 2);
  }
  EXPECT(riverlet_lake_snapshot(conn, "finance", "events", &latest, true, &found, &again, &stream),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("not both");
  EXPECT(riverlet_lake_snapshot(conn, "finance", "nope", NULL, false, &found, &again, &stream),
         RIVERLET_STATUS_NOT_FOUND);
  MSG_HAS("nope");
  EXPECT(riverlet_lake_snapshot(conn, "finance", "events", NULL, false, NULL, &again, &stream),
         RIVERLET_STATUS_NULL_ARGUMENT);
  MSG_HAS("out_found");
  EXPECT(riverlet_lake_snapshot(NULL, "finance", "events", NULL, false, &found, &again, &stream),
         RIVERLET_STATUS_NULL_ARGUMENT);
}

/* Lake reads against a server tiering to `format` (iceberg or paimon): t$lake,
 * t$lake$snapshots, the union read. */
static void test_lake(const char *format) {
  char warehouse[] = "/tmp/riverlet-c-lake.XXXXXX";
  char warehouse_key[64];
  const char *skeys[] = {"fsync", "datalake.format", warehouse_key};
  const char *svalues[] = {"never", format, warehouse};
  const char *pkeys[] = {"table.datalake.enabled", "table.datalake.freshness"};
  const char *pvalues[] = {"true", "1h"};
  const char *cols[] = {"id", "score"};
  RiverletLocalServer *server = NULL;
  RiverletConnection *conn = NULL;
  RiverletTable *table = NULL, *lake = NULL, *snaps = NULL, *plain = NULL;
  RiverletWriter *writer = NULL;
  RiverletTableOptions topts;
  RiverletReadOptions ro;
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  const char *bootstrap = NULL;
  char cmd[64];

  snprintf(warehouse_key, sizeof warehouse_key, "datalake.%s.warehouse", format);
  if (mkdtemp(warehouse) == NULL) {
    failed++;
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    return;
  }
  if (!OK(riverlet_local_server_start(NULL, 0, skeys, svalues, 3, &server))) return;
  OK(riverlet_local_server_bootstrap_servers(server, &bootstrap));
  OK(riverlet_connect(bootstrap, NULL, NULL, 0, &conn));
  OK(riverlet_create_database(conn, "finance", false));
  memset(&topts, 0, sizeof topts);
  topts.bucket_count = 2;
  topts.property_keys = pkeys;
  topts.property_values = pvalues;
  topts.num_properties = 2;
  events_schema(&schema);
  OK(riverlet_create_table(conn, "finance", "events", &schema, &topts, false));
  OK(riverlet_create_table(conn, "finance", "plain", &schema, NULL, false));
  schema.release(&schema);

  OK(riverlet_connection_get_table(conn, "finance", "events", &table));
  OK(riverlet_table_new_append_writer(table, &writer));
  append_events(writer, 1, 3);
  OK(riverlet_writer_flush(writer));
  {
    /* nothing tiered yet: no snapshot, which is not an error */
    bool found = true;
    int64_t id = 0;
    if (OK(riverlet_lake_snapshot(conn, "finance", "events", NULL, false, &found, &id, &stream))) {
      CHECK(!found && id == -1);
      CHECK(count_rows(&stream) == 0);
    }
  }
  OK(riverlet_local_server_commit_lake(server));
  append_events(writer, 4, 2);
  OK(riverlet_writer_flush(writer));
  check_lake_snapshot(conn);

  memset(&ro, 0, sizeof ro);
  ro.columns = cols;
  ro.num_columns = 2;
  /* the lake: the rows committed before the commit only */
  OK(riverlet_connection_get_table(conn, "finance", "events$lake", &lake));
  if (OK(riverlet_table_read(lake, &ro, &stream))) {
    char *text = stream_text(&stream), *want = id_score_text(1, 3);
    CHECK(strcmp(text, want) == 0);
    free(text);
    free(want);
  }
  {
    RiverletWriter *w = NULL;
    EXPECT(riverlet_table_new_append_writer(lake, &w), RIVERLET_STATUS_UNSUPPORTED);
  }
  /* one snapshot per commit */
  OK(riverlet_connection_get_table(conn, "finance", "events$lake$snapshots", &snaps));
  if (OK(riverlet_table_read(snaps, NULL, &stream))) CHECK(count_rows(&stream) == 1);
  /* the union read: every row once */
  if (OK(riverlet_table_read(table, &ro, &stream))) {
    char *text = stream_text(&stream), *want = id_score_text(1, 5);
    CHECK(strcmp(text, want) == 0);
    free(text);
    free(want);
  }
  /* a table that is not lake-enabled has no lake */
  OK(riverlet_connection_get_table(conn, "finance", "plain$lake", &plain));
  EXPECT(riverlet_table_read(plain, NULL, &stream), RIVERLET_STATUS_NOT_FOUND);
  MSG_HAS("not lake-enabled");

  OK(riverlet_writer_free(writer));
  OK(riverlet_table_free(plain));
  OK(riverlet_table_free(snaps));
  OK(riverlet_table_free(lake));
  OK(riverlet_table_free(table));
  OK(riverlet_connection_free(conn));
  OK(riverlet_local_server_stop(server));
  OK(riverlet_local_server_free(server));
  snprintf(cmd, sizeof cmd, "rm -rf %s", warehouse);
  CHECK(system(cmd) == 0);
}

/* riverlet_table_bucket_leaders: the embedded server (id 0, at the bootstrap address) leads
 * every bucket; partitions listed by name, then bucket; bad handles are typed errors. */
static void test_bucket_leaders(RiverletConnection *conn) {
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTableOptions opts;
  RiverletTable *table = NULL;
  const char *part_keys[] = {"day"};
  const char *day1[] = {"2026-01-01"};
  const char *day2[] = {"2026-01-02"};
  char want[512];
  int b;

  events_schema(&schema);
  memset(&opts, 0, sizeof opts);
  opts.bucket_count = 3;
  OK(riverlet_create_table(conn, "capi", "leaders", &schema, &opts, false));
  au_schema_release(&schema);
  if (!OK(riverlet_connection_get_table(conn, "capi", "leaders", &table))) return;
  EXPECT(riverlet_table_bucket_leaders(NULL, &stream), RIVERLET_STATUS_NULL_ARGUMENT);
  EXPECT(riverlet_table_bucket_leaders(table, NULL), RIVERLET_STATUS_NULL_ARGUMENT);
  MSG_HAS("out_stream");
  if (OK(riverlet_table_bucket_leaders(table, &stream))) {
    char *text = stream_text(&stream);
    for (b = 0; b < 3; b++) {
      snprintf(want, sizeof want,
               "{partition_id=null, partition_name=null, bucket=%d, leader_id=0, "
               "leader_address='%s'}\n",
               b, g_bootstrap);
      CHECK(strstr(text, want) != NULL);
    }
    CHECK(strstr(text, "bucket=3") == NULL);
    free(text);
  }
  /* a dropped table is NOT_FOUND, naming it; a freed handle is CLOSED */
  OK(riverlet_drop_table(conn, "capi", "leaders", false));
  EXPECT(riverlet_table_bucket_leaders(table, &stream), RIVERLET_STATUS_NOT_FOUND);
  MSG_HAS("leaders");
  OK(riverlet_table_free(table));
  EXPECT(riverlet_table_bucket_leaders(table, &stream), RIVERLET_STATUS_CLOSED);
  table = NULL;

  /* a partitioned table: no partition, no row; then two partitions of 2 buckets each */
  au_schema_init(&schema, 2);
  au_schema_set(&schema, 0, "id", "l", false);
  au_schema_set(&schema, 1, "day", "u", false);
  memset(&opts, 0, sizeof opts);
  opts.partition_keys = part_keys;
  opts.num_partition_keys = 1;
  opts.bucket_count = 2;
  OK(riverlet_create_table(conn, "capi", "leaders_by_day", &schema, &opts, false));
  au_schema_release(&schema);
  if (!OK(riverlet_connection_get_table(conn, "capi", "leaders_by_day", &table))) return;
  if (OK(riverlet_table_bucket_leaders(table, &stream))) CHECK(count_rows(&stream) == 0);
  OK(riverlet_create_partition(conn, "capi", "leaders_by_day", part_keys, day2, 1, false));
  OK(riverlet_create_partition(conn, "capi", "leaders_by_day", part_keys, day1, 1, false));
  if (OK(riverlet_table_bucket_leaders(table, &stream))) {
    char *text = stream_text(&stream);
    const char *days[] = {"2026-01-01", "2026-01-02"};
    int d;
    for (d = 0; d < 2; d++) {
      for (b = 0; b < 2; b++) {
        snprintf(want, sizeof want, "partition_name='%s', bucket=%d, leader_id=0, "
                 "leader_address='%s'}\n", days[d], b, g_bootstrap);
        CHECK(strstr(text, want) != NULL);
      }
    }
    CHECK(strstr(text, "partition_id=null") == NULL);
    free(text);
  }
  /* rows come partition by partition (by name), buckets in order */
  if (OK(riverlet_table_bucket_leaders(table, &stream))) {
    struct ArrowArray a;
    struct ArrowSchema s;
    OK(stream.get_schema(&stream, &s) == 0 ? RIVERLET_STATUS_OK : RIVERLET_STATUS_INTERNAL);
    CHECK(s.n_children == 5 && strcmp(s.children[2]->name, "bucket") == 0);
    s.release(&s);
    if (stream.get_next(&stream, &a) == 0 && a.release != NULL) {
      const int32_t *buckets = (const int32_t *)a.children[2]->buffers[1];
      CHECK(a.length == 4);
      const int32_t *off = (const int32_t *)a.children[1]->buffers[1];
      const char *names = (const char *)a.children[1]->buffers[2];
      CHECK(a.length == 4 && buckets[0] == 0 && buckets[1] == 1 && buckets[2] == 0 &&
            buckets[3] == 1);
      CHECK(a.length == 4 && off[1] - off[0] == 10 && memcmp(names + off[0], day1[0], 10) == 0 &&
            memcmp(names + off[2], day2[0], 10) == 0);
      a.release(&a);
    } else {
      CHECK(false);
    }
    stream.release(&stream);
  }
  OK(riverlet_table_free(table));
}

int main(void) {
  RiverletConnection *conn = NULL;
  test_status_codes();
  test_null_arguments();
  test_foreign_handles();
  test_server_and_connect();
  test_sasl();
  if (g_server != NULL) {
    OK(riverlet_connect(g_bootstrap, NULL, NULL, 0, &conn));
    test_admin(conn);
    test_log_table(conn);
    test_pk_table(conn);
    test_add_columns(conn);
    test_delete_update_where(conn);
    test_auto_increment(conn);
    test_bucket_leaders(conn);
    test_statistics_pushdown(conn);
    test_closed_connection();
    test_stream_error();
    test_many_cycles();
    test_lake("iceberg");
    test_lake("paimon");
    OK(riverlet_drop_database(conn, "capi", false, true));
    OK(riverlet_connection_free(conn));
    OK(riverlet_local_server_stop(g_server));
    OK(riverlet_local_server_free(g_server));
  }
  /* every handle this program created was freed */
  CHECK(riverlet_live_handles() == 0);
  printf("c-api: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
