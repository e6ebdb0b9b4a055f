package io.riverlet;

/**
 * The base of every error Riverlet raises: a {@link ErrorKind kind}, a message naming the bad
 * value, table or column, and the Fluss error code when the server sent one.
 *
 * <p>Unchecked, so it passes through lambdas and engine interfaces. Catch a subclass to handle
 * one case ({@link TableNotFoundException}, {@link InvalidArgumentException}, ...).
 */
public class RiverletException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Marks "no Fluss error code". */
  public static final int NO_CODE = Integer.MIN_VALUE;

  private final ErrorKind kind;
  private final int flussCode;
  private final String flussCodeName;

  /**
   * An error of a kind.
   *
   * @param kind what went wrong
   * @param message the message
   */
  public RiverletException(ErrorKind kind, String message) {
    this(kind, message, NO_CODE, null, null);
  }

  /**
   * An error of a kind with a cause.
   *
   * @param kind what went wrong
   * @param message the message
   * @param cause the underlying error
   */
  public RiverletException(ErrorKind kind, String message, Throwable cause) {
    this(kind, message, NO_CODE, null, cause);
  }

  /**
   * An error with everything the core reported.
   *
   * @param kind what went wrong
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the Fluss error code's name, or null
   * @param cause the underlying error, or null
   */
  protected RiverletException(
      ErrorKind kind, String message, int flussCode, String flussCodeName, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.flussCode = flussCode;
    this.flussCodeName = flussCodeName;
  }

  /**
   * What went wrong.
   *
   * @return the kind
   */
  public ErrorKind kind() {
    return kind;
  }

  /**
   * Whether the server sent a Fluss error code.
   *
   * @return true when {@link #flussCode()} is meaningful
   */
  public boolean hasFlussCode() {
    return flussCode != NO_CODE;
  }

  /**
   * The Fluss error code the server sent.
   *
   * @return the code, or {@link #NO_CODE}
   */
  public int flussCode() {
    return flussCode;
  }

  /**
   * The name of the Fluss error code ({@code TABLE_NOT_EXIST}, ...).
   *
   * @return the name, or null without a code
   */
  public String flussCodeName() {
    return flussCodeName;
  }

  // Fluss error codes that pick a finer class (the core's error/codes.rs).
  private static final int DATABASE_NOT_EXIST = 4;
  private static final int DATABASE_ALREADY_EXIST = 6;
  private static final int TABLE_NOT_EXIST = 7;
  private static final int TABLE_ALREADY_EXIST = 8;
  private static final int PARTITION_NOT_EXISTS = 36;
  private static final int PARTITION_ALREADY_EXISTS = 42;
  private static final int AUTHORIZATION_EXCEPTION = 48;

  /**
   * The one mapping of core errors to exception classes; the native library calls it.
   *
   * @param kindName the core's kind name ({@code "not_found"}, ...)
   * @param code the Fluss code, or {@link #NO_CODE}
   * @param codeName the Fluss code's name, or null
   * @param message the message
   * @return the exception to throw
   */
  static RiverletException fromNative(String kindName, int code, String codeName, String message) {
    ErrorKind kind = ErrorKind.fromCoreName(kindName);
    switch (kind) {
      case NOT_FOUND:
        switch (code) {
          case DATABASE_NOT_EXIST:
            return new DatabaseNotFoundException(message, code, codeName);
          case TABLE_NOT_EXIST:
            return new TableNotFoundException(message, code, codeName);
          case PARTITION_NOT_EXISTS:
            return new PartitionNotFoundException(message, code, codeName);
          default:
            return new NotFoundException(message, code, codeName);
        }
      case ALREADY_EXISTS:
        switch (code) {
          case DATABASE_ALREADY_EXIST:
            return new DatabaseAlreadyExistsException(message, code, codeName);
          case TABLE_ALREADY_EXIST:
            return new TableAlreadyExistsException(message, code, codeName);
          case PARTITION_ALREADY_EXISTS:
            return new PartitionAlreadyExistsException(message, code, codeName);
          default:
            return new AlreadyExistsException(message, code, codeName);
        }
      case INVALID_ARGUMENT:
        return new InvalidArgumentException(message, code, codeName);
      case UNSUPPORTED:
        return new UnsupportedException(message, code, codeName);
      case AUTHENTICATION:
        if (code == AUTHORIZATION_EXCEPTION) {
          return new AuthorizationException(message, code, codeName);
        }
        return new AuthenticationException(message, code, codeName);
      case NETWORK:
        return new NetworkException(message, code, codeName);
      case TIMEOUT:
        return new RequestTimeoutException(message, code, codeName);
      case SERVER:
        return new ServerException(message, code, codeName);
      case CORRUPT:
        return new CorruptDataException(message, code, codeName);
      case CLOSED:
        return new ClosedException(message);
      case IO:
        return new StorageIOException(message, code, codeName);
      default:
        return new InternalException(message, code, codeName);
    }
  }
}
