-- rbm64 from Fluss 0.9.1's aggregation page, run only by flink-agg.sh --fluss (the embedded
-- server refuses rbm64 at creation: Java's Roaring64Bitmap serialization has no portable
-- specification). The page's two INSERT literals contain a stray space each, which Flink
-- refuses ("Binary literal string must contain only characters '0' - '9', 'A' - 'F'"):
-- here without it. The union is compared with the bytes the page states.
-- [quick]
-- exec batch
CREATE TABLE session_interactions (
    session_id BIGINT,
    interaction_bitmap BYTES,
    PRIMARY KEY (session_id) NOT ENFORCED
) WITH (
    'table.merge-engine' = 'aggregation',
    'fields.interaction_bitmap.agg' = 'rbm64'
)
-- => OK
-- [quick]
-- exec stream
INSERT INTO session_interactions VALUES (1, x'01010000000000000004000000000000000000000000000000000001000000FE010000000102020000000A00140001000000000000000000000000000000')
-- => OK
-- [quick]
-- exec stream
INSERT INTO session_interactions VALUES (1, x'01010000000000000004000000000000000000000000000000000001000000FE0100000001020200000014001E0001000000000000000000000000000000')
-- => OK
-- [quick]
-- query batch
SELECT session_id, interaction_bitmap = x'01010000000000000004000000000000000000000000000000000001000000FE010000000102030000000A0014001E0001000000000000000000000000000000' FROM session_interactions WHERE session_id = 1
-- => +I[1, true]
