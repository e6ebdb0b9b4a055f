//! Fluss RPC framing (fluss-rpc `MessageCodec`): big-endian headers behind a 4-byte length.
//!
//! Every frame on the socket is `int32 length` followed by `length` bytes; the length does not
//! count itself. All header integers are big-endian. After the length:
//!
//! ```text
//! request:         int16 api_key | int16 api_version | int32 request_id | protobuf request
//! response:        int8 type (0 SUCCESS, 1 ERROR) | int32 request_id | protobuf response / ErrorResponse
//! server failure:  int8 type (2)                                      | protobuf ErrorResponse
//! ```
//!
//! The encoders here return whole frames, length prefix included. [`read_frame`] returns one
//! frame *without* its length prefix; [`decode_request_header`] and [`ResponseFrame::decode`]
//! take that form. Nothing here panics on bytes from the network: every read is checked.

use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::proto::ErrorResponse;
use crate::{Error, Result};

/// Size of the length prefix in front of every frame.
pub const LENGTH_FIELD_SIZE: usize = 4;
/// Bytes of request header after the length prefix: api key, api version, request id.
pub const REQUEST_HEADER_LENGTH: usize = 8;
/// Bytes of response header after the length prefix: response type, request id.
pub const RESPONSE_HEADER_LENGTH: usize = 5;
/// Bytes of server-failure header after the length prefix: the response type only.
pub const SERVER_FAILURE_HEADER_LENGTH: usize = 1;

/// Offset of the `int16` api key in a request frame (after the length prefix).
pub const REQUEST_API_KEY_OFFSET: usize = 0;
/// Offset of the `int16` api version in a request frame (after the length prefix).
pub const REQUEST_API_VERSION_OFFSET: usize = 2;
/// Offset of the `int32` request id in a request frame (after the length prefix).
pub const REQUEST_ID_OFFSET: usize = 4;
/// Offset of the `int8` response type in a response frame (after the length prefix).
pub const RESPONSE_TYPE_OFFSET: usize = 0;
/// Offset of the `int32` request id in a response frame (after the length prefix).
pub const RESPONSE_REQUEST_ID_OFFSET: usize = 1;

/// Fluss server's default `netty.server.max-request-size` (100 MiB).
pub const DEFAULT_SERVER_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;
/// Largest frame length the wire format can express (`int32`); Fluss clients accept up to it.
pub const MAX_WIRE_FRAME_SIZE: usize = i32::MAX as usize;

/// The first byte of a response frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ResponseType {
    /// The payload is the request's response message.
    Success = 0,
    /// The payload is an [`ErrorResponse`] for the request.
    Error = 1,
    /// The payload is an [`ErrorResponse`] for the whole connection; no request id follows.
    ServerFailure = 2,
}

impl ResponseType {
    /// The type with wire id `id`, if any.
    pub fn from_u8(id: u8) -> Option<ResponseType> {
        match id {
            0 => Some(ResponseType::Success),
            1 => Some(ResponseType::Error),
            2 => Some(ResponseType::ServerFailure),
            _ => None,
        }
    }
}

/// The fixed header of a request frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestHeader {
    /// The raw api key (may be one Riverlet does not know; see [`crate::rpc::ApiKey::from_i16`]).
    pub api_key: i16,
    /// The api version the client chose.
    pub api_version: i16,
    /// The client-chosen id the response must echo.
    pub request_id: i32,
}

/// Frame length field for `header_len + payload_len` bytes, or an invalid-argument error when
/// the frame cannot be expressed on the wire at all (more than 2 GiB).
fn frame_length(header_len: usize, payload_len: usize) -> Result<i32> {
    header_len
        .checked_add(payload_len)
        .filter(|n| *n <= MAX_WIRE_FRAME_SIZE)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| {
            Error::invalid(format!(
                "a frame of {header_len} + {payload_len} bytes is over the {MAX_WIRE_FRAME_SIZE}-byte \
                 limit of Fluss framing; split the request or ask for less per response"
            ))
        })
}

/// Longest error message put in an error frame: an error frame must always be encodable.
const MAX_ERROR_MESSAGE_BYTES: usize = 64 * 1024;

/// A whole request frame (length prefix included) around an already-encoded body.
///
/// Fails if the body is over 2 GiB (not expressible in Fluss framing).
pub fn encode_request_frame(
    api_key: i16,
    api_version: i16,
    request_id: i32,
    body: &[u8],
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(LENGTH_FIELD_SIZE + REQUEST_HEADER_LENGTH + body.len());
    out.put_i32(frame_length(REQUEST_HEADER_LENGTH, body.len())?);
    out.put_i16(api_key);
    out.put_i16(api_version);
    out.put_i32(request_id);
    out.put_slice(body);
    Ok(out)
}

/// A whole request frame encoding `message` straight into the output buffer.
///
/// Fails if the encoded message is over 2 GiB.
pub fn encode_request<M: Message>(
    api_key: i16,
    api_version: i16,
    request_id: i32,
    message: &M,
) -> Result<Vec<u8>> {
    let body_len = message.encoded_len();
    let mut out = Vec::with_capacity(LENGTH_FIELD_SIZE + REQUEST_HEADER_LENGTH + body_len);
    out.put_i32(frame_length(REQUEST_HEADER_LENGTH, body_len)?);
    out.put_i16(api_key);
    out.put_i16(api_version);
    out.put_i32(request_id);
    message.encode_raw(&mut out);
    Ok(out)
}

/// Splits a request frame (without its length prefix) into header and body.
pub fn decode_request_header(frame: &[u8]) -> Result<(RequestHeader, &[u8])> {
    if frame.len() < REQUEST_HEADER_LENGTH {
        return Err(Error::corrupt(format!(
            "request frame of {} bytes is shorter than the {REQUEST_HEADER_LENGTH}-byte request header",
            frame.len()
        )));
    }
    let (mut header, body) = frame.split_at(REQUEST_HEADER_LENGTH);
    let api_key = header.get_i16();
    let api_version = header.get_i16();
    let request_id = header.get_i32();
    Ok((
        RequestHeader {
            api_key,
            api_version,
            request_id,
        },
        body,
    ))
}

/// A whole SUCCESS response frame around an already-encoded response body.
///
/// Fails if the body is over 2 GiB.
pub fn encode_success_response(request_id: i32, body: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(LENGTH_FIELD_SIZE + RESPONSE_HEADER_LENGTH + body.len());
    out.put_slice(&success_response_head(request_id, body.len())?);
    out.put_slice(body);
    Ok(out)
}

/// The bytes a SUCCESS response frame starts with (length field, response type, request id),
/// for a body of `body_len` bytes sent after them in pieces of the sender's choosing.
///
/// Fails if the body is over 2 GiB.
pub fn success_response_head(
    request_id: i32,
    body_len: usize,
) -> Result<[u8; LENGTH_FIELD_SIZE + RESPONSE_HEADER_LENGTH]> {
    let mut head = [0u8; LENGTH_FIELD_SIZE + RESPONSE_HEADER_LENGTH];
    let mut out = &mut head[..];
    out.put_i32(frame_length(RESPONSE_HEADER_LENGTH, body_len)?);
    out.put_u8(ResponseType::Success as u8);
    out.put_i32(request_id);
    Ok(head)
}

/// A whole SUCCESS response frame encoding `message` straight into the output buffer.
///
/// Fails if the encoded message is over 2 GiB.
pub fn encode_success_response_message<M: Message>(
    request_id: i32,
    message: &M,
) -> Result<Vec<u8>> {
    let body_len = message.encoded_len();
    let mut out = Vec::with_capacity(LENGTH_FIELD_SIZE + RESPONSE_HEADER_LENGTH + body_len);
    out.put_i32(frame_length(RESPONSE_HEADER_LENGTH, body_len)?);
    out.put_u8(ResponseType::Success as u8);
    out.put_i32(request_id);
    message.encode_raw(&mut out);
    Ok(out)
}

/// The body of an error frame; the message is clipped (at a character boundary) to
/// [`MAX_ERROR_MESSAGE_BYTES`], so the frame always fits Fluss framing.
fn error_body(code: i32, message: &str) -> Vec<u8> {
    let mut end = message.len().min(MAX_ERROR_MESSAGE_BYTES);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    ErrorResponse {
        error_code: code,
        error_message: Some(message[..end].to_string()),
    }
    .encode_to_vec()
}

/// The length field of an error frame (whose body [`error_body`] keeps small).
fn error_frame_length(header_len: usize, body: &[u8]) -> i32 {
    i32::try_from(header_len + body.len()).unwrap_or(i32::MAX)
}

/// A whole ERROR response frame for request `request_id` with Fluss error `code`.
pub fn encode_error_response(request_id: i32, code: i32, message: &str) -> Vec<u8> {
    let body = error_body(code, message);
    let mut out = Vec::with_capacity(LENGTH_FIELD_SIZE + RESPONSE_HEADER_LENGTH + body.len());
    out.put_i32(error_frame_length(RESPONSE_HEADER_LENGTH, &body));
    out.put_u8(ResponseType::Error as u8);
    out.put_i32(request_id);
    out.put_slice(&body);
    out
}

/// A whole SERVER_FAILURE frame (not tied to a request; the server closes the socket after it).
pub fn encode_server_failure(code: i32, message: &str) -> Vec<u8> {
    let body = error_body(code, message);
    let mut out = Vec::with_capacity(LENGTH_FIELD_SIZE + SERVER_FAILURE_HEADER_LENGTH + body.len());
    out.put_i32(error_frame_length(SERVER_FAILURE_HEADER_LENGTH, &body));
    out.put_u8(ResponseType::ServerFailure as u8);
    out.put_slice(&body);
    out
}

/// One decoded response frame.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFrame {
    /// A successful response; `body` is the response message, still encoded.
    Success {
        /// The id of the request answered.
        request_id: i32,
        /// The encoded response message (a slice of the frame, not a copy).
        body: Bytes,
    },
    /// The request failed on the server.
    Error {
        /// The id of the request answered.
        request_id: i32,
        /// Fluss error code and message.
        error: ErrorResponse,
    },
    /// The server failed the whole connection.
    ServerFailure {
        /// Fluss error code and message.
        error: ErrorResponse,
    },
}

impl ResponseFrame {
    /// Decodes a response frame given without its length prefix (as [`read_frame`] returns it).
    pub fn decode(frame: Bytes) -> Result<ResponseFrame> {
        let Some(&type_byte) = frame.first() else {
            return Err(Error::corrupt("empty response frame"));
        };
        let Some(response_type) = ResponseType::from_u8(type_byte) else {
            return Err(Error::corrupt(format!(
                "unknown response type {type_byte} in response frame"
            )));
        };
        if response_type == ResponseType::ServerFailure {
            let error = ErrorResponse::decode(frame.slice(SERVER_FAILURE_HEADER_LENGTH..))
                .map_err(|e| {
                    Error::corrupt(format!("bad ErrorResponse in server failure frame: {e}"))
                })?;
            return Ok(ResponseFrame::ServerFailure { error });
        }
        if frame.len() < RESPONSE_HEADER_LENGTH {
            return Err(Error::corrupt(format!(
                "response frame of {} bytes is shorter than the {RESPONSE_HEADER_LENGTH}-byte response header",
                frame.len()
            )));
        }
        let mut id_bytes = &frame[RESPONSE_REQUEST_ID_OFFSET..RESPONSE_HEADER_LENGTH];
        let request_id = id_bytes.get_i32();
        let body = frame.slice(RESPONSE_HEADER_LENGTH..);
        match response_type {
            ResponseType::Success => Ok(ResponseFrame::Success { request_id, body }),
            _ => {
                let error = ErrorResponse::decode(body).map_err(|e| {
                    Error::corrupt(format!("bad ErrorResponse for request {request_id}: {e}"))
                })?;
                Ok(ResponseFrame::Error { request_id, error })
            }
        }
    }

    /// The request id, except for a server failure.
    pub fn request_id(&self) -> Option<i32> {
        match self {
            ResponseFrame::Success { request_id, .. } | ResponseFrame::Error { request_id, .. } => {
                Some(*request_id)
            }
            ResponseFrame::ServerFailure { .. } => None,
        }
    }
}

/// The error a client reports for an [`ErrorResponse`] from the server.
pub fn error_from_response(error: &ErrorResponse) -> Error {
    Error::from_fluss(
        error.error_code,
        error.error_message.clone().unwrap_or_default(),
    )
}

/// How much buffer [`read_frame`] reserves at once, so a bogus length cannot allocate a lot.
const READ_CHUNK: usize = 64 * 1024;
/// Frames up to this length are read into one buffer of their exact size.
const EXACT_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Reads one frame and returns it without its length prefix; `Ok(None)` on a clean end of
/// stream before the first byte of a frame.
///
/// A stream that ends inside a frame is an [`ErrorKind::Network`](crate::ErrorKind::Network) error; a negative length or one
/// above `max_frame_size` is [`ErrorKind::Corrupt`](crate::ErrorKind::Corrupt) (the stream cannot be resynchronised after
/// either). Beyond 16 MiB, memory grows with the bytes actually received, not with the
/// announced length.
pub async fn read_frame<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max_frame_size: usize,
) -> Result<Option<Bytes>> {
    let mut len_buf = [0u8; LENGTH_FIELD_SIZE];
    let mut filled = 0;
    while filled < LENGTH_FIELD_SIZE {
        let n = reader.read(&mut len_buf[filled..]).await?;
        if n == 0 {
            if filled == 0 {
                return Ok(None);
            }
            return Err(Error::network(format!(
                "connection closed inside a frame length ({filled} of {LENGTH_FIELD_SIZE} bytes read)"
            )));
        }
        filled += n;
    }
    let length = i32::from_be_bytes(len_buf);
    if length < 0 {
        return Err(Error::corrupt(format!("negative frame length {length}")));
    }
    let length = length as usize;
    if length > max_frame_size {
        return Err(Error::corrupt(format!(
            "frame of {length} bytes exceeds the maximum frame size of {max_frame_size} bytes"
        )));
    }
    // Frames up to EXACT_FRAME_BYTES (every FetchLog answer a read asks for) get their whole
    // buffer at once; larger ones grow by doubling (capped at the length) as bytes arrive.
    // Growing a BytesMut in small steps reallocates and copies through every power of two,
    // holding the old and the new buffer at once (and up to twice the frame's size).
    let mut buf: Vec<u8> = Vec::with_capacity(if length <= EXACT_FRAME_BYTES {
        length
    } else {
        length.min(READ_CHUNK)
    });
    while buf.len() < length {
        if buf.len() == buf.capacity() {
            let grown = (buf.capacity() * 2).clamp(READ_CHUNK, length);
            buf.reserve_exact(grown - buf.len());
        }
        let want = (length - buf.len()).min(buf.capacity() - buf.len());
        let n = (&mut *reader).take(want as u64).read_buf(&mut buf).await?;
        if n == 0 {
            return Err(Error::network(format!(
                "connection closed inside a frame ({} of {length} bytes read)",
                buf.len()
            )));
        }
    }
    Ok(Some(Bytes::from(buf)))
}

/// Writes one whole frame (as the `encode_*` functions return it) and flushes.
pub async fn write_frame<W: AsyncWrite + Unpin + ?Sized>(
    writer: &mut W,
    frame: &[u8],
) -> Result<()> {
    writer.write_all(frame).await?;
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::ApiVersionsRequest;
    use crate::ErrorKind;
    use proptest::prelude::*;

    #[test]
    fn frames_over_2_gib_are_errors_not_panics() {
        for payload in [MAX_WIRE_FRAME_SIZE, usize::MAX] {
            let e = frame_length(REQUEST_HEADER_LENGTH, payload).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(
                e.message().contains("limit of Fluss framing"),
                "{}",
                e.message()
            );
        }
        assert_eq!(
            frame_length(
                REQUEST_HEADER_LENGTH,
                MAX_WIRE_FRAME_SIZE - REQUEST_HEADER_LENGTH
            )
            .unwrap(),
            i32::MAX
        );
        // An error frame always encodes: a huge message is clipped, at a character boundary.
        let message = "é".repeat(MAX_ERROR_MESSAGE_BYTES);
        let f = encode_error_response(9, 7, &message);
        match ResponseFrame::decode(Bytes::copy_from_slice(&f[4..])).unwrap() {
            ResponseFrame::Error { error, .. } => {
                let text = error.error_message.unwrap_or_default();
                assert!(text.len() <= MAX_ERROR_MESSAGE_BYTES && text.len() > 1000);
                assert!(message.starts_with(&text));
            }
            other => panic!("{other:?}"),
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    /// Golden ApiVersions request frame, computed BY HAND from fluss_api.proto and the framing
    /// in `docs/maintainers/protocol.md` (not captured from a real client; a cross-check against
    /// pyfluss bytes is due):
    ///
    /// body = field 1 (string, wire type 2 => tag 0x0a) len 5 "fluss"
    ///      + field 2 (string => tag 0x12) len 5 "0.1.0"           = 14 bytes
    /// frame length = 8 + 14 = 22 = 0x00000016; api key 1000 = 0x03e8; version 0; request id 0
    /// (Fluss's ServerConnection numbers requests from 0, and ApiVersions goes first).
    #[test]
    fn golden_api_versions_request_frame() {
        let expected: Vec<u8> = vec![
            0x00, 0x00, 0x00, 0x16, // length 22
            0x03, 0xe8, // api key 1000
            0x00, 0x00, // api version 0
            0x00, 0x00, 0x00, 0x00, // request id 0
            0x0a, 0x05, b'f', b'l', b'u', b's', b's', // client_software_name
            0x12, 0x05, b'0', b'.', b'1', b'.', b'0', // client_software_version
        ];
        let req = ApiVersionsRequest {
            client_software_name: "fluss".into(),
            client_software_version: "0.1.0".into(),
        };
        assert_eq!(encode_request(1000, 0, 0, &req).unwrap(), expected);
        assert_eq!(
            encode_request_frame(1000, 0, 0, &req.encode_to_vec()).unwrap(),
            expected
        );
    }

    #[test]
    fn request_round_trip() {
        let frame = encode_request_frame(1016, 2, -7, b"abc").unwrap();
        assert_eq!(&frame[..4], &11i32.to_be_bytes());
        let (h, body) = decode_request_header(&frame[4..]).unwrap();
        assert_eq!(
            h,
            RequestHeader {
                api_key: 1016,
                api_version: 2,
                request_id: -7
            }
        );
        assert_eq!(body, b"abc");
        assert_eq!(
            decode_request_header(&frame[4..11]).unwrap_err().kind(),
            ErrorKind::Corrupt
        );
    }

    #[test]
    fn response_round_trips() {
        let f = encode_success_response(42, b"xyz").unwrap();
        assert_eq!(f, [0, 0, 0, 8, 0, 0, 0, 0, 42, b'x', b'y', b'z']);
        match ResponseFrame::decode(Bytes::copy_from_slice(&f[4..])).unwrap() {
            ResponseFrame::Success { request_id, body } => {
                assert_eq!(request_id, 42);
                assert_eq!(&body[..], b"xyz");
            }
            other => panic!("{other:?}"),
        }

        let f = encode_error_response(9, 7, "no table");
        // ErrorResponse: 08 07 (code 7) 12 08 "no table"
        assert_eq!(&f[..9], &[0, 0, 0, 17, 1, 0, 0, 0, 9]);
        assert_eq!(&f[9..13], &[0x08, 0x07, 0x12, 0x08]);
        let decoded = ResponseFrame::decode(Bytes::copy_from_slice(&f[4..])).unwrap();
        assert_eq!(decoded.request_id(), Some(9));
        match decoded {
            ResponseFrame::Error { error, .. } => {
                let e = error_from_response(&error);
                assert_eq!(e.fluss_code(), Some(7));
                assert_eq!(e.kind(), ErrorKind::NotFound);
                assert_eq!(e.message(), "no table");
            }
            other => panic!("{other:?}"),
        }

        let f = encode_server_failure(-1, "boom");
        // 1 type byte + ErrorResponse: tag + 10-byte varint for -1, tag + len + "boom" = 18.
        assert_eq!(&f[..5], &[0, 0, 0, 18, 2]);
        match ResponseFrame::decode(Bytes::copy_from_slice(&f[4..])).unwrap() {
            ResponseFrame::ServerFailure { error } => {
                assert_eq!(error.error_code, -1);
                assert_eq!(error.error_message.as_deref(), Some("boom"));
            }
            other => panic!("{other:?}"),
        }

        assert!(ResponseFrame::decode(Bytes::new()).is_err());
        assert!(ResponseFrame::decode(Bytes::from_static(&[3, 0, 0, 0, 0])).is_err());
        assert!(ResponseFrame::decode(Bytes::from_static(&[0, 0, 0])).is_err());
    }

    #[test]
    fn negative_int32_is_a_ten_byte_varint() {
        let body = ErrorResponse {
            error_code: -1,
            error_message: None,
        }
        .encode_to_vec();
        assert_eq!(
            body,
            [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn packed_repeated_fields_are_packed() {
        // partitions_id = 3 [packed = true]: tag (3 << 3 | 2) = 0x1a, length 2, varints 1 and 2.
        let m = crate::proto::MetadataRequest {
            partitions_id: vec![1, 2],
            ..Default::default()
        };
        assert_eq!(m.encode_to_vec(), [0x1a, 0x02, 0x01, 0x02]);
    }

    #[test]
    fn read_frame_stream() {
        rt().block_on(async {
            let mut data = encode_request_frame(1000, 0, 1, b"hello").unwrap();
            data.extend(encode_success_response(1, b"").unwrap());
            let mut r: &[u8] = &data;
            let a = read_frame(&mut r, 1024).await.unwrap().unwrap();
            assert_eq!(&a[8..], b"hello");
            let b = read_frame(&mut r, 1024).await.unwrap().unwrap();
            assert_eq!(&b[..], &[0, 0, 0, 0, 1]);
            assert_eq!(read_frame(&mut r, 1024).await.unwrap(), None);

            let mut r: &[u8] = &[0, 0];
            assert_eq!(
                read_frame(&mut r, 1024).await.unwrap_err().kind(),
                ErrorKind::Network
            );
            let mut r: &[u8] = &[0, 0, 0, 5, 1, 2];
            assert_eq!(
                read_frame(&mut r, 1024).await.unwrap_err().kind(),
                ErrorKind::Network
            );
            let mut r: &[u8] = &[0xff, 0xff, 0xff, 0xff];
            assert_eq!(
                read_frame(&mut r, 1024).await.unwrap_err().kind(),
                ErrorKind::Corrupt
            );
            let mut r: &[u8] = &[0, 0, 4, 1, 0];
            let err = read_frame(&mut r, 1024).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corrupt);
            assert!(
                err.message()
                    .contains("exceeds the maximum frame size of 1024"),
                "{err}"
            );
        });
    }

    #[test]
    fn write_then_read() {
        rt().block_on(async {
            let (mut a, mut b) = tokio::io::duplex(64);
            let frame = encode_request_frame(1012, 0, 5, &[7u8; 300]).unwrap();
            let f2 = frame.clone();
            let w = tokio::spawn(async move { write_frame(&mut a, &f2).await });
            let got = read_frame(&mut b, 1 << 20).await.unwrap().unwrap();
            w.await.unwrap().unwrap();
            assert_eq!(&got[..], &frame[4..]);
        });
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_request_header(&data);
            let _ = ResponseFrame::decode(Bytes::from(data.clone()));
            let _ = crate::proto::FetchLogResponse::decode(&data[..]);
            let _ = crate::proto::MetadataResponse::decode(&data[..]);
            rt().block_on(async {
                let mut r: &[u8] = &data;
                while let Ok(Some(_)) = read_frame(&mut r, 32).await {}
            });
        }

        #[test]
        fn truncated_frames_never_panic(body in proptest::collection::vec(any::<u8>(), 0..40), cut in 0usize..60) {
            let full = encode_error_response(3, 12, &String::from_utf8_lossy(&body));
            let cut = cut.min(full.len());
            let part = &full[..cut];
            rt().block_on(async {
                let mut r: &[u8] = part;
                let res = read_frame(&mut r, 1 << 20).await;
                if cut == full.len() {
                    let frame = res.unwrap().unwrap();
                    prop_assert!(ResponseFrame::decode(frame).is_ok());
                } else if cut == 0 {
                    prop_assert_eq!(res.unwrap(), None);
                } else {
                    prop_assert!(res.is_err());
                }
                Ok(())
            })?;
            if cut > 4 {
                let _ = ResponseFrame::decode(Bytes::copy_from_slice(&part[4..]));
            }
        }

        #[test]
        fn request_header_round_trip(key in any::<i16>(), ver in any::<i16>(), id in any::<i32>(),
                                     body in proptest::collection::vec(any::<u8>(), 0..32)) {
            let frame = encode_request_frame(key, ver, id, &body).unwrap();
            let (h, b) = decode_request_header(&frame[4..]).unwrap();
            prop_assert_eq!(h, RequestHeader { api_key: key, api_version: ver, request_id: id });
            prop_assert_eq!(b, &body[..]);
        }
    }
}
