package io.riverlet;

import java.io.IOException;
import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * A started read ({@link Table#read(ReadOptions)}): its Arrow reader and the warnings the core
 * found while planning it. Closing it closes the reader.
 */
public final class ReadResult implements AutoCloseable {
  private final ArrowReader reader;
  private final List<Warning> warnings;

  ReadResult(ArrowReader reader, List<Warning> warnings) {
    this.reader = reader;
    this.warnings = warnings;
  }

  /**
   * The batches; batches are fetched as the reader advances.
   *
   * @return the reader (closed with this result)
   */
  public ArrowReader reader() {
    return reader;
  }

  /**
   * The core's warnings about this read (e.g. {@link Warning#BEFORE_RETENTION}); empty when
   * there are none.
   *
   * @return the warnings, in the order the core reported them
   */
  public List<Warning> warnings() {
    return warnings;
  }

  @Override
  public void close() throws IOException {
    reader.close();
  }
}
