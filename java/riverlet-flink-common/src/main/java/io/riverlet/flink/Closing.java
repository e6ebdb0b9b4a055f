package io.riverlet.flink;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;

/**
 * How the runtime parts of the connector release what they hold when Flink closes them.
 *
 * <p>{@code close()} of a source reader, lookup function or writer operator runs on the task
 * thread after a cancel too, and in Flink 2.x an exception thrown there is fatal to the whole
 * TaskManager ("FATAL - exception in exception handler of task ..."): every later job of the
 * cluster then waits for task slots that never come. So these {@code close()} methods release
 * everything and report what failed to the log instead of throwing (errors that concern the
 * data, such as a failed final flush, are raised earlier, by {@code finish()} or a
 * checkpoint). They also wait for the work still using their connection (a fetcher thread in a
 * poll, lookups in flight) before closing it: the Arrow memory of that work belongs to the
 * connection's allocator, which closing the connection closes, and closing an allocator with
 * memory still in use is exactly such an exception. These waits are bounded, and not cut short
 * by the interrupts Flink sends a cancelled task's thread (the interrupt stays set for the
 * caller).
 */
public final class Closing {

    private Closing() {}

    /**
     * Closes {@code resource} (if not null); a failure is logged as a warning naming
     * {@code what}, never thrown.
     *
     * @param log the logger of the closing class
     * @param what what is closed, for the log (e.g. "the connection to db.t@host:9123")
     * @param resource the resource, or null
     */
    public static void quietly(Logger log, String what, AutoCloseable resource) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            log.warn("closing {} failed", what, e);
        }
    }

    /**
     * Waits up to {@code timeout} for {@code thread} to end, through interrupts of the calling
     * thread (which stay set afterwards).
     *
     * @param thread the thread
     * @param timeout how long at most
     * @return whether the thread ended
     */
    public static boolean join(Thread thread, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (thread.isAlive()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    break;
                }
                try {
                    thread.join(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            return !thread.isAlive();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits up to {@code timeout} for {@code future} to complete, normally or not, through
     * interrupts of the calling thread (which stay set afterwards).
     *
     * @param future the future
     * @param timeout how long at most
     * @return whether it completed
     */
    public static boolean await(CompletableFuture<?> future, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (!future.isDone()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    future.get(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | TimeoutException | RuntimeException e) {
                    // Completed exceptionally (done), or the time is up (checked above).
                }
            }
            return future.isDone();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
