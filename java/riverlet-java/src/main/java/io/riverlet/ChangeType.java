package io.riverlet;

/** The kind of change of one row of a changelog read or a subscription batch. */
public enum ChangeType {
  /** A new row ({@code +I}; also every row of an append-only log). */
  INSERT("insert", "+I"),
  /** The old values of an updated row ({@code -U}). */
  UPDATE_BEFORE("update_before", "-U"),
  /** The new values of an updated row ({@code +U}). */
  UPDATE_AFTER("update_after", "+U"),
  /** A deleted row ({@code -D}). */
  DELETE("delete", "-D");

  private final String columnValue;
  private final String shortString;

  ChangeType(String columnValue, String shortString) {
    this.columnValue = columnValue;
    this.shortString = shortString;
  }

  /**
   * The value in the {@code _change_type} column.
   *
   * @return e.g. {@code update_after}
   */
  public String columnValue() {
    return columnValue;
  }

  /**
   * Flink's short form.
   *
   * @return {@code +I}, {@code -U}, {@code +U} or {@code -D}
   */
  public String shortString() {
    return shortString;
  }

  /**
   * The change type of a {@code _change_type} value (or its short form).
   *
   * @param value the column value
   * @return the change type
   * @throws InvalidArgumentException for an unknown value
   */
  public static ChangeType of(String value) {
    for (ChangeType t : values()) {
      if (t.columnValue.equals(value) || t.shortString.equals(value)) {
        return t;
      }
    }
    throw new InvalidArgumentException("unknown change type '" + value + "'");
  }
}
