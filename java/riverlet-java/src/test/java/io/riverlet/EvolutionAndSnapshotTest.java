package io.riverlet;

import static io.riverlet.TestSupport.list;
import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/**
 * Admin.addColumns (ALTER TABLE ... ADD COLUMN) and read-optimized reads of the KV snapshot the
 * embedded server takes on demand (LocalServer.takeKvSnapshots). Embedded server only: the
 * snapshot must be taken at a known point.
 */
class EvolutionAndSnapshotTest extends ServerTestBase {

  private static List<List<Object>> sortedById(List<List<Object>> rows) {
    List<List<Object>> copy = new ArrayList<>(rows);
    copy.sort((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0)));
    return copy;
  }

  @Test
  void readOptimizedReadsTheSnapshotNotTheLogTail() throws Exception {
    if (server == null) {
      System.out.println("NOT APPLICABLE to the server at " + EXTERNAL_BOOTSTRAP
          + ": EvolutionAndSnapshotTest.readOptimizedReadsTheSnapshotNotTheLogTail: needs a KV "
          + "snapshot at a known point");
      return;
    }
    String db = newDatabase();
    String name = createTable(db, "ro",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(2).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"},
          new Object[] {2L, "b", "us"})) {
        t.upsert(r);
      }
      t.flush();
      ReadOptions ro = ReadOptions.builder().readOptimized(true).build();
      assertEquals(List.of(), readAll(t.scan(ro)));
      server.takeKvSnapshots();
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {2L, "B", "us"},
          new Object[] {3L, "c", null})) {
        t.upsert(r);
      }
      t.flush();
      assertEquals(List.of(list(1L, "a", "eu"), list(2L, "b", "us")), sortedById(readAll(t.scan(ro))));
      assertEquals(List.of(list(1L, "a", "eu"), list(2L, "B", "us"), list(3L, "c", null)),
          sortedById(readAll(t.scan())));
    }
  }

  @Test
  void addColumnsReadsOldRowsWithNulls() throws Exception {
    String db = newDatabase();
    String name = createTable(db, "evolve",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(1).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"})) {
        t.upsert(r);
      }
      t.flush();
    }
    admin.addColumns(name, new Schema(List.of(Field.nullable("note", new ArrowType.Utf8()))));
    try (Table t = conn.table(name)) {
      assertEquals(List.of(list(1L, "a", "eu", null)), readAll(t.scan()));
    }
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> admin.addColumns(name,
            new Schema(List.of(Field.notNullable("m", new ArrowType.Int(64, true))))));
    assertTrue(e.getMessage().contains("nullable"), e.getMessage());
  }
}
