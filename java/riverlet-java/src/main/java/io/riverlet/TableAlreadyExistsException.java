package io.riverlet;

/** The table exists already (Fluss code TABLE_ALREADY_EXIST). */
public class TableAlreadyExistsException extends AlreadyExistsException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public TableAlreadyExistsException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public TableAlreadyExistsException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.ALREADY_EXISTS, message, flussCode, flussCodeName);
  }
}
