package io.riverlet;

/** The named database does not exist (Fluss code DATABASE_NOT_EXIST). */
public class DatabaseNotFoundException extends NotFoundException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public DatabaseNotFoundException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public DatabaseNotFoundException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.NOT_FOUND, message, flussCode, flussCodeName);
  }
}
