/*
 * test_acl.c: ACLs through the C API against an embedded server with authorizer.enabled and
 * SASL users: a refusal is RIVERLET_STATUS_AUTHENTICATION with Fluss code 48
 * (AUTHORIZATION_EXCEPTION) and a message naming principal, operation and resource; grants,
 * lists and drops go through riverlet_create_acl / riverlet_list_acls / riverlet_drop_acls.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_util.h"
#include "riverlet.h"

#include "check.h"

static char *stream_text(struct ArrowArrayStream *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  au_print_stream(s, "", f);
  fclose(f);
  return buf;
}

static RiverletConnection *login(const char *bootstrap, const char *user, const char *password) {
  RiverletConnection *conn = NULL;
  const char *keys[] = {"client.security.protocol", "client.security.sasl.username",
                        "client.security.sasl.password"};
  const char *values[] = {"SASL", user, password};
  OK(riverlet_connect(bootstrap, keys, values, 3, &conn));
  return conn;
}

/* The last call was refused by the authorizer with a message naming all three. */
static void denied(const char *principal, const char *op, const char *resource) {
  CHECK(riverlet_last_error_fluss_code() == 48);
  MSG_HAS(principal);
  MSG_HAS(op);
  MSG_HAS(resource);
}

int main(void) {
  RiverletLocalServer *server = NULL;
  const char *bootstrap = NULL;
  struct ArrowArrayStream stream;
  const char *keys[] = {"sasl.user.admin", "sasl.user.alice", "authorizer.enabled", "super.users",
                        "fsync"};
  const char *values[] = {"admin-pw", "alice-pw", "true", "User:admin", "never"};
  OK(riverlet_local_server_start(NULL, 0, keys, values, 5, &server));
  OK(riverlet_local_server_bootstrap_servers(server, &bootstrap));
  RiverletConnection *admin = login(bootstrap, "admin", "admin-pw");
  RiverletConnection *alice = login(bootstrap, "alice", "alice-pw");

  /* alice may not create a database, nor list what she may not DESCRIBE */
  OK(riverlet_create_database(admin, "shop", false));
  EXPECT(riverlet_create_database(alice, "mine", false), RIVERLET_STATUS_AUTHENTICATION);
  denied("name='alice'", " CREATE ", "type=CLUSTER, name='fluss-cluster'");
  if (OK(riverlet_list_databases(alice, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text, "") == 0);
    free(text);
  }
  /* nor grant herself anything (ALTER on the database) */
  EXPECT(riverlet_create_acl(alice, "cluster.shop", "User:alice", "ALL", NULL),
         RIVERLET_STATUS_AUTHENTICATION);
  denied("name='alice'", " ALTER ", "type=DATABASE, name='shop'");

  /* the super user grants DESCRIBE on the database: alice sees it */
  OK(riverlet_create_acl(admin, "cluster.shop", "User:alice", "describe", NULL));
  if (OK(riverlet_list_databases(alice, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text, "{database_name='shop'}\n") == 0);
    free(text);
  }
  OK(riverlet_create_acl(admin, "cluster", "User:alice", "CREATE", "10.0.0.9"));
  if (OK(riverlet_list_acls(admin, NULL, "User:alice", NULL, NULL, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strcmp(text,
                 "{resource='cluster', principal='User:alice', operation='CREATE', "
                 "host='10.0.0.9', permission='ALLOW'}\n"
                 "{resource='cluster.shop', principal='User:alice', operation='DESCRIBE', "
                 "host='*', permission='ALLOW'}\n") == 0 ||
          (fprintf(stderr, "got:\n%s", text), false));
    free(text);
  }
  /* a grant for another host does not apply */
  EXPECT(riverlet_create_database(alice, "mine", false), RIVERLET_STATUS_AUTHENTICATION);
  /* drop exactly what the filter matches */
  if (OK(riverlet_drop_acls(admin, "cluster", NULL, NULL, NULL, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "operation='CREATE'") != NULL && strstr(text, "DESCRIBE") == NULL);
    free(text);
  }
  if (OK(riverlet_list_acls(admin, "ANY", NULL, NULL, NULL, NULL, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "DESCRIBE") != NULL && strstr(text, "CREATE") == NULL);
    free(text);
  }
  /* bad input names the value */
  EXPECT(riverlet_create_acl(admin, "shop", "User:alice", "READ", NULL),
         RIVERLET_STATUS_INVALID_ARGUMENT);
  MSG_HAS("'shop'");
  EXPECT(riverlet_list_acls(admin, NULL, NULL, NULL, NULL, NULL, NULL),
         RIVERLET_STATUS_NULL_ARGUMENT);

  /* server options: alice (no ALTER on the cluster) may not change them; the super user may,
     and sees the dynamic one with its source; a start-up option is refused by name */
  EXPECT(riverlet_alter_cluster_config(alice, "kv.snapshot.interval", "1 h"),
         RIVERLET_STATUS_AUTHENTICATION);
  denied("name='alice'", " ALTER ", "type=CLUSTER, name='fluss-cluster'");
  OK(riverlet_alter_cluster_config(admin, "kv.snapshot.interval", "1 h"));
  if (OK(riverlet_describe_cluster_configs(admin, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "{key='kv.snapshot.interval', value='1 h', "
                       "source='DYNAMIC_SERVER_CONFIG'}") != NULL ||
          (fprintf(stderr, "got:\n%s", text), false));
    CHECK(strstr(text, "{key='authorizer.enabled', value='true', "
                       "source='INITIAL_SERVER_CONFIG'}") != NULL ||
          (fprintf(stderr, "got:\n%s", text), false));
    free(text);
  }
  EXPECT(riverlet_alter_cluster_config(admin, "fsync", "always"), RIVERLET_STATUS_SERVER);
  MSG_HAS("The config key fsync is not allowed to be changed dynamically");
  OK(riverlet_alter_cluster_config(admin, "kv.snapshot.interval", NULL));
  if (OK(riverlet_describe_cluster_configs(admin, &stream))) {
    char *text = stream_text(&stream);
    CHECK(strstr(text, "kv.snapshot.interval") == NULL);
    free(text);
  }
  EXPECT(riverlet_alter_cluster_config(admin, NULL, "x"), RIVERLET_STATUS_NULL_ARGUMENT);

  OK(riverlet_connection_free(alice));
  OK(riverlet_connection_free(admin));
  OK(riverlet_local_server_stop(server));
  OK(riverlet_local_server_free(server));
  CHECK(riverlet_live_handles() == 0);
  printf("c-api acl: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
