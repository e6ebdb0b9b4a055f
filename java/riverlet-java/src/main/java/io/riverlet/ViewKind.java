package io.riverlet;

/**
 * What a table name names: the table itself or one of its views (Fluss's virtual tables), by
 * the name's suffix. {@link TableName#of} tells a name's kind; the rule lives in the core.
 */
public enum ViewKind {
  /** The table itself: a name without a view suffix ({@code orders}). */
  TABLE,
  /**
   * The table's changelog ({@code orders$changelog}): every change with its {@code
   * _change_type}, {@code _log_offset} and {@code _commit_timestamp}. The core does not open such
   * a name; an engine that shows the changelog as a table reads the table itself with {@link
   * ReadOptions.Builder#changelog}.
   */
  CHANGELOG,
  /**
   * The rows of the table's latest lake snapshot ({@code orders$lake}); {@link
   * Connection#table} opens it as a bounded, read-only view.
   */
  LAKE,
  /**
   * One row per lake snapshot of the table ({@code orders$lake$snapshots}); {@link
   * Connection#table} opens it as a bounded, read-only view.
   */
  LAKE_SNAPSHOTS;

  /**
   * Whether this is a lake view ({@link #LAKE} or {@link #LAKE_SNAPSHOTS}), which {@link
   * Connection#table} opens by its name.
   *
   * @return true for a lake view
   */
  public boolean isLakeView() {
    return this == LAKE || this == LAKE_SNAPSHOTS;
  }
}
