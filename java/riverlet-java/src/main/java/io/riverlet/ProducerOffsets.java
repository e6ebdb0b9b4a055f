package io.riverlet;

import java.util.Map;

/**
 * A producer's registered offsets ({@link Admin#getProducerOffsets}): what Fluss's Flink sink
 * records for the undo recovery of aggregation tables.
 *
 * @param producerId the producer id
 * @param expirationTimeMs when the registration expires, in milliseconds since the epoch
 * @param offsets the offset of each bucket
 */
public record ProducerOffsets(
    String producerId, long expirationTimeMs, Map<ProducerBucket, Long> offsets) {}
