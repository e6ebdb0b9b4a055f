package io.riverlet;

/** The named partition does not exist (Fluss code PARTITION_NOT_EXISTS). */
public class PartitionNotFoundException extends NotFoundException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public PartitionNotFoundException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public PartitionNotFoundException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.NOT_FOUND, message, flussCode, flussCodeName);
  }
}
