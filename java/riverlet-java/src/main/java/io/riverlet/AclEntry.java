package io.riverlet;

import java.util.Objects;

/**
 * One ACL, in the text forms of Fluss's ACL procedures: {@code principal} (e.g. {@code
 * User:alice}) is allowed {@code operation} ({@code READ}, {@code WRITE}, {@code CREATE}, {@code
 * DROP}, {@code ALTER}, {@code DESCRIBE} or {@code ALL}) on {@code resource} ({@code cluster},
 * {@code cluster.db} or {@code cluster.db.table}) from {@code host} ({@code *}: every host). The
 * texts are parsed (and bad ones reported) by the core.
 */
public final class AclEntry {
  private final String resource;
  private final String principal;
  private final String operation;
  private final String host;
  private final String permission;

  AclEntry(String resource, String principal, String operation, String host, String permission) {
    this.resource = Objects.requireNonNull(resource, "resource");
    this.principal = Objects.requireNonNull(principal, "principal");
    this.operation = Objects.requireNonNull(operation, "operation");
    this.host = Objects.requireNonNull(host, "host");
    this.permission = Objects.requireNonNull(permission, "permission");
  }

  /**
   * {@code principal} may do {@code operation} on {@code resource} from every host.
   *
   * @param resource {@code cluster}, {@code cluster.db} or {@code cluster.db.table}
   * @param principal {@code Type:name}, e.g. {@code User:alice}
   * @param operation the operation name
   * @return the entry
   */
  public static AclEntry allow(String resource, String principal, String operation) {
    return new AclEntry(resource, principal, operation, "*", "ALLOW");
  }

  /**
   * The same entry for clients on {@code host} only.
   *
   * @param host the client address
   * @return the entry
   */
  public AclEntry fromHost(String host) {
    return new AclEntry(resource, principal, operation, host, permission);
  }

  /** @return the resource ({@code cluster}, {@code cluster.db}, {@code cluster.db.table}) */
  public String resource() {
    return resource;
  }

  /** @return the principal ({@code Type:name}) */
  public String principal() {
    return principal;
  }

  /** @return the operation name */
  public String operation() {
    return operation;
  }

  /** @return the host ({@code *}: every host) */
  public String host() {
    return host;
  }

  /** @return the permission ({@code ALLOW}) */
  public String permission() {
    return permission;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof AclEntry)) {
      return false;
    }
    AclEntry e = (AclEntry) o;
    return resource.equals(e.resource) && principal.equals(e.principal)
        && operation.equals(e.operation) && host.equals(e.host) && permission.equals(e.permission);
  }

  @Override
  public int hashCode() {
    return Objects.hash(resource, principal, operation, host, permission);
  }

  @Override
  public String toString() {
    return principal + " " + permission + " " + operation + " on " + resource + " from " + host;
  }
}
