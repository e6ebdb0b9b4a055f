package io.riverlet;

/**
 * The server's authorizer refused the request (Fluss's {@code AUTHORIZATION_EXCEPTION}); the
 * message names the principal, the operation and the resource.
 */
public class AuthorizationException extends AuthenticationException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception with the Fluss error code the server sent.
   *
   * @param message the message
   * @param flussCode the Fluss error code
   * @param flussCodeName the code's name
   */
  public AuthorizationException(String message, int flussCode, String flussCodeName) {
    super(ErrorKind.AUTHENTICATION, message, flussCode, flussCodeName);
  }
}
