package io.riverlet;

import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Tag(ServerTestBase.INTEROP_TAG)
class SubscriptionTest extends ServerTestBase {

  /** Polls until {@code n} rows arrived (or 200 polls passed); returns (type, offset, id). */
  private static List<List<Object>> pollRows(Subscription s, int n) {
    return pollRows(s, n, 200);
  }

  /** Polls until {@code n} rows arrived or {@code polls} polls passed. */
  private static List<List<Object>> pollRows(Subscription s, int n, int polls) {
    List<List<Object>> out = new ArrayList<>();
    for (int i = 0; i < polls && out.size() < n; i++) {
      for (ChangeBatch b : s.poll(Duration.ofMillis(100))) {
        try (b) {
          for (int r = 0; r < b.rowCount(); r++) {
            List<Object> row = TestSupport.values(b.root()).get(r);
            out.add(List.of(b.changeType(r), b.offset(r), row.get(3)));
          }
        }
      }
    }
    return out;
  }

  @Test
  void changesOfAPrimaryKeyTableWithPositions() {
    String db = newDatabase();
    String name = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").bucketCount(1).build());
    try (Table t = conn.table(name);
        Subscription s = t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).build())) {
      assertEquals(TestSupport.idNameRegion().getFields().size(), s.schema().getFields().size());
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"})) {
        t.upsert(r);
      }
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "b", "eu"})) {
        t.upsert(r);
      }
      try (VectorSchemaRoot k = TestSupport.longs(alloc(), "id", 1)) {
        t.delete(k);
      }
      t.flush();
      List<List<Object>> got = pollRows(s, 4);
      assertEquals(
          List.of(
              List.of(ChangeType.INSERT, 0L, 1L),
              List.of(ChangeType.UPDATE_BEFORE, 1L, 1L),
              List.of(ChangeType.UPDATE_AFTER, 2L, 1L),
              List.of(ChangeType.DELETE, 3L, 1L)),
          got);
      SubscriptionPosition pos = s.position();
      assertEquals(1, pos.offsets().size());
      assertEquals(4L, pos.offset(null, 0));
      assertEquals(pos, SubscriptionPosition.parse(pos.toString()));
      assertEquals(List.of(), pollRows(s, 1, 5));
    }
  }

  @Test
  void resumeFromACheckpointedPosition() {
    String db = newDatabase();
    String name = createTable(db, "log",
        TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(2).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "a", "eu"},
          new Object[] {2L, "b", "us"}, new Object[] {3L, "c", "eu"})) {
        t.append(r);
      }
      t.flush();
      SubscriptionPosition checkpoint;
      try (Subscription s = t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).build())) {
        assertEquals(3, pollRows(s, 3).size());
        checkpoint = SubscriptionPosition.parse(s.position().toString());
      }
      assertEquals(3L, checkpoint.offsets().stream().mapToLong(BucketOffset::offset).sum());
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {4L, "d", "us"})) {
        t.append(r);
      }
      t.flush();
      try (Subscription s = t.subscribe(SubscribeOptions.fromPosition(checkpoint).build())) {
        List<List<Object>> got = pollRows(s, 1);
        assertEquals(1, got.size());
        assertEquals(4L, got.get(0).get(2));
        assertEquals(List.of(), pollRows(s, 1, 5));
      }
      // One bucket only, from the earliest offset.
      try (Subscription s = t.subscribe(
          SubscribeOptions.builder(StartupMode.EARLIEST).buckets(0).build())) {
        assertEquals(1, s.position().offsets().size());
        assertEquals(0, s.position().offsets().get(0).bucket());
      }
    }
  }

  @Test
  void projectedLogSubscriptionFromLatest() {
    String db = newDatabase();
    String name = createTable(db, "log",
        TableDescriptor.builder(TestSupport.idNameRegion()).bucketCount(2).build());
    try (Table t = conn.table(name)) {
      try (VectorSchemaRoot r = rows(alloc(), new Object[] {1L, "old", "eu"})) {
        t.append(r);
      }
      t.flush();
      try (Subscription s = t.subscribe(
          SubscribeOptions.builder(StartupMode.LATEST).columns("name", "id").build())) {
        assertEquals(2, s.schema().getFields().size());
        try (VectorSchemaRoot r = rows(alloc(), new Object[] {2L, "new", "us"})) {
          t.append(r);
        }
        t.flush();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 200 && names.isEmpty(); i++) {
          for (ChangeBatch b : s.poll(Duration.ofMillis(100))) {
            try (b) {
              assertEquals(5, b.root().getFieldVectors().size());
              for (List<Object> row : TestSupport.values(b.root())) {
                names.add((String) row.get(3));
              }
            }
          }
        }
        assertEquals(List.of("new"), names);
      }
    }
  }

  @Test
  void pollAfterCloseIsClosedException() {
    String db = newDatabase();
    String name = createTable(db, "log", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    try (Table t = conn.table(name)) {
      Subscription s = t.subscribe(SubscribeOptions.builder(StartupMode.EARLIEST).build());
      s.close();
      s.close();
      assertTrue(s.isClosed());
      assertThrows(ClosedException.class, () -> s.poll(Duration.ofMillis(10)));
      assertThrows(ClosedException.class, s::position);
    }
  }

  @Test
  void badPositionTextIsInvalid() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> SubscriptionPosition.parse("p1/0@5,zz"));
    assertTrue(e.getMessage().contains("zz"), e.getMessage());
    assertEquals(new SubscriptionPosition(List.of(new BucketOffset(1L, 0, 5),
        new BucketOffset(null, 2, 7))), SubscriptionPosition.parse("p1/0@5, 2@7"));
  }
}
