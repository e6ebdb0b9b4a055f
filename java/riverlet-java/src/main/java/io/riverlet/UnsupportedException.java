package io.riverlet;

/** The operation is valid but not supported here (by this server version, this table kind, or from a Riverlet runtime thread). */
public class UnsupportedException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public UnsupportedException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public UnsupportedException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.UNSUPPORTED, message, flussCode, flussCodeName, null);
  }

  /**
   * For subclasses: a finer exception of another kind.
   *
   * @param kind the kind
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  protected UnsupportedException(ErrorKind kind, String message, int flussCode, String flussCodeName) {
    super(kind, message, flussCode, flussCodeName, null);
  }
}
