//! The unit's REST API over sbgECom messages: requests, replies, ACKs.

use std::fmt;

use super::frame::{Message, try_encode_message};
use super::{CLASS_REST, ID_ACK, ID_GET, ID_GET_LEGACY, ID_POST, SerialError};

/// The two HTTP methods of the unit's API (PUT, PATCH and DELETE do not exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// GET: message id [`ID_GET`] (48; older firmware used [`ID_GET_LEGACY`], 46).
    Get,
    /// POST: message id [`ID_POST`] (47).
    Post,
}

impl Method {
    /// The message id a request of this method is sent with: 48 for GET, 47 for POST.
    #[must_use]
    pub const fn id(self) -> u8 {
        match self {
            Method::Get => ID_GET,
            Method::Post => ID_POST,
        }
    }

    /// The method of a REST message id: 48 and 46 (older firmware) are GET, 47 is POST;
    /// `None` for any other id.
    #[must_use]
    pub const fn from_id(id: u8) -> Option<Method> {
        match id {
            ID_GET | ID_GET_LEGACY => Some(Method::Get),
            ID_POST => Some(Method::Post),
            _ => None,
        }
    }

    /// `"GET"` or `"POST"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request to the unit's REST API, as carried over the serial link: class 0x10, id
/// 48 (GET) or 47 (POST), data `path NUL query NUL` (GET) or
/// `path NUL query NUL body NUL` (POST).
///
/// `Debug` redacts the value of an `auth` query parameter and shows only the body's
/// length (a login body holds a password).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RestRequest {
    /// GET or POST.
    pub method: Method,
    /// The path, `/api/v1` included, e.g. `/api/v1/settings/aiding/gnss1`.
    pub path: String,
    /// The query string without `?`, e.g. `auth=TOKEN&checkOnly=true`; empty when there
    /// is none.
    pub query: String,
    /// The body (JSON) of a POST; `None` for a GET. A POST with `None` is sent with an
    /// empty body (and decodes as `Some` empty body).
    pub body: Option<Vec<u8>>,
}

impl fmt::Debug for RestRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestRequest")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &RedactedQuery(&self.query))
            .field(
                "body",
                &self.body.as_ref().map(|body| ByteCount(body.len())),
            )
            .finish()
    }
}

/// A length shown as `<N bytes>`.
struct ByteCount(usize);

impl fmt::Debug for ByteCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} bytes>", self.0)
    }
}

/// A query string shown with the value of `auth` redacted.
struct RedactedQuery<'a>(&'a str);

impl fmt::Debug for RedactedQuery<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for (i, pair) in self.0.split('&').enumerate() {
            if i > 0 {
                f.write_str("&")?;
            }
            match pair.split_once('=') {
                Some((key, _)) if key == "auth" => write!(f, "{key}=[redacted]")?,
                _ => write!(f, "{}", pair.escape_debug())?,
            }
        }
        f.write_str("\"")
    }
}

impl RestRequest {
    /// A GET request of `path` (with `/api/v1`) and `query` (without `?`).
    #[must_use]
    pub fn get(path: impl Into<String>, query: impl Into<String>) -> RestRequest {
        RestRequest {
            method: Method::Get,
            path: path.into(),
            query: query.into(),
            body: None,
        }
    }

    /// A POST request of `path` (with `/api/v1`), `query` (without `?`) and `body`.
    #[must_use]
    pub fn post(
        path: impl Into<String>,
        query: impl Into<String>,
        body: impl Into<Vec<u8>>,
    ) -> RestRequest {
        RestRequest {
            method: Method::Post,
            path: path.into(),
            query: query.into(),
            body: Some(body.into()),
        }
    }

    /// The message id this request is sent with (48 for GET, 47 for POST): pass it to
    /// [`decode_reply`].
    #[must_use]
    pub fn id(&self) -> u8 {
        self.method.id()
    }

    /// The request as a message (class 0x10), not yet framed.
    ///
    /// # Errors
    ///
    /// - [`SerialError::NulInField`] if the path or the query contains a NUL byte;
    /// - [`SerialError::BodyNotAllowed`] for a GET with a body (even empty).
    pub fn to_message(&self) -> Result<Message, SerialError> {
        if self.path.as_bytes().contains(&0) {
            return Err(SerialError::NulInField { field: "path" });
        }
        if self.query.as_bytes().contains(&0) {
            return Err(SerialError::NulInField { field: "query" });
        }
        let body = match (self.method, &self.body) {
            (Method::Get, Some(_)) => return Err(SerialError::BodyNotAllowed),
            (Method::Get, None) => None,
            (Method::Post, body) => Some(body.as_deref().unwrap_or_default()),
        };
        let mut data = Vec::with_capacity(
            self.path.len() + self.query.len() + 3 + body.map_or(0, <[u8]>::len),
        );
        data.extend_from_slice(self.path.as_bytes());
        data.push(0);
        data.extend_from_slice(self.query.as_bytes());
        data.push(0);
        if let Some(body) = body {
            data.extend_from_slice(body);
            data.push(0);
        }
        Ok(Message {
            id: self.id(),
            class: CLASS_REST,
            data,
        })
    }

    /// The request's bytes on the wire: one standard frame, or large frames (transfer
    /// id: the low 4 bits of `transfer_id`) when its data exceed 4086 bytes.
    ///
    /// # Errors
    ///
    /// - [`SerialError::NulInField`] if the path or the query contains a NUL byte;
    /// - [`SerialError::BodyNotAllowed`] for a GET with a body;
    /// - [`SerialError::TooLong`] if the data exceed
    ///   [`MAX_MESSAGE_LEN`](super::MAX_MESSAGE_LEN) bytes.
    pub fn try_encode(&self, transfer_id: u8) -> Result<Vec<u8>, SerialError> {
        let message = self.to_message()?;
        try_encode_message(message.id, message.class, &message.data, transfer_id)
    }

    /// The request's bytes on the wire, as [`try_encode`](Self::try_encode).
    ///
    /// # Panics
    ///
    /// Where [`try_encode`](Self::try_encode) returns an error: a NUL in the path or
    /// the query, a GET with a body, data over
    /// [`MAX_MESSAGE_LEN`](super::MAX_MESSAGE_LEN) bytes. A transport that passes
    /// paths or queries it did not build itself should call `try_encode`.
    ///
    /// ```
    /// use svc_protocol::serial::RestRequest;
    ///
    /// let bytes = RestRequest::get("/api/v1/info", "").encode(0);
    /// assert_eq!(&bytes[..6], [0xff, 0x5a, 0x30, 0x10, 0x0e, 0x00]);
    /// ```
    #[must_use]
    pub fn encode(&self, transfer_id: u8) -> Vec<u8> {
        match self.try_encode(transfer_id) {
            Ok(bytes) => bytes,
            Err(error) => panic!("cannot encode the REST request: {error}"),
        }
    }

    /// The request a message carries. Ids 48 and 46 (older firmware) are GET, 47 POST.
    ///
    /// # Errors
    ///
    /// - [`SerialError::UnexpectedMessage`] if the class is not 0x10 or the id not 46,
    ///   47 or 48;
    /// - [`SerialError::MissingNul`] if the path, the query or (POST) the body does not
    ///   end with a NUL;
    /// - [`SerialError::NotUtf8`] if the path or the query is not UTF-8;
    /// - [`SerialError::TrailingData`] if a GET has bytes after the query's NUL.
    pub fn decode(message: &Message) -> Result<RestRequest, SerialError> {
        let method = match Method::from_id(message.id) {
            Some(method) if message.class == CLASS_REST => method,
            _ => {
                return Err(SerialError::UnexpectedMessage {
                    id: message.id,
                    class: message.class,
                });
            }
        };
        let (path, rest) = split_nul(&message.data, "path")?;
        let (query, rest) = split_nul(rest, "query")?;
        let path = utf8(path, "path")?;
        let query = utf8(query, "query")?;
        let body = match method {
            Method::Get if rest.is_empty() => None,
            Method::Get => {
                return Err(SerialError::TrailingData {
                    field: "query",
                    len: rest.len(),
                });
            }
            Method::Post => match rest.split_last() {
                Some((0, body)) => Some(body.to_vec()),
                _ => return Err(SerialError::MissingNul { field: "body" }),
            },
        };
        Ok(RestRequest {
            method,
            path,
            query,
            body,
        })
    }
}

fn split_nul<'a>(
    bytes: &'a [u8],
    field: &'static str,
) -> Result<(&'a [u8], &'a [u8]), SerialError> {
    match bytes.iter().position(|&b| b == 0) {
        Some(at) => Ok((&bytes[..at], &bytes[at + 1..])),
        None => Err(SerialError::MissingNul { field }),
    }
}

fn utf8(bytes: &[u8], field: &'static str) -> Result<String, SerialError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(_) => Err(SerialError::NotUtf8 { field }),
    }
}

/// The unit's reply to a [`RestRequest`]: same class (0x10) and id as the request,
/// data = HTTP status (u16 LE), then the body, then NUL.
///
/// `Debug` shows only the body's length (a login reply holds a token).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct RestReply {
    /// HTTP status, e.g. 200, 401, 422.
    pub status: u16,
    /// The body (JSON), without the ending NUL; may be empty.
    pub body: Vec<u8>,
}

impl fmt::Debug for RestReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestReply")
            .field("status", &self.status)
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish()
    }
}

impl RestReply {
    /// A reply of this status and body.
    #[must_use]
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> RestReply {
        RestReply {
            status,
            body: body.into(),
        }
    }

    /// The reply to a request of message id `request_id` (46, 47 or 48) as a message,
    /// not yet framed.
    ///
    /// # Errors
    ///
    /// [`SerialError::UnexpectedMessage`] if `request_id` is not a REST request id.
    pub fn to_message(&self, request_id: u8) -> Result<Message, SerialError> {
        if Method::from_id(request_id).is_none() {
            return Err(SerialError::UnexpectedMessage {
                id: request_id,
                class: CLASS_REST,
            });
        }
        let mut data = Vec::with_capacity(self.body.len() + 3);
        data.extend_from_slice(&self.status.to_le_bytes());
        data.extend_from_slice(&self.body);
        data.push(0);
        Ok(Message {
            id: request_id,
            class: CLASS_REST,
            data,
        })
    }

    /// The reply's bytes on the wire (standard or large frames, see
    /// [`encode_message`](super::encode_message)).
    ///
    /// # Errors
    ///
    /// - [`SerialError::UnexpectedMessage`] if `request_id` is not 46, 47 or 48;
    /// - [`SerialError::TooLong`] if the data exceed
    ///   [`MAX_MESSAGE_LEN`](super::MAX_MESSAGE_LEN) bytes.
    pub fn try_encode(&self, request_id: u8, transfer_id: u8) -> Result<Vec<u8>, SerialError> {
        let message = self.to_message(request_id)?;
        try_encode_message(message.id, message.class, &message.data, transfer_id)
    }

    /// The reply's bytes on the wire, as [`try_encode`](Self::try_encode).
    ///
    /// # Panics
    ///
    /// Where [`try_encode`](Self::try_encode) returns an error: a `request_id` other
    /// than 46, 47 or 48, a body over [`MAX_MESSAGE_LEN`](super::MAX_MESSAGE_LEN) bytes.
    #[must_use]
    pub fn encode(&self, request_id: u8, transfer_id: u8) -> Vec<u8> {
        match self.try_encode(request_id, transfer_id) {
            Ok(bytes) => bytes,
            Err(error) => panic!("cannot encode the REST reply: {error}"),
        }
    }

    /// The reply a message carries, whatever request id (46, 47, 48) it answers; see
    /// [`decode_reply`] to check it answers the request sent and to turn an ACK into
    /// an error.
    ///
    /// # Errors
    ///
    /// - [`SerialError::UnexpectedMessage`] if the class is not 0x10 or the id not 46,
    ///   47 or 48;
    /// - [`SerialError::Truncated`] if the data are shorter than a status and a NUL;
    /// - [`SerialError::MissingNul`] if the data do not end with a NUL.
    pub fn decode(message: &Message) -> Result<RestReply, SerialError> {
        if message.class != CLASS_REST || Method::from_id(message.id).is_none() {
            return Err(SerialError::UnexpectedMessage {
                id: message.id,
                class: message.class,
            });
        }
        match message.data.as_slice() {
            [s0, s1, body @ .., 0] => Ok(RestReply {
                status: u16::from_le_bytes([*s0, *s1]),
                body: body.to_vec(),
            }),
            [_, _, ..] => Err(SerialError::MissingNul { field: "body" }),
            short => Err(SerialError::Truncated {
                needed: 3,
                found: short.len(),
            }),
        }
    }
}

/// An sbgECom acknowledgement: message id 0, class 0x10, data = the acknowledged
/// message's id (u8) and class (u8), then an error code (u16 LE; 0 = no error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ack {
    /// Id of the acknowledged message.
    pub id: u8,
    /// Class of the acknowledged message.
    pub class: u8,
    /// sbgECom error code; 0 means no error.
    pub error: u16,
}

impl Ack {
    /// Whether the error code is 0.
    #[must_use]
    pub fn is_success(&self) -> bool {
        self.error == 0
    }

    /// The ACK as a message (id 0, class 0x10). Never fails.
    #[must_use]
    pub fn to_message(&self) -> Message {
        let [e0, e1] = self.error.to_le_bytes();
        Message {
            id: ID_ACK,
            class: CLASS_REST,
            data: vec![self.id, self.class, e0, e1],
        }
    }

    /// The ACK's bytes on the wire (one standard frame of 13 bytes). Never fails.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        self.to_message().encode(0)
    }

    /// The ACK a message carries.
    ///
    /// # Errors
    ///
    /// - [`SerialError::UnexpectedMessage`] if the id is not 0 or the class not 0x10;
    /// - [`SerialError::Truncated`] if the data are shorter than 4 bytes;
    /// - [`SerialError::TrailingData`] if they are longer.
    pub fn decode(message: &Message) -> Result<Ack, SerialError> {
        if message.id != ID_ACK || message.class != CLASS_REST {
            return Err(SerialError::UnexpectedMessage {
                id: message.id,
                class: message.class,
            });
        }
        match message.data.as_slice() {
            &[id, class, e0, e1] => Ok(Ack {
                id,
                class,
                error: u16::from_le_bytes([e0, e1]),
            }),
            short if short.len() < 4 => Err(SerialError::Truncated {
                needed: 4,
                found: short.len(),
            }),
            long => Err(SerialError::TrailingData {
                field: "ack",
                len: long.len() - 4,
            }),
        }
    }
}

/// The reply to the request sent with message id `expected_request_id` (see
/// [`RestRequest::id`]), from the message received in its place.
///
/// # Errors
///
/// - [`SerialError::Ack`] with the ACK's error code if the unit answered with an ACK of
///   that request (id `expected_request_id`, class 0x10) — even with code 0, an ACK is
///   not a reply;
/// - [`SerialError::UnexpectedMessage`] for any other message than a reply of the same
///   class and id (an ACK of another command included): a transport may skip it and
///   keep waiting;
/// - as [`Ack::decode`] for a malformed ACK, as [`RestReply::decode`] for a malformed
///   reply.
///
/// ```
/// use svc_protocol::serial::{decode_reply, Ack, Decoder, SerialError, ID_GET};
///
/// let mut decoder = Decoder::new();
/// decoder.push(&Ack { id: ID_GET, class: 0x10, error: 5 }.encode());
/// let message = decoder.next_message().expect("a message");
/// assert_eq!(decode_reply(&message, ID_GET), Err(SerialError::Ack { error: 5 }));
/// ```
pub fn decode_reply(message: &Message, expected_request_id: u8) -> Result<RestReply, SerialError> {
    if message.class == CLASS_REST && message.id == ID_ACK {
        let ack = Ack::decode(message)?;
        if ack.id == expected_request_id && ack.class == CLASS_REST {
            return Err(SerialError::Ack { error: ack.error });
        }
        return Err(SerialError::UnexpectedMessage {
            id: message.id,
            class: message.class,
        });
    }
    if message.class != CLASS_REST || message.id != expected_request_id {
        return Err(SerialError::UnexpectedMessage {
            id: message.id,
            class: message.class,
        });
    }
    RestReply::decode(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: u8, data: &[u8]) -> Message {
        Message::new(id, CLASS_REST, data.to_vec())
    }

    #[test]
    fn methods_and_ids() {
        assert_eq!(Method::Get.id(), 48);
        assert_eq!(Method::Post.id(), 47);
        assert_eq!(Method::from_id(46), Some(Method::Get));
        assert_eq!(Method::from_id(48), Some(Method::Get));
        assert_eq!(Method::from_id(47), Some(Method::Post));
        assert_eq!(Method::from_id(45), None);
        assert_eq!(Method::from_id(0), None);
        assert_eq!(Method::Post.to_string(), "POST");
    }

    #[test]
    fn request_layouts() {
        let get = RestRequest::get("/api/v1/settings", "auth=t")
            .to_message()
            .unwrap();
        assert_eq!((get.id, get.class), (48, 0x10));
        assert_eq!(get.data, b"/api/v1/settings\0auth=t\0");
        let post = RestRequest::post("/api/v1/reboot", "", "{}")
            .to_message()
            .unwrap();
        assert_eq!((post.id, post.class), (47, 0x10));
        assert_eq!(post.data, b"/api/v1/reboot\0\0{}\0");
        let mut no_body = RestRequest::post("/p", "", "");
        no_body.body = None;
        assert_eq!(no_body.to_message().unwrap().data, b"/p\0\0\0");
    }

    #[test]
    fn request_encoding_errors() {
        assert_eq!(
            RestRequest::get("/a\0b", "").try_encode(0),
            Err(SerialError::NulInField { field: "path" })
        );
        assert_eq!(
            RestRequest::post("/a", "x=\0", "").try_encode(0),
            Err(SerialError::NulInField { field: "query" })
        );
        let mut get = RestRequest::get("/a", "");
        get.body = Some(Vec::new());
        assert_eq!(get.try_encode(0), Err(SerialError::BodyNotAllowed));
        // A NUL inside a POST body is carried (the body ends at the last byte).
        let post = RestRequest::post("/a", "", b"x\0y".to_vec());
        let decoded = RestRequest::decode(&post.to_message().unwrap()).unwrap();
        assert_eq!(decoded, post);
    }

    #[test]
    #[should_panic(expected = "cannot encode the REST request: the path contains a NUL byte")]
    fn encode_panics_where_try_encode_fails() {
        let _ = RestRequest::get("/\0", "").encode(0);
    }

    #[test]
    fn request_decoding_errors() {
        assert_eq!(
            RestRequest::decode(&Message::new(48, 0x11, b"/a\0\0".to_vec())),
            Err(SerialError::UnexpectedMessage {
                id: 48,
                class: 0x11
            })
        );
        assert_eq!(
            RestRequest::decode(&message(0, b"/a\0\0")),
            Err(SerialError::UnexpectedMessage { id: 0, class: 0x10 })
        );
        assert_eq!(
            RestRequest::decode(&message(48, b"/a")),
            Err(SerialError::MissingNul { field: "path" })
        );
        assert_eq!(
            RestRequest::decode(&message(48, b"/a\0q")),
            Err(SerialError::MissingNul { field: "query" })
        );
        assert_eq!(
            RestRequest::decode(&message(47, b"/a\0q\0")),
            Err(SerialError::MissingNul { field: "body" })
        );
        assert_eq!(
            RestRequest::decode(&message(47, b"/a\0q\0{}")),
            Err(SerialError::MissingNul { field: "body" })
        );
        assert_eq!(
            RestRequest::decode(&message(48, b"/a\0q\0x\0")),
            Err(SerialError::TrailingData {
                field: "query",
                len: 2
            })
        );
        assert_eq!(
            RestRequest::decode(&message(48, b"/\xff\0\0")),
            Err(SerialError::NotUtf8 { field: "path" })
        );
        assert_eq!(
            RestRequest::decode(&message(48, b"/\0\xc3\0")),
            Err(SerialError::NotUtf8 { field: "query" })
        );
        assert_eq!(
            RestRequest::decode(&message(46, b"/api/v1/info\0\0")),
            Ok(RestRequest::get("/api/v1/info", ""))
        );
        assert_eq!(
            RestRequest::decode(&message(47, b"/a\0\0\0")),
            Ok(RestRequest::post("/a", "", ""))
        );
    }

    #[test]
    fn reply_layout_and_errors() {
        let reply = RestReply::new(422, b"{\"status\":422}".to_vec());
        let m = reply.to_message(47).unwrap();
        assert_eq!(&m.data[..2], [0xA6, 0x01]);
        assert_eq!(m.data.last(), Some(&0));
        assert_eq!(RestReply::decode(&m), Ok(reply.clone()));
        assert_eq!(
            reply.to_message(1),
            Err(SerialError::UnexpectedMessage { id: 1, class: 0x10 })
        );
        assert_eq!(
            RestReply::decode(&message(48, &[200, 0, 0])),
            Ok(RestReply::new(200, Vec::new()))
        );
        assert_eq!(
            RestReply::decode(&message(48, &[200, 0])),
            Err(SerialError::MissingNul { field: "body" })
        );
        assert_eq!(
            RestReply::decode(&message(48, &[200, 0, b'{'])),
            Err(SerialError::MissingNul { field: "body" })
        );
        assert_eq!(
            RestReply::decode(&message(48, &[200])),
            Err(SerialError::Truncated {
                needed: 3,
                found: 1
            })
        );
        assert_eq!(
            RestReply::decode(&Message::new(48, 0x20, vec![200, 0, 0])),
            Err(SerialError::UnexpectedMessage {
                id: 48,
                class: 0x20
            })
        );
    }

    #[test]
    fn ack_layout_and_errors() {
        let ack = Ack {
            id: 47,
            class: 0x10,
            error: 0x0102,
        };
        assert!(!ack.is_success());
        let m = ack.to_message();
        assert_eq!(
            (m.id, m.class, m.data.as_slice()),
            (0, 0x10, &[47, 0x10, 2, 1][..])
        );
        assert_eq!(Ack::decode(&m), Ok(ack));
        assert_eq!(
            Ack::decode(&message(0, &[1, 2, 3])),
            Err(SerialError::Truncated {
                needed: 4,
                found: 3
            })
        );
        assert_eq!(
            Ack::decode(&message(0, &[1, 2, 3, 4, 5])),
            Err(SerialError::TrailingData {
                field: "ack",
                len: 1
            })
        );
        assert_eq!(
            Ack::decode(&message(48, &[1, 2, 3, 4])),
            Err(SerialError::UnexpectedMessage {
                id: 48,
                class: 0x10
            })
        );
    }

    #[test]
    fn decode_reply_cases() {
        let reply = RestReply::new(200, b"{}".to_vec());
        assert_eq!(
            decode_reply(&reply.to_message(48).unwrap(), 48),
            Ok(reply.clone())
        );
        assert_eq!(
            decode_reply(&reply.to_message(46).unwrap(), 46),
            Ok(reply.clone())
        );
        assert_eq!(
            decode_reply(&reply.to_message(47).unwrap(), 48),
            Err(SerialError::UnexpectedMessage {
                id: 47,
                class: 0x10
            })
        );
        let ack = |id, error| {
            Ack {
                id,
                class: 0x10,
                error,
            }
            .to_message()
        };
        assert_eq!(
            decode_reply(&ack(48, 0), 48),
            Err(SerialError::Ack { error: 0 })
        );
        assert_eq!(
            decode_reply(&ack(47, 9), 47),
            Err(SerialError::Ack { error: 9 })
        );
        assert_eq!(
            decode_reply(&ack(47, 9), 48),
            Err(SerialError::UnexpectedMessage { id: 0, class: 0x10 })
        );
        assert_eq!(
            decode_reply(&message(0, &[48]), 48),
            Err(SerialError::Truncated {
                needed: 4,
                found: 1
            })
        );
        assert_eq!(
            decode_reply(&Message::new(48, 0x02, vec![]), 48),
            Err(SerialError::UnexpectedMessage {
                id: 48,
                class: 0x02
            })
        );
    }

    #[test]
    fn debug_redacts_secrets() {
        let request = RestRequest::post(
            "/api/v1/user/password",
            "auth=s3cr3t&checkOnly=true",
            br#"{"password":"hunter2"}"#.to_vec(),
        );
        let shown = format!("{request:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("auth=[redacted]&checkOnly=true"), "{shown}");
        assert!(shown.contains("<22 bytes>"), "{shown}");
        let reply = RestReply::new(200, br#"{"token":"abc"}"#.to_vec());
        assert_eq!(
            format!("{reply:?}"),
            "RestReply { status: 200, body: <15 bytes> }"
        );
        assert_eq!(
            format!("{:?}", RestRequest::get("/api/v1/info", "")),
            r#"RestRequest { method: Get, path: "/api/v1/info", query: "", body: None }"#
        );
    }
}
