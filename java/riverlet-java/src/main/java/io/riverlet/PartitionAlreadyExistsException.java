package io.riverlet;

/** The partition exists already (Fluss code PARTITION_ALREADY_EXISTS). */
public class PartitionAlreadyExistsException extends AlreadyExistsException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public PartitionAlreadyExistsException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public PartitionAlreadyExistsException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.ALREADY_EXISTS, message, flussCode, flussCodeName);
  }
}
