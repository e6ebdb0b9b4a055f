package io.riverlet;

/**
 * What went wrong, as the core classifies it. Every {@link RiverletException} carries one; the
 * names match the core's {@code ErrorKind} (and Python's {@code kind} attribute).
 */
public enum ErrorKind {
  /** A database, table, partition, bucket or key the caller named does not exist. */
  NOT_FOUND,
  /** The thing being created exists already. */
  ALREADY_EXISTS,
  /** The caller passed a value that cannot be used (bad schema, timestamp, filter...). */
  INVALID_ARGUMENT,
  /** The operation is valid but not supported here (by this server, table kind...). */
  UNSUPPORTED,
  /** Authentication failed or is required. */
  AUTHENTICATION,
  /** A network problem that may go away when retried. */
  NETWORK,
  /** A deadline passed before the server answered. */
  TIMEOUT,
  /** The server answered with a Fluss error code that has no better kind. */
  SERVER,
  /** Bytes that do not decode: a torn frame, a bad CRC, a truncated record. */
  CORRUPT,
  /** An object was used after {@code close()}, or the runtime is shutting down. */
  CLOSED,
  /** A local I/O failure (data directory, files). */
  IO,
  /** A bug in Riverlet: an invariant that should hold did not (a caught native panic too). */
  INTERNAL;

  /**
   * The kind named by the core's lower-case name ({@code "not_found"}, ...).
   *
   * @param name the core's name of the kind
   * @return the kind, or {@link #INTERNAL} for a name this version does not know
   */
  public static ErrorKind fromCoreName(String name) {
    for (ErrorKind k : values()) {
      if (k.name().equalsIgnoreCase(name)) {
        return k;
      }
    }
    return INTERNAL;
  }
}
