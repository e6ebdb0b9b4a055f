package io.riverlet;

/** An object was used after {@code close()} (or its connection was closed). */
public class ClosedException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public ClosedException(String message) {
    super(ErrorKind.CLOSED, message, NO_CODE, null, null);
  }
}
