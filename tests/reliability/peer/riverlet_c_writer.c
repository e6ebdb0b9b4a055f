/*
 * One writer of tests/reliability/failover.py through Riverlet's C API, for
 * `failover.py --client c`: the harness decides every call and checks the tables; this process
 * only makes the calls and says how each ended. failover.py compiles it against
 * c-api/include/riverlet.h and the cdylib of the cargo build.
 *
 *   riverlet_c_writer <bootstrap> <log table> <pk table> <w> [key=value ...]
 *
 * Tables are "db.table"; key=value are Fluss client options of its connection. Commands, one
 * per line on stdin, each answered (once acknowledged: every write is flushed) on stdout:
 *   append <seq>,<seq>,...          rows (w, seq) appended to the log table
 *   upsert <value> <k>,<k>,...      rows (k, w, value) upserted into the primary-key table
 *   delete <k>,<k>,...              keys deleted from the primary-key table
 * Replies: "ok", or "err <STATUS_NAME> <Fluss code name or -> <message on one line>". The
 * connection opens with the first command (a failure to connect is that command's err).
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_util.h"
#include "riverlet.h"

#define MAX_ROWS 64
#define MAX_OPTIONS 16

static const char *bootstrap, *log_name, *pk_name;
static int32_t writer_id;
static const char *option_keys[MAX_OPTIONS], *option_values[MAX_OPTIONS];
static size_t num_options;
static struct RiverletConnection *conn;
static struct RiverletWriter *log_writer, *pk_writer;

/* Prints the last error of a failed call as the reply. */
static void reply_error(RiverletStatus st) {
  char message[2048];
  const char *m = riverlet_last_error_message();
  int32_t code = riverlet_last_error_fluss_code();
  size_t i;
  snprintf(message, sizeof message, "%s", m ? m : "(no message)");
  for (i = 0; message[i]; i++) {
    if (message[i] == '\n' || message[i] == '\r') message[i] = ' ';
  }
  printf("err %s %s %s\n", riverlet_status_name((int32_t)st),
         code != 0 ? riverlet_fluss_code_name(code) : "-", message);
}

/* Opens "db.table" of the connection. */
static RiverletStatus open_table(const char *name, struct RiverletTable **out) {
  char db[256];
  const char *dot = strchr(name, '.');
  size_t n = dot ? (size_t)(dot - name) : 0;
  if (!dot || n >= sizeof db) {
    fprintf(stderr, "not db.table: %s\n", name);
    exit(2);
  }
  memcpy(db, name, n);
  db[n] = '\0';
  return riverlet_connection_get_table(conn, db, dot + 1, out);
}

static RiverletStatus open_writers(void) {
  struct RiverletTable *log_table = NULL, *pk_table = NULL;
  RiverletStatus st = riverlet_connect(bootstrap, option_keys, option_values, num_options, &conn);
  if (st != RIVERLET_STATUS_OK) return st;
  if ((st = open_table(log_name, &log_table)) != RIVERLET_STATUS_OK) goto fail;
  if ((st = open_table(pk_name, &pk_table)) != RIVERLET_STATUS_OK) goto fail;
  if ((st = riverlet_table_new_append_writer(log_table, &log_writer)) != RIVERLET_STATUS_OK) goto fail;
  st = riverlet_table_new_upsert_writer(pk_table, NULL, 0, &pk_writer);
fail:
  riverlet_table_free(log_table);
  riverlet_table_free(pk_table);
  if (st != RIVERLET_STATUS_OK) {
    riverlet_writer_free(log_writer);
    log_writer = NULL;
    riverlet_connection_free(conn);
    conn = NULL;
  }
  return st;
}

/* Parses "a,b,c" into values; returns how many. */
static int parse_list(char *csv, int64_t *values) {
  int n = 0;
  char *tok, *save = NULL;
  for (tok = strtok_r(csv, ",", &save); tok && n < MAX_ROWS; tok = strtok_r(NULL, ",", &save)) {
    values[n++] = strtoll(tok, NULL, 10);
  }
  return n;
}

static RiverletStatus do_append(char *args) {
  int64_t seqs[MAX_ROWS];
  int32_t ws[MAX_ROWS];
  int n = parse_list(args, seqs), i;
  struct ArrowSchema schema;
  struct ArrowArray array;
  RiverletStatus st;
  for (i = 0; i < n; i++) ws[i] = writer_id;
  au_schema_init(&schema, 2);
  au_schema_set(&schema, 0, "w", "i", true);
  au_schema_set(&schema, 1, "seq", "l", true);
  au_array_init(&array, n, 2);
  au_array_set_int32(&array, 0, ws, NULL);
  au_array_set_int64(&array, 1, seqs, NULL);
  st = riverlet_writer_append(log_writer, &array, &schema);
  if (array.release) array.release(&array); /* moved in on success; ours after an early error */
  schema.release(&schema);
  return st != RIVERLET_STATUS_OK ? st : riverlet_writer_flush(log_writer);
}

static RiverletStatus do_upsert(char *args) {
  int64_t value, keys[MAX_ROWS], values[MAX_ROWS];
  int32_t ks[MAX_ROWS], ws[MAX_ROWS];
  char *space = strchr(args, ' ');
  int n, i;
  struct ArrowSchema schema;
  struct ArrowArray array;
  RiverletStatus st;
  if (!space) return RIVERLET_STATUS_INVALID_ARGUMENT;
  *space = '\0';
  value = strtoll(args, NULL, 10);
  n = parse_list(space + 1, keys);
  for (i = 0; i < n; i++) {
    ks[i] = (int32_t)keys[i];
    ws[i] = writer_id;
    values[i] = value;
  }
  au_schema_init(&schema, 3);
  au_schema_set(&schema, 0, "k", "i", false);
  au_schema_set(&schema, 1, "w", "i", true);
  au_schema_set(&schema, 2, "seq", "l", true);
  au_array_init(&array, n, 3);
  au_array_set_int32(&array, 0, ks, NULL);
  au_array_set_int32(&array, 1, ws, NULL);
  au_array_set_int64(&array, 2, values, NULL);
  st = riverlet_writer_upsert(pk_writer, &array, &schema);
  if (array.release) array.release(&array);
  schema.release(&schema);
  return st != RIVERLET_STATUS_OK ? st : riverlet_writer_flush(pk_writer);
}

static RiverletStatus do_delete(char *args) {
  int64_t keys[MAX_ROWS];
  int32_t ks[MAX_ROWS];
  int n = parse_list(args, keys), i;
  struct ArrowSchema schema;
  struct ArrowArray array;
  RiverletStatus st;
  for (i = 0; i < n; i++) ks[i] = (int32_t)keys[i];
  au_schema_init(&schema, 1);
  au_schema_set(&schema, 0, "k", "i", false);
  au_array_init(&array, n, 1);
  au_array_set_int32(&array, 0, ks, NULL);
  st = riverlet_writer_delete(pk_writer, &array, &schema);
  if (array.release) array.release(&array);
  schema.release(&schema);
  return st != RIVERLET_STATUS_OK ? st : riverlet_writer_flush(pk_writer);
}

int main(int argc, char **argv) {
  char line[4096];
  int i;
  if (argc < 5) {
    fprintf(stderr, "usage: riverlet_c_writer <bootstrap> <log table> <pk table> <w> [key=value ...]\n");
    return 2;
  }
  bootstrap = argv[1];
  log_name = argv[2];
  pk_name = argv[3];
  writer_id = (int32_t)strtol(argv[4], NULL, 10);
  for (i = 5; i < argc && num_options < MAX_OPTIONS; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq || eq == argv[i]) {
      fprintf(stderr, "not key=value: %s\n", argv[i]);
      return 2;
    }
    *eq = '\0';
    option_keys[num_options] = argv[i];
    option_values[num_options] = eq + 1;
    num_options++;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof line, stdin)) {
    char *args;
    RiverletStatus st;
    line[strcspn(line, "\r\n")] = '\0';
    args = strchr(line, ' ');
    if (!args) continue;
    *args++ = '\0';
    st = conn ? RIVERLET_STATUS_OK : open_writers();
    if (st == RIVERLET_STATUS_OK) {
      if (strcmp(line, "append") == 0) {
        st = do_append(args);
      } else if (strcmp(line, "upsert") == 0) {
        st = do_upsert(args);
      } else if (strcmp(line, "delete") == 0) {
        st = do_delete(args);
      } else {
        fprintf(stderr, "unknown command: %s\n", line);
        return 2;
      }
    }
    if (st == RIVERLET_STATUS_OK) {
      printf("ok\n");
    } else {
      reply_error(st);
    }
  }
  riverlet_writer_free(log_writer);
  riverlet_writer_free(pk_writer);
  riverlet_connection_free(conn);
  return 0;
}
