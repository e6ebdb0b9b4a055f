package io.riverlet;

/** A value passed to Riverlet cannot be used (bad schema, timestamp, filter, null key...); the message names it. */
public class InvalidArgumentException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public InvalidArgumentException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public InvalidArgumentException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.INVALID_ARGUMENT, message, flussCode, flussCodeName, null);
  }

  /**
   * For subclasses: a finer exception of another kind.
   *
   * @param kind the kind
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  protected InvalidArgumentException(ErrorKind kind, String message, int flussCode, String flussCodeName) {
    super(kind, message, flussCode, flussCodeName, null);
  }
}
