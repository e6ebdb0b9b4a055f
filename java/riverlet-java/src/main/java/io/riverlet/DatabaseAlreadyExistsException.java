package io.riverlet;

/** The database exists already (Fluss code DATABASE_ALREADY_EXIST). */
public class DatabaseAlreadyExistsException extends AlreadyExistsException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public DatabaseAlreadyExistsException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public DatabaseAlreadyExistsException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.ALREADY_EXISTS, message, flussCode, flussCodeName);
  }
}
