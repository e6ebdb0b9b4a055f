package io.riverlet;

/** A bug in Riverlet (an invariant that did not hold, or a panic caught at the JNI boundary). */
public class InternalException extends RiverletException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   */
  public InternalException(String message) {
    this(message, NO_CODE, null);
  }

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  public InternalException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.INTERNAL, message, flussCode, flussCodeName, null);
  }

  /**
   * For subclasses: a finer exception of another kind.
   *
   * @param kind the kind
   * @param message the message
   * @param flussCode the Fluss error code, or {@link #NO_CODE}
   * @param flussCodeName the code's name, or null
   */
  protected InternalException(ErrorKind kind, String message, int flussCode, String flussCodeName) {
    super(kind, message, flussCode, flussCodeName, null);
  }
}
