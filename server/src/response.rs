//! Encoded responses and their frames as lists of byte pieces, written to the connection with
//! vectored writes: a large `Bytes` field of a response message (the log records of a
//! FetchLog answer, read from a segment into a buffer of their own) goes to the socket from
//! that buffer, instead of being copied into the encoded message and then again into the frame.

use std::io::IoSlice;

use bytes::buf::UninitSlice;
use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use riverlet::rpc::frame;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// `Bytes` fields at least this long are sent as pieces of their own. Shorter ones are copied:
/// for them a copy costs less than one more piece in the vectored write.
const SPLICE_MIN: usize = 16 * 1024;

/// Most pieces handed to one vectored write (Linux takes up to 1024 per `writev`).
pub const MAX_SLICES_PER_WRITE: usize = 64;

/// An encoded response message, in pieces sent one after the other (none of them empty).
#[derive(Debug, Default)]
pub struct Encoded {
    pieces: Vec<Bytes>,
    len: usize,
}

impl Encoded {
    /// Encodes `message`, keeping each `Bytes` field of 16 KiB or more as a piece of its own
    /// (shared with the message, not copied).
    pub fn of<M: Message>(message: &M) -> Encoded {
        let len = message.encoded_len();
        let mut out = Splicing {
            done: Encoded::default(),
            current: Vec::with_capacity(len.min(4 * SPLICE_MIN)),
        };
        message.encode_raw(&mut out);
        let encoded = out.finish();
        debug_assert_eq!(encoded.len, len, "the pieces hold the whole message");
        encoded
    }

    /// Bytes in all pieces.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the message encoded to nothing (all its fields at their defaults).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded message as one buffer (a copy when it is in several pieces).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for p in &self.pieces {
            out.extend_from_slice(p);
        }
        out
    }

    fn push(&mut self, piece: Bytes) {
        if !piece.is_empty() {
            self.len += piece.len();
            self.pieces.push(piece);
        }
    }
}

impl From<Vec<u8>> for Encoded {
    fn from(bytes: Vec<u8>) -> Encoded {
        let mut e = Encoded::default();
        e.push(Bytes::from(bytes));
        e
    }
}

/// The output of [`Encoded::of`]: bytes go into `current` until a long `Bytes` field arrives,
/// which closes `current` as a piece and becomes the next piece itself.
struct Splicing {
    done: Encoded,
    current: Vec<u8>,
}

impl Splicing {
    fn finish(mut self) -> Encoded {
        let last = std::mem::take(&mut self.current);
        self.done.push(Bytes::from(last));
        self.done
    }
}

// SAFETY: every method that hands out or advances over uninitialised memory delegates to the
// same method of the `Vec<u8>` in `current`, whose implementation upholds BufMut's contract.
unsafe impl BufMut for Splicing {
    fn remaining_mut(&self) -> usize {
        self.current.remaining_mut()
    }

    unsafe fn advance_mut(&mut self, cnt: usize) {
        // SAFETY: the caller initialised `cnt` bytes of the chunk `chunk_mut` returned, which
        // is `current`'s.
        unsafe { self.current.advance_mut(cnt) }
    }

    fn chunk_mut(&mut self) -> &mut UninitSlice {
        self.current.chunk_mut()
    }

    /// prost puts a `Bytes` field's value with `put(value.clone())`; for a `Bytes` source
    /// `copy_to_bytes` is a shallow slice, so a long field becomes a piece without a copy.
    fn put<T: Buf>(&mut self, mut src: T)
    where
        Self: Sized,
    {
        let n = src.remaining();
        if n >= SPLICE_MIN {
            let before = Bytes::from(std::mem::take(&mut self.current));
            self.done.push(before);
            self.done.push(src.copy_to_bytes(n));
        } else {
            self.current.put(src);
        }
    }
}

/// The pieces of one response frame: the frame's head (length, response type, request id)
/// and the body's pieces, a short first piece copied in with the head.
pub type FramePieces = Vec<Bytes>;

/// A SUCCESS response frame around `body`, or the error frame naming why it cannot be framed
/// (a body over 2 GiB).
pub fn success_frame(request_id: i32, body: Encoded) -> FramePieces {
    let head = match frame::success_response_head(request_id, body.len()) {
        Ok(h) => h,
        Err(e) => {
            let code = crate::service::code_of(&e);
            return vec![Bytes::from(frame::encode_error_response(
                request_id,
                code,
                e.message(),
            ))];
        }
    };
    let mut pieces = body.pieces.into_iter();
    let mut first = Vec::with_capacity(head.len() + SPLICE_MIN);
    first.extend_from_slice(&head);
    let mut out = Vec::new();
    match pieces.next() {
        Some(p) if p.len() < SPLICE_MIN => first.extend_from_slice(&p),
        Some(p) => {
            out.push(Bytes::from(first));
            out.push(p);
            out.extend(pieces);
            return out;
        }
        None => {}
    }
    out.push(Bytes::from(first));
    out.extend(pieces);
    out
}

/// Writes every byte of `pieces` to `out`, up to [`MAX_SLICES_PER_WRITE`] pieces per write.
pub async fn write_pieces<W>(out: &mut W, mut pieces: FramePieces) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut next = 0;
    while next < pieces.len() {
        let slices: Vec<IoSlice<'_>> = pieces[next..]
            .iter()
            .take(MAX_SLICES_PER_WRITE)
            .map(|p| IoSlice::new(p))
            .collect();
        let mut written = out.write_vectored(&slices).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while written > 0 {
            let piece = &mut pieces[next];
            if written >= piece.len() {
                written -= piece.len();
                next += 1;
            } else {
                piece.advance(written);
                written = 0;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use riverlet::proto::{FetchLogResponse, PbFetchLogRespForBucket, PbFetchLogRespForTable};

    fn fetch_response(records: &[Bytes]) -> FetchLogResponse {
        FetchLogResponse {
            tables_resp: vec![PbFetchLogRespForTable {
                table_id: 7,
                buckets_resp: records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| PbFetchLogRespForBucket {
                        bucket_id: i as i32,
                        high_watermark: Some(1000 + i as i64),
                        records: Some(r.clone()),
                        ..Default::default()
                    })
                    .collect(),
            }],
        }
    }

    fn records(len: usize, seed: u8) -> Bytes {
        Bytes::from(
            (0..len)
                .map(|i| (i as u8).wrapping_mul(31) ^ seed)
                .collect::<Vec<u8>>(),
        )
    }

    /// The pieces are exactly prost's encoding, and long records are shared, not copied.
    #[test]
    fn long_records_are_shared_and_the_bytes_equal_prosts_encoding() {
        let recs = [
            records(100, 1),
            records(SPLICE_MIN, 2),
            records(300_000, 3),
            records(5, 4),
        ];
        let msg = fetch_response(&recs);
        let encoded = Encoded::of(&msg);
        assert_eq!(encoded.to_vec(), msg.encode_to_vec());
        assert_eq!(encoded.len(), msg.encoded_len());
        for long in &recs[1..3] {
            assert!(
                encoded
                    .pieces
                    .iter()
                    .any(|p| p.as_ptr() == long.as_ptr() && p.len() == long.len()),
                "a record of {} bytes was copied",
                long.len()
            );
        }
        assert!(!encoded
            .pieces
            .iter()
            .any(|p| p.as_ptr() == recs[0].as_ptr()));
        assert!(encoded.pieces.iter().all(|p| !p.is_empty()));
    }

    #[test]
    fn a_message_without_long_fields_is_one_piece() {
        let msg = fetch_response(&[records(10, 1), records(SPLICE_MIN - 1, 2)]);
        let encoded = Encoded::of(&msg);
        assert_eq!(encoded.pieces.len(), 1);
        assert_eq!(encoded.to_vec(), msg.encode_to_vec());
        assert!(Encoded::of(&FetchLogResponse::default()).is_empty());
    }

    /// The frame is the one-buffer frame, byte for byte, whatever the pieces.
    #[test]
    fn frames_equal_the_one_buffer_frame() {
        for recs in [
            vec![],
            vec![records(3, 1)],
            vec![records(200_000, 1)],
            vec![records(40_000, 1), records(9, 2), records(70_000, 3)],
        ] {
            let msg = fetch_response(&recs);
            let pieces = success_frame(42, Encoded::of(&msg));
            let joined: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
            let expected = frame::encode_success_response(42, &msg.encode_to_vec()).unwrap();
            assert_eq!(joined, expected);
            assert!(pieces.iter().all(|p| !p.is_empty()));
        }
    }

    /// A writer that takes a few bytes per call still gets every byte in order.
    #[tokio::test]
    async fn pieces_are_written_whole_through_short_writes() {
        let msg = fetch_response(&[records(50_000, 1), records(7, 2), records(90_000, 3)]);
        let expected = frame::encode_success_response(9, &msg.encode_to_vec()).unwrap();
        let (mut client, mut server) = tokio::io::duplex(1000);
        let writer = tokio::spawn(async move {
            write_pieces(&mut server, success_frame(9, Encoded::of(&msg))).await
        });
        let mut got = Vec::new();
        let read = tokio::io::AsyncReadExt::read_to_end(&mut client, &mut got);
        // A writer that loses its place writes forever: bounded, so that fails instead of hanging.
        tokio::time::timeout(std::time::Duration::from_secs(60), read)
            .await
            .expect("the frame was not written exactly once within 60 s")
            .unwrap();
        writer.await.unwrap().unwrap();
        assert_eq!(got, expected);
    }
}
