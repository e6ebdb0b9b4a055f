package io.riverlet;

/** A network problem that may go away when retried (connection refused or reset, server down). */
public class NetworkException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public NetworkException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public NetworkException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.NETWORK, message, flussCode, flussCodeName, null);
  }

  /**
   * For subclasses: a finer exception of another kind.
   *
   * @param kind the kind
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  protected NetworkException(ErrorKind kind, String message, int flussCode, String flussCodeName) {
    super(kind, message, flussCode, flussCodeName, null);
  }
}
