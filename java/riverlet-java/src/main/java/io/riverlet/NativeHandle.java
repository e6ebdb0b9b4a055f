package io.riverlet;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A native object's address guarded against use after close and against a close that races a
 * call: calls hold the read lock for their duration, {@link #close()} takes the write lock (so it
 * waits for calls in flight) and then frees the native object exactly once. A call after close
 * throws {@link ClosedException} naming the object; it never reaches native code.
 */
final class NativeHandle implements AutoCloseable {
  /** Frees a native object. */
  interface Free {
    void free(long address);
  }

  /** A call with the native address. */
  interface Call<T> {
    T apply(long address);
  }

  /** A call with the native address returning a long. */
  interface LongCall {
    long apply(long address);
  }

  /** A call with the native address and no result. */
  interface VoidCall {
    void apply(long address);
  }

  private final String what;
  private final Free free;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private long address;

  NativeHandle(String what, long address, Free free) {
    if (address == 0) {
      throw new InternalException("native code returned a null handle for " + what);
    }
    this.what = what;
    this.address = address;
    this.free = free;
  }

  private long enter() {
    lock.readLock().lock();
    if (address == 0) {
      lock.readLock().unlock();
      throw new ClosedException(what + " is closed");
    }
    return address;
  }

  <T> T call(Call<T> f) {
    long a = enter();
    try {
      return f.apply(a);
    } finally {
      lock.readLock().unlock();
    }
  }

  long callLong(LongCall f) {
    long a = enter();
    try {
      return f.apply(a);
    } finally {
      lock.readLock().unlock();
    }
  }

  void run(VoidCall f) {
    long a = enter();
    try {
      f.apply(a);
    } finally {
      lock.readLock().unlock();
    }
  }

  boolean isClosed() {
    lock.readLock().lock();
    try {
      return address == 0;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Runs {@code last} (if still open) and frees the native object; later calls throw {@link
   * ClosedException}. Idempotent; waits for calls in flight.
   */
  void close(VoidCall last) {
    lock.writeLock().lock();
    try {
      if (address == 0) {
        return;
      }
      long a = address;
      address = 0;
      try {
        if (last != null) {
          last.apply(a);
        }
      } finally {
        free.free(a);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public void close() {
    close(null);
  }

  /** Forgets the address without freeing it (another guard owns it now). */
  void abandon() {
    lock.writeLock().lock();
    try {
      address = 0;
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public String toString() {
    return what;
  }
}
