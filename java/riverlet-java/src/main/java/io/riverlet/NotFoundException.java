package io.riverlet;

/** A database, table, partition, bucket or key that was named does not exist. */
public class NotFoundException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public NotFoundException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public NotFoundException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.NOT_FOUND, message, flussCode, flussCodeName, null);
  }

  /**
   * For subclasses: a finer exception of another kind.
   *
   * @param kind the kind
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  protected NotFoundException(ErrorKind kind, String message, int flussCode, String flussCodeName) {
    super(kind, message, flussCode, flussCodeName, null);
  }
}
