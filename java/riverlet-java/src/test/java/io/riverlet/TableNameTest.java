package io.riverlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link TableName}: the core's split of a table name into its table and view kind, through the
 * JNI binding, and the names it gives against an embedded server.
 */
class TableNameTest extends ServerTestBase {

  private static void assertSplit(String name, String table, ViewKind kind) {
    TableName n = TableName.of(name);
    assertEquals(name, n.name());
    assertEquals(table, n.table(), name);
    assertEquals(kind, n.kind(), name);
    assertEquals(kind != ViewKind.TABLE, n.isView(), name);
    assertEquals(name, n.table() + n.suffix(), name);
  }

  @Test
  void splitsEachSuffix() {
    assertSplit("orders", "orders", ViewKind.TABLE);
    assertSplit("orders$changelog", "orders", ViewKind.CHANGELOG);
    assertSplit("orders$lake", "orders", ViewKind.LAKE);
    assertSplit("orders$lake$snapshots", "orders", ViewKind.LAKE_SNAPSHOTS);
    // Only the last suffix is the view's; a suffix-like ending that is not one is a table.
    assertSplit("t$changelog$lake", "t$changelog", ViewKind.LAKE);
    assertSplit("t$snapshots", "t$snapshots", ViewKind.TABLE);
    assertEquals("$lake$snapshots", TableName.of("orders$lake$snapshots").suffix());
    assertEquals("", TableName.of("orders").suffix());
    assertTrue(ViewKind.LAKE.isLakeView() && ViewKind.LAKE_SNAPSHOTS.isLakeView());
    assertFalse(ViewKind.TABLE.isLakeView() || ViewKind.CHANGELOG.isLakeView());
    assertEquals(TableName.of("orders$lake"), TableName.of("orders$lake"));
  }

  @Test
  void aNameThatIsOnlyASuffixIsRefused() {
    for (String name : new String[] {"$changelog", "$lake", "$lake$snapshots"}) {
      InvalidArgumentException e =
          assertThrows(InvalidArgumentException.class, () -> TableName.of(name));
      assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
    }
    assertThrows(NullPointerException.class, () -> TableName.of(null));
  }

  @Test
  void theTableOfEachViewNameIsTheTable() {
    String db = newDatabase();
    String full = createTable(db, "orders", TableDescriptor.builder(TestSupport.idNameRegion())
        .build());
    for (String name : new String[] {"orders", "orders$changelog", "orders$lake",
        "orders$lake$snapshots"}) {
      TableName n = TableName.of(name);
      assertTrue(admin.tableExists(db + "." + n.table()), name);
      assertEquals("orders", admin.getTableInfo(db + "." + n.table()).tableName(), name);
    }
    // The core opens a lake view by its name (of a lake-enabled table only), not a changelog.
    assertThrows(NotFoundException.class, () -> conn.table(full + "$lake"));
    assertThrows(InvalidArgumentException.class, () -> conn.table(full + "$changelog"));
  }
}
