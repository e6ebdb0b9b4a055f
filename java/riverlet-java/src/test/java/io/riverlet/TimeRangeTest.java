package io.riverlet;

import static io.riverlet.TestSupport.readAll;
import static io.riverlet.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Commit-time windows {@code [start, end)} in every form the core accepts, on a log table and a
 * primary-key table written in three rounds with clock marks between them.
 */
@org.junit.jupiter.api.Tag(ServerTestBase.INTEROP_TAG)
class TimeRangeTest extends ServerTestBase {
  static String logTable;
  static String pkTable;
  /** Before round 2, before round 3 (epoch ms, server clock = this machine's). */
  static long mark2;
  static long mark3;

  private static void pause() throws InterruptedException {
    Thread.sleep(30);
  }

  private static void round(Table log, Table pk, Object[]... rows) {
    try (VectorSchemaRoot r = rows(alloc(), rows)) {
      log.append(r);
      pk.upsert(r);
    }
    log.flush();
    pk.flush();
  }

  @BeforeAll
  static void writeThreeRounds() throws Exception {
    String db = newDatabase();
    logTable = createTable(db, "log", TableDescriptor.builder(TestSupport.idNameRegion()).build());
    pkTable = createTable(db, "pk",
        TableDescriptor.builder(TestSupport.idNameRegion()).primaryKey("id").build());
    try (Table log = conn.table(logTable); Table pk = conn.table(pkTable)) {
      round(log, pk, new Object[] {1L, "r1", "eu"}, new Object[] {2L, "r1", "eu"});
      pause();
      mark2 = System.currentTimeMillis();
      pause();
      round(log, pk, new Object[] {2L, "r2", "eu"}, new Object[] {3L, "r2", "us"});
      pause();
      mark3 = System.currentTimeMillis();
      pause();
      round(log, pk, new Object[] {4L, "r3", "us"});
    }
  }

  private static List<Object> ids(String table, ReadOptions o) throws Exception {
    try (Table t = conn.table(table)) {
      return TestSupport.sortedLongs(TestSupport.column(readAll(t.scan(o)), 0));
    }
  }

  @Test
  void epochMillisWindow() throws Exception {
    ReadOptions o = ReadOptions.builder().start(mark2).end(mark3).build();
    assertEquals(List.of(2L, 3L), ids(logTable, o));
    // The primary-key window folds the changes of the window per key.
    assertEquals(List.of(2L, 3L), ids(pkTable, o));
    try (Table t = conn.table(logTable)) {
      assertEquals(2, t.count(o));
    }
  }

  @Test
  void openEndedWindow() throws Exception {
    assertEquals(List.of(2L, 3L, 4L), ids(logTable, ReadOptions.builder().start(mark2).build()));
    assertEquals(List.of(4L), ids(logTable, ReadOptions.builder().start(mark3).build()));
  }

  @Test
  void instantAndTextForms() throws Exception {
    ReadOptions byInstant = ReadOptions.builder()
        .start(Instant.ofEpochMilli(mark2)).end(Instant.ofEpochMilli(mark3)).build();
    assertEquals(List.of(2L, 3L), ids(logTable, byInstant));

    DateTimeFormatter f = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");
    ZoneId berlin = ZoneId.of("Europe/Berlin");
    String start = f.format(Instant.ofEpochMilli(mark2).atZone(berlin));
    String end = f.format(Instant.ofEpochMilli(mark3).atZone(berlin));
    ReadOptions byText = ReadOptions.builder().start(start).end(end).zone(berlin).build();
    assertEquals(List.of(2L, 3L), ids(logTable, byText));
    assertEquals(List.of(2L, 3L), ids(pkTable, byText));

    // The same wall clock read in UTC is an hour or two later (Berlin is ahead of UTC): a
    // window starting in the future, which the core refuses.
    ReadOptions shifted = ReadOptions.builder().start(start).end(end).zone("UTC").build();
    InvalidArgumentException future =
        assertThrows(InvalidArgumentException.class, () -> ids(logTable, shifted));
    assertTrue(future.getMessage().contains("future"), future.getMessage());

    // An offset in the text wins over the zone.
    String withOffset =
        DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
            .format(Instant.ofEpochMilli(mark2).atOffset(ZoneOffset.ofHours(5)));
    assertEquals(List.of(2L, 3L, 4L),
        ids(logTable, ReadOptions.builder().start(withOffset).zone("UTC").build()));
    // Epoch-millisecond digits as text.
    assertEquals(List.of(2L, 3L),
        ids(logTable, ReadOptions.builder()
            .start(Long.toString(mark2)).end(Long.toString(mark3)).build()));
  }

  @Test
  void changelogOfAWindowCarriesCommitTimestamps() throws Exception {
    try (Table t = conn.table(logTable)) {
      List<List<Object>> rows =
          readAll(t.scan(ReadOptions.builder().start(mark2).end(mark3).changelog(true).build()));
      assertEquals(2, rows.size());
      for (List<Object> r : rows) {
        // _commit_timestamp is TIMESTAMP_LTZ(3): Arrow's zone-less timestamp of the epoch value.
        long commit = ((java.time.LocalDateTime) r.get(2)).toInstant(ZoneOffset.UTC).toEpochMilli();
        assertTrue(commit >= mark2 && commit < mark3, "commit " + commit);
      }
    }
  }

  @Test
  void badWindowsAreInvalidArguments() {
    try (Table t = conn.table(logTable)) {
      InvalidArgumentException endOnly = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().end(mark3).build()));
      assertTrue(endOnly.getMessage().contains("start"), endOnly.getMessage());
      InvalidArgumentException reversed = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().start(mark3).end(mark2).build()));
      assertTrue(reversed.getMessage().contains("before"), reversed.getMessage());
      InvalidArgumentException text = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().start("yesterday-ish").build()));
      assertTrue(text.getMessage().contains("yesterday-ish"), text.getMessage());
      InvalidArgumentException zone = assertThrows(InvalidArgumentException.class,
          () -> t.scan(ReadOptions.builder().start("2024-01-01").zone("Mars/Olympus").build()));
      assertTrue(zone.getMessage().contains("Mars/Olympus"), zone.getMessage());
      InvalidArgumentException future = assertThrows(InvalidArgumentException.class,
          () -> t.count(ReadOptions.builder().start(System.currentTimeMillis() + 3_600_000L)
              .build()));
      assertTrue(future.getMessage().contains("future"), future.getMessage());
    }
  }

  @Test
  void aWindowBeforeTheRetentionCarriesAWarning() throws Exception {
    String db = newDatabase();
    String hourTtl = createTable(db, "ttl_1h",
        TableDescriptor.builder(TestSupport.idNameRegion()).property("table.log.ttl", "1h").build());
    long now = System.currentTimeMillis();
    try (Table t = conn.table(hourTtl)) {
      ReadResult old = t.read(ReadOptions.builder().start(now - 2 * 3_600_000L).build());
      assertEquals(List.of(), readAll(old.reader())); // readAll closes the reader
      assertEquals(1, old.warnings().size(), old.warnings().toString());
      Warning w = old.warnings().get(0);
      assertEquals(Warning.BEFORE_RETENTION, w.kind());
      assertTrue(w.message().contains(hourTtl) && w.message().contains("table.log.ttl"),
          w.message());
      try (ReadResult recent = t.read(ReadOptions.builder().start(now - 60_000L).build())) {
        assertEquals(List.of(), recent.warnings());
      }
    }
    // Without the property, Fluss's default TTL (7 days) applies.
    try (Table t = conn.table(logTable)) {
      ReadResult epoch = t.read(ReadOptions.builder().start(0L).end(mark2).build());
      assertEquals(List.of(1L, 2L),
          TestSupport.sortedLongs(TestSupport.column(readAll(epoch.reader()), 0)));
      assertEquals(1, epoch.warnings().size(), epoch.warnings().toString());
      try (ReadResult plain = t.read(ReadOptions.builder().build())) {
        assertEquals(List.of(), plain.warnings());
      }
    }
  }

  @Test
  void boundsResolveInAZoneAsTheCoreReadsThem() {
    ZoneId shanghai = ZoneId.of("Asia/Shanghai");
    assertEquals(java.time.LocalDate.of(2026, 1, 1).atStartOfDay(shanghai).toInstant()
        .toEpochMilli(), TimeBound.text("2026-01-01").resolve("Asia/Shanghai"));
    assertEquals(java.time.LocalDateTime.of(2026, 3, 4, 5, 6, 7, 8_000_000).atZone(shanghai)
        .toInstant().toEpochMilli(), TimeBound.text("2026-03-04T05:06:07.008").resolve("+08:00"));
    assertEquals(1_700_000_000_123L, TimeBound.text("1700000000123").resolve("UTC"));
    assertEquals(1_700_000_000_123L, TimeBound.epochMillis(1_700_000_000_123L).resolve(null));
    InvalidArgumentException text = assertThrows(InvalidArgumentException.class,
        () -> TimeBound.text("not-a-time").resolve("UTC"));
    assertTrue(text.getMessage().contains("not-a-time"), text.getMessage());
    InvalidArgumentException blank = assertThrows(InvalidArgumentException.class,
        () -> TimeBound.text(" ").resolve("UTC"));
    assertTrue(blank.getMessage().contains("blank"), blank.getMessage());
    InvalidArgumentException zone = assertThrows(InvalidArgumentException.class,
        () -> TimeBound.text("2026-01-01").resolve("Mars/Olympus"));
    assertTrue(zone.getMessage().contains("Mars/Olympus"), zone.getMessage());
  }
}
