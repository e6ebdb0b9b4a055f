package io.riverlet;

/**
 * The server answered with a Fluss error code that has no finer exception class;
 * {@link #flussCode()} and {@link #flussCodeName()} say which.
 */
public class ServerException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public ServerException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.SERVER, message, flussCode, flussCodeName, null);
  }
}
