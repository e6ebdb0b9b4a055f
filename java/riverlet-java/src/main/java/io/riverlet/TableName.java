package io.riverlet;

import java.util.Objects;

/**
 * A table name split into the name of the table it belongs to and what it names of that table
 * (a {@link ViewKind}): {@code orders} is table {@code orders} itself, {@code orders$changelog}
 * its changelog, {@code orders$lake} and {@code orders$lake$snapshots} its lake views. The core
 * splits the name (the one rule of view names, shared by the Java API and the Spark and Flink
 * connectors); this class only holds the result.
 */
public final class TableName {
  private final String name;
  private final String table;
  private final ViewKind kind;

  /**
   * Built by the native library.
   *
   * @param name the name as given
   * @param table the name of the table it belongs to
   * @param kind the {@link ViewKind} ordinal
   */
  TableName(String name, String table, int kind) {
    this.name = name;
    this.table = table;
    this.kind = ViewKind.values()[kind];
  }

  /**
   * Splits a table name (without its database) by its view suffix. Only the last suffix is the
   * view's; the table's name itself is not validated here (opening or creating it does that).
   *
   * @param name a table name, e.g. {@code orders$lake}
   * @return the name, its table's name and its kind
   * @throws InvalidArgumentException for a name that is only a view suffix (e.g. {@code $lake}),
   *     naming it
   * @throws NullPointerException for a null name
   */
  public static TableName of(String name) {
    Objects.requireNonNull(name, "name");
    NativeLibrary.ensureLoaded();
    return NativeMethods.tableName(name);
  }

  /**
   * The name as given, e.g. {@code orders$lake}.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * The name of the table this name belongs to, e.g. {@code orders} for {@code orders$lake};
   * the name itself for a {@link ViewKind#TABLE}.
   *
   * @return the table's name
   */
  public String table() {
    return table;
  }

  /**
   * What the name names of its table.
   *
   * @return the kind
   */
  public ViewKind kind() {
    return kind;
  }

  /**
   * Whether the name is a view of a table rather than the table itself.
   *
   * @return true unless the kind is {@link ViewKind#TABLE}
   */
  public boolean isView() {
    return kind != ViewKind.TABLE;
  }

  /**
   * The view suffix of the name: what follows {@link #table()}, {@code ""} for the table.
   *
   * @return the suffix
   */
  public String suffix() {
    return name.substring(table.length());
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof TableName)) {
      return false;
    }
    TableName other = (TableName) o;
    return name.equals(other.name) && table.equals(other.table) && kind == other.kind;
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, table, kind);
  }

  @Override
  public String toString() {
    return "TableName(" + name + ": " + kind + " of " + table + ")";
  }
}
