/*
 * The C ABI's bad-input catalogue (issue 18, item 4): each case hands Riverlet one bad value
 * against a real embedded server and expects a typed status whose last-error message names the
 * bad value. Built with ASan/UBSan/LSan by run.sh: a crash, a leak or undefined behaviour fails
 * the run as surely as a wrong status.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arrow_util.h"
#include "riverlet.h"

static int cases = 0;
static int failed = 0;

static const char *msg(void) {
  const char *m = riverlet_last_error_message();
  return m ? m : "(no message)";
}

/* One case: `call` must return `want` and the last error must contain `needle`. */
static void bad_at(RiverletStatus got, RiverletStatus want, const char *needle, const char *expr,
                   int line) {
  cases++;
  if (got != want) {
    failed++;
    fprintf(stderr, "%s:%d: %s returned %s, expected %s: %s\n", __FILE__, line, expr,
            riverlet_status_name((int32_t)got), riverlet_status_name((int32_t)want), msg());
  } else if (strstr(msg(), needle) == NULL) {
    failed++;
    fprintf(stderr, "%s:%d: %s: the message '%s' does not name '%s'\n", __FILE__, line, expr,
            msg(), needle);
  }
}

#define BAD(call, want, needle) bad_at((call), (want), (needle), #call, __LINE__)

static void must(RiverletStatus got, const char *expr, int line) {
  if (got != RIVERLET_STATUS_OK) {
    fprintf(stderr, "%s:%d: setup %s failed: %s\n", __FILE__, line, expr, msg());
    exit(1);
  }
}

#define MUST(call) must((call), #call, __LINE__)

/* ---- Arrow helpers ---- */

static void log_schema(struct ArrowSchema *s) { /* id BIGINT, name STRING */
  au_schema_init(s, 2);
  au_schema_set(s, 0, "id", "l", true);
  au_schema_set(s, 1, "name", "u", true);
}

static void log_batch(struct ArrowArray *a) {
  int64_t ids[2] = {1, 2};
  const char *names[2] = {"a", "b"};
  au_array_init(a, 2, 2);
  au_array_set_int64(a, 0, ids, NULL);
  au_array_set_utf8(a, 1, names);
}

static void pk_schema(struct ArrowSchema *s) { /* k INT NOT NULL, v STRING */
  au_schema_init(s, 2);
  au_schema_set(s, 0, "k", "i", false);
  au_schema_set(s, 1, "v", "u", true);
}

static void key_schema(struct ArrowSchema *s, const char *name, const char *format) {
  au_schema_init(s, 1);
  au_schema_set(s, 0, name, format, true);
}

static void int32_keys(struct ArrowArray *a, const int32_t *k, const bool *valid, int64_t n) {
  au_array_init(a, n, 1);
  au_array_set_int32(a, 0, k, valid);
}

static int closed_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
    perror("closed_port");
    exit(1);
  }
  close(fd);
  return ntohs(addr.sin_port);
}

static char *repeat(const char *unit, int times, const char *tail_unit, int tail_times,
                    const char *middle) {
  size_t n = strlen(unit) * (size_t)times + strlen(middle) + strlen(tail_unit) * (size_t)tail_times;
  char *s = (char *)malloc(n + 1);
  char *p = s;
  int i;
  for (i = 0; i < times; i++) p += sprintf(p, "%s", unit);
  p += sprintf(p, "%s", middle);
  for (i = 0; i < tail_times; i++) p += sprintf(p, "%s", tail_unit);
  return s;
}

/* ---- the catalogue ---- */

static void connecting(void) {
  RiverletConnection *c = NULL;
  const char *k1[] = {"client.nonsense"};
  const char *v1[] = {"1"};
  const char *k2[] = {"client.writer.acks"};
  const char *v2[] = {"maybe"};
  const char *k3[] = {"client.request-timeout"};
  const char *v3[] = {"soon"};
  const char *k4[] = {"client.security.protocol"};
  const char *v4[] = {"KERBEROS"};
  char dead[64];
  struct ArrowArrayStream st;
  BAD(riverlet_connect("", NULL, NULL, 0, &c), RIVERLET_STATUS_INVALID_ARGUMENT, "bootstrap");
  BAD(riverlet_connect("localhost", NULL, NULL, 0, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "localhost");
  BAD(riverlet_connect("localhost:http", NULL, NULL, 0, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "http");
  BAD(riverlet_connect("localhost:70000", NULL, NULL, 0, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "70000");
  BAD(riverlet_connect("localhost:9123", k1, v1, 1, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "client.nonsense");
  BAD(riverlet_connect("localhost:9123", k2, v2, 1, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "maybe");
  BAD(riverlet_connect("localhost:9123", k3, v3, 1, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "soon");
  BAD(riverlet_connect("localhost:9123", k4, v4, 1, &c), RIVERLET_STATUS_INVALID_ARGUMENT,
      "KERBEROS");
  BAD(riverlet_connect("localhost:9123", NULL, v1, 1, &c), RIVERLET_STATUS_NULL_ARGUMENT,
      "options");
  snprintf(dead, sizeof dead, "127.0.0.1:%d", closed_port());
  /* nothing listens there: the first request fails (connecting may be lazy) */
  if (riverlet_connect(dead, NULL, NULL, 0, &c) == RIVERLET_STATUS_OK) {
    BAD(riverlet_list_databases(c, &st), RIVERLET_STATUS_NETWORK, dead + 10);
    riverlet_connection_free(c);
  } else {
    BAD(RIVERLET_STATUS_NETWORK, RIVERLET_STATUS_NETWORK, dead + 10);
  }
}

static void servers(const char *file) {
  RiverletLocalServer *s = NULL;
  const char *k[] = {"nonsense.option"};
  const char *v[] = {"1"};
  const char *kf[] = {"fsync"};
  const char *vf[] = {"sometimes"};
  const char *ku[] = {"sasl.user.alice"};
  const char *vu[] = {"secret"};
  RiverletConnection *c = NULL;
  const char *ck[] = {"client.security.protocol", "client.security.sasl.username",
                      "client.security.sasl.password"};
  const char *cv[] = {"SASL", "alice", "wrong-password"};
  const char *bootstrap = NULL;
  struct ArrowArrayStream st;
  BAD(riverlet_local_server_start(file, 0, NULL, NULL, 0, &s), RIVERLET_STATUS_IO, file);
  BAD(riverlet_local_server_start(NULL, 0, k, v, 1, &s), RIVERLET_STATUS_INVALID_ARGUMENT,
      "nonsense.option");
  BAD(riverlet_local_server_start(NULL, 0, kf, vf, 1, &s), RIVERLET_STATUS_INVALID_ARGUMENT,
      "sometimes");
  /* wrong credentials against a SASL server */
  MUST(riverlet_local_server_start(NULL, 0, ku, vu, 1, &s));
  MUST(riverlet_local_server_bootstrap_servers(s, &bootstrap));
  if (riverlet_connect(bootstrap, ck, cv, 3, &c) == RIVERLET_STATUS_OK) {
    BAD(riverlet_list_databases(c, &st), RIVERLET_STATUS_AUTHENTICATION, "uthentication");
    riverlet_connection_free(c);
  } else {
    BAD(RIVERLET_STATUS_AUTHENTICATION, RIVERLET_STATUS_AUTHENTICATION, "uthentication");
  }
  if (strstr(msg(), "wrong-password") != NULL) {
    failed++;
    fprintf(stderr, "the password is shown in an error: %s\n", msg());
  }
  riverlet_local_server_free(s);
}

static void admin(RiverletConnection *c) {
  struct ArrowSchema s, half, f16, dup;
  struct ArrowArrayStream st;
  RiverletTable *t = NULL;
  RiverletTableOptions o;
  const char *nope[] = {"nope"};
  const char *ttl_k[] = {"table.log.ttl"};
  const char *ttl_v[] = {"forever"};
  const char *dt[] = {"dt"};
  const char *day[] = {"1999-01-01"};
  log_schema(&s);
  au_schema_init(&f16, 1);
  au_schema_set(&f16, 0, "h", "e", true);
  au_schema_init(&dup, 2);
  au_schema_set(&dup, 0, "a", "i", true);
  au_schema_set(&dup, 1, "a", "l", true);
  /* a schema that is not a struct of columns */
  memset(&half, 0, sizeof half);
  au_schema_init(&half, 0);
  free((void *)half.format);
  half.format = au_strdup("l");

  BAD(riverlet_create_database(c, "", false), RIVERLET_STATUS_INVALID_ARGUMENT, "atabase");
  BAD(riverlet_create_database(c, "bad name", false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "bad name");
  BAD(riverlet_create_database(c, "__internal", false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "__internal");
  BAD(riverlet_create_database(c, "cat", false), RIVERLET_STATUS_ALREADY_EXISTS, "cat");
  BAD(riverlet_drop_database(c, "nope_db", false, false), RIVERLET_STATUS_NOT_FOUND, "nope_db");
  BAD(riverlet_list_tables(c, "nope_db", &st), RIVERLET_STATUS_NOT_FOUND, "nope_db");
  BAD(riverlet_connection_get_table(c, "cat", "nope_table", &t), RIVERLET_STATUS_NOT_FOUND,
      "nope_table");
  BAD(riverlet_connection_get_table(c, "nope_db", "t", &t), RIVERLET_STATUS_NOT_FOUND,
      "nope_db");
  BAD(riverlet_create_table(c, "cat", "x", &half, NULL, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "+s");
  BAD(riverlet_create_table(c, "cat", "x", &f16, NULL, false), RIVERLET_STATUS_UNSUPPORTED,
      "'h'");
  BAD(riverlet_create_table(c, "cat", "x", &dup, NULL, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "a");
  BAD(riverlet_create_table(c, "cat", "a.b", &s, NULL, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "a.b");
  BAD(riverlet_create_table(c, "cat", "logs", &s, NULL, false), RIVERLET_STATUS_ALREADY_EXISTS,
      "logs");
  memset(&o, 0, sizeof o);
  o.primary_key = nope;
  o.num_primary_key = 1;
  BAD(riverlet_create_table(c, "cat", "x", &s, &o, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "nope");
  memset(&o, 0, sizeof o);
  o.partition_keys = nope;
  o.num_partition_keys = 1;
  BAD(riverlet_create_table(c, "cat", "x", &s, &o, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "nope");
  memset(&o, 0, sizeof o);
  o.bucket_keys = nope;
  o.num_bucket_keys = 1;
  BAD(riverlet_create_table(c, "cat", "x", &s, &o, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "nope");
  memset(&o, 0, sizeof o);
  o.property_keys = ttl_k;
  o.property_values = ttl_v;
  o.num_properties = 1;
  BAD(riverlet_create_table(c, "cat", "x", &s, &o, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "forever");
  memset(&o, 0, sizeof o);
  o.property_keys = ttl_k;
  o.num_properties = 1;
  BAD(riverlet_create_table(c, "cat", "x", &s, &o, false), RIVERLET_STATUS_NULL_ARGUMENT,
      "properties");
  memset(&o, 0, sizeof o);
  o.auto_increment_column = "nope";
  BAD(riverlet_create_table(c, "cat", "x", &s, &o, false), RIVERLET_STATUS_INVALID_ARGUMENT,
      "primary-key");
  BAD(riverlet_create_partition(c, "cat", "parts", nope, day, 1, false),
      RIVERLET_STATUS_INVALID_ARGUMENT, "nope");
  BAD(riverlet_drop_partition(c, "cat", "parts", dt, day, 1, false), RIVERLET_STATUS_NOT_FOUND,
      "1999-01-01");
  BAD(riverlet_create_partition(c, "cat", "logs", dt, day, 1, false),
      RIVERLET_STATUS_INVALID_ARGUMENT, "logs");
  BAD(riverlet_list_offsets(c, "cat", "logs", NULL, NULL, 0, 9, 0, &st),
      RIVERLET_STATUS_INVALID_ARGUMENT, "9");
  {
    int32_t b99[] = {99};
    BAD(riverlet_list_offsets(c, "cat", "logs", NULL, b99, 1, RIVERLET_OFFSET_LATEST, 0, &st),
        RIVERLET_STATUS_INVALID_ARGUMENT, "99");
  }
  au_schema_release(&s);
  au_schema_release(&f16);
  au_schema_release(&dup);
  au_schema_release(&half);
}

static void writes(RiverletTable *logs, RiverletTable *pk) {
  RiverletWriter *w = NULL;
  struct ArrowSchema s;
  struct ArrowArray a;
  uint64_t n = 0;
  const char *no_key[] = {"v"};
  const char *unknown[] = {"k", "nope"};
  MUST(riverlet_table_new_append_writer(logs, &w));
  /* a batch whose column names the table does not have */
  au_schema_init(&s, 2);
  au_schema_set(&s, 0, "zzz", "l", true);
  au_schema_set(&s, 1, "name", "u", true);
  log_batch(&a);
  BAD(riverlet_writer_append(w, &a, &s), RIVERLET_STATUS_INVALID_ARGUMENT, "zzz");
  au_schema_release(&s);
  /* text where the table has a BIGINT */
  au_schema_init(&s, 2);
  au_schema_set(&s, 0, "id", "u", true);
  au_schema_set(&s, 1, "name", "u", true);
  {
    const char *ids[2] = {"one", "two"};
    const char *names[2] = {"a", "b"};
    au_array_init(&a, 2, 2);
    au_array_set_utf8(&a, 0, ids);
    au_array_set_utf8(&a, 1, names);
  }
  BAD(riverlet_writer_append(w, &a, &s), RIVERLET_STATUS_INVALID_ARGUMENT, "id");
  au_schema_release(&s);
  /* a struct array whose children do not match its schema */
  log_schema(&s);
  au_array_init(&a, 2, 1);
  {
    int64_t ids[2] = {1, 2};
    au_array_set_int64(&a, 0, ids, NULL);
  }
  BAD(riverlet_writer_append(w, &a, &s), RIVERLET_STATUS_INVALID_ARGUMENT, "2");
  au_schema_release(&s);
  riverlet_writer_free(w);

  BAD(riverlet_table_new_upsert_writer(logs, NULL, 0, &w), RIVERLET_STATUS_INVALID_ARGUMENT,
      "logs");
  BAD(riverlet_table_new_upsert_writer(pk, no_key, 1, &w), RIVERLET_STATUS_INVALID_ARGUMENT,
      "k");
  BAD(riverlet_table_new_upsert_writer(pk, unknown, 2, &w), RIVERLET_STATUS_INVALID_ARGUMENT,
      "nope");
  BAD(riverlet_table_new_append_writer(pk, &w), RIVERLET_STATUS_INVALID_ARGUMENT, "pk");
  /* a null primary key */
  MUST(riverlet_table_new_upsert_writer(pk, NULL, 0, &w));
  {
    int32_t k[1] = {0};
    bool valid[1] = {false};
    const char *v[1] = {"x"};
    au_schema_init(&s, 2);
    au_schema_set(&s, 0, "k", "i", true);
    au_schema_set(&s, 1, "v", "u", true);
    au_array_init(&a, 1, 2);
    au_array_set_int32(&a, 0, k, valid);
    au_array_set_utf8(&a, 1, v);
    BAD(riverlet_writer_upsert(w, &a, &s), RIVERLET_STATUS_INVALID_ARGUMENT, "k");
    au_schema_release(&s);
  }
  riverlet_writer_free(w);

  BAD(riverlet_table_delete_where(logs, "id = 1", &n), RIVERLET_STATUS_UNSUPPORTED, "logs");
  BAD(riverlet_table_update_where(pk, "k = 1", "k = 2", &n), RIVERLET_STATUS_UNSUPPORTED, "k");
  BAD(riverlet_table_update_where(pk, "k = 1", "nope = 2", &n), RIVERLET_STATUS_INVALID_ARGUMENT,
      "nope");
  BAD(riverlet_table_update_where(pk, "k = 1", "v = ", &n), RIVERLET_STATUS_INVALID_ARGUMENT,
      "v =");
}

static void reads(RiverletTable *logs, RiverletTable *pk, RiverletTable *parts) {
  struct ArrowArrayStream st;
  RiverletReadOptions o;
  const char *nope[] = {"nope"};
  const char *day[] = {"1999-01-01"};
  int32_t b99[] = {99};
  int32_t bneg[] = {-1};
  int64_t end = 1000;
  char *deep = repeat("(", 20000, ")", 20000, "id = 1");
  char *nots = repeat("NOT ", 20000, "", 0, "id = 1");
  struct ArrowSchema ks;
  struct ArrowArray ka;

  memset(&o, 0, sizeof o);
  o.columns = nope;
  o.num_columns = 1;
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "nope");
  memset(&o, 0, sizeof o);
  o.filter = "nope = 1";
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "nope");
  o.filter = "id >";
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "id >");
  o.filter = "id ~~ 3";
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "~~");
  o.filter = "id = 'abc'";
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "abc");
  o.filter = "name = 'unclosed";
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "unclosed");
  o.filter = deep;
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "deep");
  o.filter = nots;
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "deep");
  memset(&o, 0, sizeof o);
  o.partitions = day;
  o.num_partitions = 1;
  BAD(riverlet_table_read(parts, &o, &st), RIVERLET_STATUS_NOT_FOUND, "1999-01-01");
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "logs");
  memset(&o, 0, sizeof o);
  o.buckets = b99;
  o.num_buckets = 1;
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "99");
  o.buckets = bneg;
  BAD(riverlet_table_read(logs, &o, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "-1");
  memset(&o, 0, sizeof o);
  BAD(riverlet_table_read_between(logs, &o, "garbage-time", NULL, &st),
      RIVERLET_STATUS_INVALID_ARGUMENT, "garbage-time");
  BAD(riverlet_table_read_between(logs, &o, "2024-01-02 00:00:00", "2024-01-01 00:00:00", &st),
      RIVERLET_STATUS_INVALID_ARGUMENT, "2024-01-02");
  BAD(riverlet_table_read_between(logs, &o, "2024-02-30 00:00:00", NULL, &st),
      RIVERLET_STATUS_INVALID_ARGUMENT, "2024-02-30");
  BAD(riverlet_table_read_between(logs, &o, "", NULL, &st), RIVERLET_STATUS_INVALID_ARGUMENT,
      "start");
  o.time_zone = "Mars/Olympus_Mons";
  BAD(riverlet_table_read_between(logs, &o, "2024-01-01 00:00:00", NULL, &st),
      RIVERLET_STATUS_INVALID_ARGUMENT, "Mars/Olympus_Mons");
  o.time_zone = NULL;
  BAD(riverlet_table_read_between_ms(logs, &o, 2000, &end, &st),
      RIVERLET_STATUS_INVALID_ARGUMENT, "2000");
  o.read_optimized = true;
  BAD(riverlet_table_read_between_ms(pk, &o, 0, NULL, &st), RIVERLET_STATUS_INVALID_ARGUMENT,
      "read");
  o.read_optimized = false;
  /* lookups */
  key_schema(&ks, "id", "l");
  {
    int64_t id[1] = {1};
    au_array_init(&ka, 1, 1);
    au_array_set_int64(&ka, 0, id, NULL);
  }
  BAD(riverlet_table_lookup(logs, &ka, &ks, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "logs");
  au_schema_release(&ks);
  key_schema(&ks, "nope", "i");
  {
    int32_t k[1] = {1};
    int32_keys(&ka, k, NULL, 1);
  }
  BAD(riverlet_table_lookup(pk, &ka, &ks, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "'k'");
  au_schema_release(&ks);
  key_schema(&ks, "k", "i");
  {
    int32_t k[1] = {0};
    bool valid[1] = {false};
    int32_keys(&ka, k, valid, 1);
  }
  BAD(riverlet_table_lookup(pk, &ka, &ks, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "k");
  {
    int32_t k[1] = {1};
    int32_keys(&ka, k, NULL, 1);
  }
  BAD(riverlet_table_prefix_lookup(logs, &ka, &ks, &st), RIVERLET_STATUS_INVALID_ARGUMENT,
      "logs");
  au_schema_release(&ks);
  free(deep);
  free(nots);
}

static void subscriptions(RiverletTable *logs) {
  RiverletSubscription *sub = NULL;
  RiverletSubscribeOptions o;
  RiverletBucketOffset off;
  struct ArrowArrayStream st;
  memset(&o, 0, sizeof o);
  o.startup_mode = "sometimes";
  BAD(riverlet_table_subscribe(logs, &o, &sub), RIVERLET_STATUS_INVALID_ARGUMENT, "sometimes");
  o.startup_mode = "timestamp";
  BAD(riverlet_table_subscribe(logs, &o, &sub), RIVERLET_STATUS_INVALID_ARGUMENT, "timestamp");
  o.startup_timestamp = "not-a-time";
  BAD(riverlet_table_subscribe(logs, &o, &sub), RIVERLET_STATUS_INVALID_ARGUMENT, "not-a-time");
  memset(&o, 0, sizeof o);
  memset(&off, 0, sizeof off);
  off.partition_id = -1;
  off.bucket = 42;
  off.offset = 0;
  o.start_offsets = &off;
  o.num_start_offsets = 1;
  BAD(riverlet_table_subscribe(logs, &o, &sub), RIVERLET_STATUS_INVALID_ARGUMENT, "42");
  memset(&o, 0, sizeof o);
  o.startup_mode = "earliest";
  MUST(riverlet_table_subscribe(logs, &o, &sub));
  BAD(riverlet_subscription_poll(sub, -5, &st), RIVERLET_STATUS_INVALID_ARGUMENT, "-5");
  MUST(riverlet_subscription_free(sub));
  BAD(riverlet_subscription_poll(sub, 10, &st), RIVERLET_STATUS_CLOSED, "freed");
  BAD(riverlet_subscription_free(sub), RIVERLET_STATUS_CLOSED, "freed");
}

static void closed_handles(const char *bootstrap) {
  RiverletConnection *c = NULL;
  RiverletTable *t = NULL;
  struct ArrowArrayStream st;
  MUST(riverlet_connect(bootstrap, NULL, NULL, 0, &c));
  MUST(riverlet_connection_get_table(c, "cat", "logs", &t));
  MUST(riverlet_connection_free(c));
  BAD(riverlet_table_read(t, NULL, &st), RIVERLET_STATUS_CLOSED, "closed");
  BAD(riverlet_list_databases(c, &st), RIVERLET_STATUS_CLOSED, "freed");
  BAD(riverlet_connection_free(c), RIVERLET_STATUS_CLOSED, "freed");
  MUST(riverlet_table_free(t));
  BAD(riverlet_table_free(t), RIVERLET_STATUS_CLOSED, "freed");
}

int main(void) {
  RiverletLocalServer *server = NULL;
  RiverletConnection *c = NULL;
  RiverletTable *logs = NULL, *pk = NULL, *parts = NULL;
  RiverletWriter *w = NULL;
  const char *bootstrap = NULL;
  struct ArrowSchema s;
  struct ArrowArray a;
  RiverletTableOptions o;
  const char *k[] = {"k"};
  const char *dt[] = {"dt"};
  char file[] = "/tmp/riverlet-bad-input-XXXXXX";
  int fd = mkstemp(file);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  close(fd);

  MUST(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, &server));
  MUST(riverlet_local_server_bootstrap_servers(server, &bootstrap));
  MUST(riverlet_connect(bootstrap, NULL, NULL, 0, &c));
  MUST(riverlet_create_database(c, "cat", false));
  log_schema(&s);
  MUST(riverlet_create_table(c, "cat", "logs", &s, NULL, false));
  au_schema_release(&s);
  pk_schema(&s);
  memset(&o, 0, sizeof o);
  o.primary_key = k;
  o.num_primary_key = 1;
  MUST(riverlet_create_table(c, "cat", "pk", &s, &o, false));
  au_schema_release(&s);
  au_schema_init(&s, 2);
  au_schema_set(&s, 0, "id", "l", true);
  au_schema_set(&s, 1, "dt", "u", true);
  memset(&o, 0, sizeof o);
  o.partition_keys = dt;
  o.num_partition_keys = 1;
  MUST(riverlet_create_table(c, "cat", "parts", &s, &o, false));
  au_schema_release(&s);
  MUST(riverlet_connection_get_table(c, "cat", "logs", &logs));
  MUST(riverlet_connection_get_table(c, "cat", "pk", &pk));
  MUST(riverlet_connection_get_table(c, "cat", "parts", &parts));
  MUST(riverlet_table_new_append_writer(logs, &w));
  log_schema(&s);
  log_batch(&a);
  MUST(riverlet_writer_append(w, &a, &s));
  MUST(riverlet_writer_flush(w));
  au_schema_release(&s);
  riverlet_writer_free(w);

  connecting();
  servers(file);
  admin(c);
  writes(logs, pk);
  reads(logs, pk, parts);
  subscriptions(logs);
  closed_handles(bootstrap);

  riverlet_table_free(logs);
  riverlet_table_free(pk);
  riverlet_table_free(parts);
  riverlet_connection_free(c);
  riverlet_local_server_free(server);
  unlink(file);

  printf("bad-input catalogue: %d cases, %d failed\n", cases, failed);
  if (cases < 50) {
    fprintf(stderr, "the catalogue must hold at least 50 cases\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}
