/*
 * test_acl.cpp: test_acl.c's scenario through the C++ API (include/riverlet.hpp): refusals are
 * riverlet::Error of kind Authentication with fluss_code() 48 naming principal, operation and
 * resource; Connection::create_acl / list_acls / drop_acls.
 */
#include "check.hpp"

static riverlet::Connection login(const std::string &bootstrap, const std::string &user) {
  return riverlet::Connection::connect(bootstrap, {{"client.security.protocol", "SASL"},
                                                   {"client.security.sasl.username", user},
                                                   {"client.security.sasl.password", user + "-pw"}});
}

static void denied(const riverlet::Error &e, const char *principal, const char *op,
                   const char *resource) {
  CHECK(e.kind() == riverlet::ErrorKind::Authentication);
  CHECK(e.fluss_code() == 48);
  last_msg = e.what();
  MSG_HAS(principal);
  MSG_HAS(op);
  MSG_HAS(resource);
}

int main() {
  {
    riverlet::LocalServer server = riverlet::LocalServer::start(
        std::nullopt, 0,
        {{"sasl.user.admin", "admin-pw"}, {"sasl.user.alice", "alice-pw"},
         {"authorizer.enabled", "true"}, {"super.users", "User:admin"}, {"fsync", "never"}});
    riverlet::Connection admin = login(server.bootstrap_servers(), "admin");
    riverlet::Connection alice = login(server.bootstrap_servers(), "alice");
    OK(admin.create_database("shop"));
    auto e = caught([&] { alice.create_database("mine"); });
    CHECK(e.has_value());
    if (e) denied(*e, "name='alice'", " CREATE ", "type=CLUSTER, name='fluss-cluster'");
    CHECK(stream_text(alice.list_databases()).empty());
    e = caught([&] { alice.create_acl("cluster.shop", "User:alice", "ALL"); });
    CHECK(e.has_value());
    if (e) denied(*e, "name='alice'", " ALTER ", "type=DATABASE, name='shop'");

    OK(admin.create_acl("cluster.shop", "User:alice", "DESCRIBE"));
    CHECK(stream_text(alice.list_databases()) == "{database_name='shop'}\n");
    CHECK(stream_text(admin.list_acls("", "User:alice")) ==
          "{resource='cluster.shop', principal='User:alice', operation='DESCRIBE', host='*', "
          "permission='ALLOW'}\n");
    std::string gone = stream_text(admin.drop_acls("cluster.shop"));
    CHECK(gone.find("DESCRIBE") != std::string::npos);
    CHECK(stream_text(admin.list_acls()).empty());
    CHECK(stream_text(alice.list_databases()).empty());
    THROWS(admin.create_acl("shop", "User:alice", "READ"), InvalidArgument);
    MSG_HAS("'shop'");
  }
  CHECK(riverlet_live_handles() == 0);
  printf("c++ acl: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
