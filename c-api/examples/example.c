/*
 * The Riverlet C API in one page: start an embedded server, create a log table, write two
 * batches, read the table back, and run a time-range query that returns only the second batch.
 *
 * Build (see c-api/README.md):
 *   cc example.c -I../include -I. $(pkg-config --cflags --libs riverlet) -o example
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "arrow_util.h"
#include "riverlet.h"

/* Stops the program with the last error when a call fails. */
static void check(RiverletStatus status, const char *what) {
  if (status != RIVERLET_STATUS_OK) {
    const char *message = riverlet_last_error_message();
    fprintf(stderr, "%s failed: %s: %s\n", what, riverlet_status_name((int32_t)status),
            message ? message : "");
    exit(1);
  }
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The columns of the table: city STRING NOT NULL, temperature DOUBLE, reading INT. */
static void make_schema(struct ArrowSchema *schema) {
  au_schema_init(schema, 3);
  au_schema_set(schema, 0, "city", "u", false);
  au_schema_set(schema, 1, "temperature", "g", true);
  au_schema_set(schema, 2, "reading", "i", false);
}

static void write_batch(RiverletWriter *writer, const char *const *cities, const double *temps,
                        const int32_t *readings, int64_t rows) {
  struct ArrowSchema schema;
  struct ArrowArray batch;
  make_schema(&schema);
  au_array_init(&batch, rows, 3);
  au_array_set_utf8(&batch, 0, cities);
  au_array_set_double(&batch, 1, temps, NULL);
  au_array_set_int32(&batch, 2, readings, NULL);
  /* the batch is moved into Riverlet (it releases it); the schema is only borrowed */
  check(riverlet_writer_append(writer, &batch, &schema), "append");
  schema.release(&schema);
}

int main(void) {
  RiverletLocalServer *server = NULL;
  RiverletConnection *conn = NULL;
  RiverletTable *table = NULL;
  RiverletWriter *writer = NULL;
  struct ArrowSchema schema;
  struct ArrowArrayStream stream;
  RiverletTableOptions table_options = {0};
  RiverletReadOptions read_options = {0};
  const char *bootstrap = NULL;
  const char *columns[] = {"city", "reading"};
  int64_t between;

  /* an embedded server on a free port, data in a temporary directory */
  check(riverlet_local_server_start(NULL, 0, NULL, NULL, 0, &server), "start server");
  check(riverlet_local_server_bootstrap_servers(server, &bootstrap), "bootstrap servers");
  check(riverlet_connect(bootstrap, NULL, NULL, 0, &conn), "connect");
  printf("connected to a local server\n");

  check(riverlet_create_database(conn, "weather", false), "create database");
  make_schema(&schema);
  table_options.bucket_count = 1;
  check(riverlet_create_table(conn, "weather", "readings", &schema, &table_options, false),
        "create table");
  schema.release(&schema);
  printf("created table weather.readings\n");

  check(riverlet_connection_get_table(conn, "weather", "readings", &table), "get table");
  check(riverlet_table_new_append_writer(table, &writer), "append writer");
  {
    const char *cities[] = {"Lisbon", "Oslo", "Nairobi"};
    const double temps[] = {21.5, -3.0, 25.25};
    const int32_t readings[] = {1, 2, 3};
    write_batch(writer, cities, temps, readings, 3);
  }
  check(riverlet_writer_flush(writer), "flush");
  pause_ms(50);
  between = now_ms();
  pause_ms(50);
  {
    const char *cities[] = {"Lima", "Oslo"};
    const double temps[] = {18.0, -4.5};
    const int32_t readings[] = {4, 5};
    write_batch(writer, cities, temps, readings, 2);
  }
  check(riverlet_writer_flush(writer), "flush");
  check(riverlet_writer_free(writer), "free writer");
  printf("wrote 5 rows in 2 batches\n");

  printf("\nall rows:\n");
  check(riverlet_table_read(table, NULL, &stream), "read");
  au_print_stream(&stream, "  ", stdout);

  printf("\ncity and reading where temperature < 0:\n");
  read_options.columns = columns;
  read_options.num_columns = 2;
  read_options.filter = "temperature < 0";
  check(riverlet_table_read(table, &read_options, &stream), "filtered read");
  au_print_stream(&stream, "  ", stdout);

  printf("\nrows committed after the first batch (time-range read):\n");
  check(riverlet_table_read_between_ms(table, NULL, between, NULL, &stream), "time-range read");
  au_print_stream(&stream, "  ", stdout);

  printf("\na bad timestamp is an error:\n");
  {
    RiverletStatus status =
        riverlet_table_read_between(table, NULL, "last tuesday", NULL, &stream);
    printf("  %s\n", riverlet_status_name((int32_t)status));
  }

  check(riverlet_table_free(table), "free table");
  check(riverlet_connection_free(conn), "free connection");
  check(riverlet_local_server_stop(server), "stop server");
  check(riverlet_local_server_free(server), "free server");
  printf("\nserver stopped\n");
  return 0;
}
