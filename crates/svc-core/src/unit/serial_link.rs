//! The serial link: the unit's REST API carried in sbgECom frames ([`crate::serial`]) over
//! a serial port or over a raw TCP serial bridge, as an [`Exchange`] for the generated
//! client — every typed operation of [`Unit`](super::Unit) works over it unchanged.
//!
//! Rules of a serial link:
//! - one request at a time: the next is sent only once the previous is answered or
//!   given up;
//! - each answer has an idle deadline (silence, not total time); frames with a bad CRC
//!   or ETX, and garbage, are skipped by the decoder, so a garbled answer looks like no
//!   answer; ACKs and answers of other messages are skipped too;
//! - a frame left incomplete for longer than the inter-byte timeout (a corrupt header
//!   announcing a length that never comes, a frame cut off) is abandoned, and the
//!   bytes after its start are searched again at once, so it cannot swallow the
//!   answer behind it;
//! - a GET that gets no answer is sent again (up to [`SerialOptions::get_attempts`]
//!   silent attempts, during which nothing at all came back; an attempt that got bytes
//!   but no valid answer — a noisy line that damaged it — is not counted, up to
//!   [`NOISY_ATTEMPTS_FACTOR`] times as many attempts in all): reading twice is harmless; so is a write with `checkOnly=true`,
//!   which the unit only validates, and so are the POSTs whose repetition changes
//!   nothing more ([`REPEATABLE_POSTS`]: a login gives one more token, a lock request
//!   by the holder renews its lock, an unlock or a save done twice is done once), each
//!   sent again likewise;
//! - any other POST that gets no answer is **not** repeated: the unit may have applied
//!   it, and applying a settings write or a reboot twice is not harmless. The error says
//!   so, and the caller decides (read the tree back, then write again if needed);
//! - an ACK with an error code in place of an answer means the unit could not read the
//!   request; it is reported with its code;
//! - the output logs the unit streams on the same line go to the link's subscribers
//!   ([`SerialLink::subscribe`], see [`crate::live`]): while a request waits for its
//!   answer, the request's reader routes them; between requests, a reader of their own
//!   holds the line and hands it over to the next request at once. A subscriber's
//!   buffer is bounded and its overflow counted, so a slow subscriber never delays a
//!   request.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, Notify};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{Exchange, ExchangeError, ExchangeFuture, ExchangeReply, ExchangeRequest};
use crate::live::{Hub, LogStream, Slot, Subscribe};
use crate::serial::{Decoder, Method, RestRequest, decode_reply};

/// Deadlines and retries of the serial link.
#[derive(Clone, Copy, Debug)]
pub struct SerialOptions {
    /// How long the link may stay silent while an answer is awaited (restarted by every
    /// byte received, so a long answer is never cut short). Default 3 s.
    pub answer_timeout: Duration,
    /// How many silent attempts (nothing at all came back) a GET (or a check-only write,
    /// or a [repeatable POST](REPEATABLE_POSTS)) is given before giving up (at least 1).
    /// Attempts whose answer came damaged (bytes arrived, no valid answer) are not
    /// counted, up to [`NOISY_ATTEMPTS_FACTOR`] × this many attempts in all. Default 5:
    /// on a line that damages a fifth of what crosses it, a request and its answer
    /// both pass less than two times in three.
    pub get_attempts: u32,
    /// How long the line may stay silent in the middle of a frame before that frame is
    /// abandoned and the bytes after its start are searched for the next one (a corrupt
    /// header that announces a length in range would otherwise hold every following
    /// frame until that many bytes have arrived). Default 250 ms.
    pub inter_byte_timeout: Duration,
}

impl Default for SerialOptions {
    fn default() -> Self {
        Self {
            answer_timeout: Duration::from_secs(3),
            get_attempts: 5,
            inter_byte_timeout: DEFAULT_INTER_BYTE_TIMEOUT,
        }
    }
}

/// The default [`SerialOptions::inter_byte_timeout`]: a serial line sends the bytes of a
/// frame back to back; a TCP bridge may add some latency.
pub const DEFAULT_INTER_BYTE_TIMEOUT: Duration = Duration::from_millis(250);

/// Anything a byte stream can be read from and written to (a serial port, a TCP bridge).
pub trait SerialIo: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> SerialIo for T {}

struct Line {
    io: Box<dyn SerialIo>,
    decoder: Decoder,
}

/// The unit's REST API over a byte stream in sbgECom frames, and the output logs the
/// unit streams on it.
pub struct SerialLink {
    inner: Arc<Inner>,
}

struct Inner {
    line: Mutex<Line>,
    options: SerialOptions,
    transfer: AtomicU8,
    describe: String,
    /// The subscribers of the output logs.
    hub: Hub,
    /// Requests waiting for the line (the subscribers' reader gives it up to them).
    wanted: AtomicUsize,
    /// A request wants the line.
    want: Notify,
    /// A request is done with the line.
    released: Notify,
    /// The link is dropped: the subscribers' reader stops.
    stop: CancellationToken,
}

/// A request's claim on the line: while one is held, the subscribers' reader does not
/// take the line.
struct Want<'a>(&'a Inner);

impl<'a> Want<'a> {
    fn new(inner: &'a Inner) -> Self {
        inner.wanted.fetch_add(1, Ordering::SeqCst);
        inner.want.notify_one();
        Want(inner)
    }
}

impl Drop for Want<'_> {
    fn drop(&mut self) {
        self.0.wanted.fetch_sub(1, Ordering::SeqCst);
        self.0.released.notify_one();
    }
}

impl Drop for SerialLink {
    fn drop(&mut self) {
        self.inner.stop.cancel();
        self.inner
            .hub
            .close(&format!("{}: the session was closed", self.inner.describe));
    }
}

impl std::fmt::Debug for SerialLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerialLink")
            .field("link", &self.inner.describe)
            .field("options", &self.inner.options)
            .finish()
    }
}

impl SerialLink {
    /// A link over any byte stream; `describe` names it in errors (e.g. `/dev/ttyUSB0`).
    pub fn new(io: impl SerialIo, describe: impl Into<String>, options: SerialOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                line: Mutex::new(Line {
                    io: Box::new(io),
                    decoder: Decoder::new().with_inter_byte_timeout(
                        options.inter_byte_timeout.max(Duration::from_millis(1)),
                    ),
                }),
                options,
                transfer: AtomicU8::new(0),
                describe: describe.into(),
                hub: Hub::default(),
                wanted: AtomicUsize::new(0),
                want: Notify::new(),
                released: Notify::new(),
                stop: CancellationToken::new(),
            }),
        }
    }

    /// Subscribes to the output logs the unit streams on this link (see
    /// [`crate::live`]). Needs a Tokio runtime: a reader runs on it while no request
    /// does.
    ///
    /// # Errors
    /// No Tokio runtime is running.
    pub fn subscribe(self: &Arc<Self>, subscribe: Subscribe) -> Result<LogStream, String> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            format!(
                "{}: subscribing needs a Tokio runtime to read the line on",
                self.inner.describe
            )
        })?;
        let slot = Slot::new(subscribe);
        if self.inner.hub.add(Arc::clone(&slot)) {
            let inner = Arc::clone(&self.inner);
            runtime.spawn(read_for_subscribers(inner));
        }
        // The stream keeps the link open (see `crate::live`).
        Ok(LogStream::new(slot, self.inner.describe.clone()).keeping(Arc::clone(self) as _))
    }

    /// Connects to a serial-over-IP bridge at `host:port`.
    ///
    /// # Errors
    /// The connection error, as text naming the address.
    pub async fn tcp(address: &str, options: SerialOptions) -> Result<Self, String> {
        let stream = tokio::time::timeout(
            Duration::from_secs(10),
            tokio::net::TcpStream::connect(address),
        )
        .await
        .map_err(|_| format!("serial bridge {address}: no connection within 10 s"))?
        .map_err(|e| format!("serial bridge {address}: {e}"))?;
        let _ = stream.set_nodelay(true);
        Ok(Self::new(
            stream,
            format!("serial bridge {address}"),
            options,
        ))
    }

    /// Opens a serial port (8 data bits, no parity, 1 stop bit, raw) at `baud`.
    ///
    /// # Errors
    /// The open error, as text naming the port.
    #[cfg(feature = "serial-port")]
    pub fn port(path: &str, baud: u32, options: SerialOptions) -> Result<Self, String> {
        use tokio_serial::SerialPortBuilderExt;
        let port = tokio_serial::new(path, baud)
            .data_bits(tokio_serial::DataBits::Eight)
            .parity(tokio_serial::Parity::None)
            .stop_bits(tokio_serial::StopBits::One)
            .flow_control(tokio_serial::FlowControl::None)
            .open_native_async()
            .map_err(|e| format!("serial port {path}: {e}"))?;
        Ok(Self::new(port, format!("serial port {path}"), options))
    }

    /// Sends `request` (its path is logged, never its query, which holds the token, nor
    /// its body, which may hold a password).
    async fn send(&self, request: &RestRequest) -> Result<ExchangeReply, ExchangeError> {
        let span = tracing::debug_span!(
            "serial",
            link = %self.inner.describe,
            method = %request.method,
            path = %request.path,
            body_bytes = request.body.as_ref().map_or(0, Vec::len)
        );
        self.send_in_span(request).instrument(span).await
    }

    async fn send_in_span(&self, request: &RestRequest) -> Result<ExchangeReply, ExchangeError> {
        let inner = &*self.inner;
        let id = request.id();
        let (silent_limit, attempts) = if harmless_to_repeat(request) {
            let silent = inner.options.get_attempts.max(1);
            (silent, silent.saturating_mul(NOISY_ATTEMPTS_FACTOR))
        } else {
            (1, 1)
        };
        let _want = Want::new(inner);
        let mut line = inner.line.lock().await;
        let mut last = String::new();
        let mut silent_attempts = 0;
        for attempt in 1..=attempts {
            let transfer =
                inner.transfer.fetch_add(1, Ordering::Relaxed) & crate::serial::TRANSFER_ID_MASK;
            let frames = request
                .try_encode(transfer)
                .map_err(|e| format!("{}: {e}", inner.describe))?;
            // Bytes left from an answer that came too late belong to no one now; a log
            // frame in progress is left to complete.
            let stale_bytes = line.decoder.bytes_in_progress(crate::serial::CLASS_REST);
            if stale_bytes > 0 {
                line.decoder.resync();
            }
            let mut stale_messages = 0_usize;
            while let Some(message) = line.decoder.next_message() {
                if message.class == crate::serial::CLASS_REST {
                    stale_messages += 1;
                } else {
                    inner.hub.route(message);
                }
            }
            if stale_bytes > 0 || stale_messages > 0 {
                tracing::debug!(
                    stale_bytes,
                    stale_messages,
                    "resync: discarded what was left on the line"
                );
            }
            tracing::trace!(bytes = frames.len(), transfer, attempt, "frames sent");
            line.io
                .write_all(&frames)
                .await
                .map_err(|e| format!("{}: write failed: {e}", inner.describe))?;
            line.io
                .flush()
                .await
                .map_err(|e| format!("{}: write failed: {e}", inner.describe))?;
            let before = line.decoder.stats();
            let before_buffered = line.decoder.buffered_len();
            let started = Instant::now();
            let mut rest_heard = false;
            let answer = read_answer(
                &mut line,
                &inner.hub,
                id,
                inner.options.answer_timeout,
                &mut rest_heard,
            )
            .await;
            let after = line.decoder.stats();
            // A damaged answer shows as garbage, invalid frames or REST bytes; the output
            // logs a unit streams on the line, decoded whole, are no sign of one.
            let heard = rest_heard
                || after.skipped_bytes > before.skipped_bytes
                || after.bad_frames() > before.bad_frames()
                || (line.decoder.buffered_len() > before_buffered
                    && line.decoder.bytes_in_progress(crate::serial::CLASS_REST) > 0);
            let skipped = after.skipped_bytes.saturating_sub(before.skipped_bytes);
            let bad_frames = after.bad_frames().saturating_sub(before.bad_frames());
            if skipped > 0 || bad_frames > 0 {
                tracing::debug!(
                    skipped_bytes = skipped,
                    bad_frames,
                    truncated = after.truncated.saturating_sub(before.truncated),
                    "garbage or invalid frames skipped on the line"
                );
            }
            match answer {
                Ok(reply) => {
                    tracing::debug!(
                        status = reply.status,
                        body_bytes = reply.body.len(),
                        attempt,
                        elapsed_ms = crate::observe::millis(started.elapsed()),
                        "answer received"
                    );
                    return Ok(reply);
                }
                Err(Silence::Broken(e)) => {
                    tracing::debug!(attempt, error = %e, "the link failed");
                    let reason = format!("{}: {e}", inner.describe);
                    inner.hub.close(&reason);
                    return Err(reason.into());
                }
                Err(Silence::Failed(e)) => {
                    tracing::debug!(attempt, error = %e, "the exchange failed");
                    return Err(format!("{}: {e}", inner.describe).into());
                }
                Err(Silence::TimedOut) => {
                    if !heard {
                        silent_attempts += 1;
                    }
                    let will_retry = attempt < attempts && silent_attempts < silent_limit;
                    tracing::info!(
                        attempt,
                        silent_attempts,
                        damaged_answer = heard,
                        silent_ms = crate::observe::millis(inner.options.answer_timeout),
                        will_retry,
                        "serial timeout: no answer"
                    );
                    last = if heard {
                        format!(
                            "{}: no valid answer (bytes came, damaged; then silent for {:?}; \
                             attempt {attempt}, {silent_attempts} of {silent_limit} silent)",
                            inner.describe, inner.options.answer_timeout
                        )
                    } else {
                        format!(
                            "{}: no answer (silent for {:?}; attempt {silent_attempts} of {silent_limit})",
                            inner.describe, inner.options.answer_timeout
                        )
                    };
                    if !will_retry {
                        break;
                    }
                }
            }
        }
        if !harmless_to_repeat(request) {
            last.push_str(
                "; the unit may or may not have applied this POST, so it was not sent again — \
                 read the state back before repeating it",
            );
        }
        Err(ExchangeError::no_answer(last))
    }
}

/// How many times more attempts than [`SerialOptions::get_attempts`] a repeatable
/// request is given in all when its answers keep coming damaged (a noisy line: each
/// damaged answer shows the unit is there).
pub const NOISY_ATTEMPTS_FACTOR: u32 = 4;

/// The POST routes (under `/api/v1`) that may be sent again when their answer is lost:
/// doing them twice leaves the unit as doing them once (a login makes one more token,
/// a logout of an ended token is refused with 401 and ends nothing more, a lock request
/// by the holder renews its own lock, an unlock without a lock succeeds, a save saves
/// the same tree).
pub const REPEATABLE_POSTS: &[&str] = &[
    "/user/login",
    "/user/logout",
    "/settings/lock",
    "/settings/unlock",
    "/settings/save",
];

/// Whether sending `request` twice does no more than sending it once: a GET, a POST
/// the unit only validates (`checkOnly=true`, which applies nothing), or one of
/// [`REPEATABLE_POSTS`].
fn harmless_to_repeat(request: &RestRequest) -> bool {
    let route = request
        .path
        .trim_start_matches('/')
        .strip_prefix("api/v1")
        .unwrap_or(&request.path);
    request.method == Method::Get
        || request
            .query
            .split('&')
            .any(|pair| pair == "checkOnly=true")
        || REPEATABLE_POSTS.contains(&route)
}

/// Reads until the answer to the request with message id `id` arrives, or an ACK for
/// that request (an error). Other messages — an ACK or a late answer of an earlier
/// request, the output logs the unit streams on the same line — are skipped. The
/// deadline is an idle one: it restarts whenever the REST traffic progresses (a REST
/// message decoded, more bytes of one received), so a long answer (a whole settings
/// tree) is not cut short while a unit that stopped answering (rebooting, or that lost
/// the request) is given up on quickly, even while it streams logs. While the line is silent, a frame
/// left incomplete past the inter-byte timeout is abandoned at once (see
/// [`Decoder::expire_partial_frame`]), so an answer held behind it is found.
/// `rest_heard` is set when REST traffic other than the answer came (another message,
/// bytes of one).
async fn read_answer(
    line: &mut Line,
    hub: &Hub,
    id: u8,
    idle: Duration,
    rest_heard: &mut bool,
) -> Result<ExchangeReply, Silence> {
    let mut buffer = vec![0u8; 8192];
    let mut last_byte = Instant::now();
    loop {
        while let Some(message) = line.decoder.next_message() {
            if message.class != crate::serial::CLASS_REST {
                hub.route(message);
                continue;
            }
            last_byte = Instant::now();
            *rest_heard = true;
            tracing::trace!(
                id = message.id,
                class = message.class,
                bytes = message.data.len(),
                "message received"
            );
            if message.id == crate::serial::ID_ACK {
                match crate::serial::Ack::decode(&message) {
                    Ok(ack) if ack.id == id && ack.class == crate::serial::CLASS_REST => {
                        return Err(Silence::Failed(describe_ack(&message)));
                    }
                    // An ACK of another message: not the answer to this one.
                    _ => continue,
                }
            }
            if message.id != id {
                tracing::debug!(
                    id = message.id,
                    expected = id,
                    "skipped a message of another request"
                );
                continue;
            }
            return decode_reply(&message, id)
                .map(|reply| ExchangeReply {
                    status: reply.status,
                    body: reply.body,
                })
                .map_err(|e| Silence::Failed(format!("unreadable answer: {e}")));
        }
        let answer_deadline = last_byte + idle;
        let wake = match line.decoder.partial_frame_deadline() {
            Some(partial) => partial.min(answer_deadline),
            None => answer_deadline,
        };
        let wait = wake.saturating_duration_since(Instant::now());
        let n = match tokio::time::timeout(wait, line.io.read(&mut buffer)).await {
            Err(_) => {
                let now = Instant::now();
                if line.decoder.expire_partial_frame(now) {
                    tracing::debug!(
                        "inter-byte timeout: incomplete frame abandoned, searching the next sync"
                    );
                    // What was held behind the dead frame's start is decoded now.
                    continue;
                }
                if now >= answer_deadline {
                    return Err(Silence::TimedOut);
                }
                continue;
            }
            Ok(Err(e)) => return Err(Silence::Broken(format!("read failed: {e}"))),
            Ok(Ok(0)) => return Err(Silence::Broken("the link was closed".to_owned())),
            Ok(Ok(n)) => n,
        };
        tracing::trace!(bytes = n, "bytes received");
        let now = Instant::now();
        let before = line.decoder.bytes_in_progress(crate::serial::CLASS_REST);
        line.decoder.push_at(&buffer[..n], now);
        if line.decoder.bytes_in_progress(crate::serial::CLASS_REST) != before {
            last_byte = now;
            *rest_heard = true;
        }
    }
}

/// Why no answer was read.
enum Silence {
    /// Nothing arrived within the idle deadline.
    TimedOut,
    /// The unit refused the request, or its answer was unreadable.
    Failed(String),
    /// The link failed or was closed: the subscribers' streams end too.
    Broken(String),
}

fn describe_ack(message: &crate::serial::Message) -> String {
    match crate::serial::Ack::decode(message) {
        Ok(ack) => format!(
            "the unit could not read the request (ACK for class {:#04x} id {} with error code {})",
            ack.class, ack.id, ack.error
        ),
        Err(e) => format!("the unit answered with an unreadable ACK: {e}"),
    }
}

impl Exchange for SerialLink {
    fn exchange(&self, request: ExchangeRequest) -> ExchangeFuture<'_> {
        Box::pin(async move {
            let method = match request.method {
                http::Method::GET => Method::Get,
                http::Method::POST => Method::Post,
                other => {
                    return Err(
                        format!("the unit has no {other} method (GET and POST only)").into(),
                    );
                }
            };
            let body = match method {
                Method::Get => None,
                Method::Post => Some(request.body.unwrap_or_default()),
            };
            let rest = RestRequest {
                method,
                path: request.path,
                query: request.query,
                body,
            };
            self.send(&rest).await
        })
    }
}

/// Reads the line on the subscribers' behalf while no request does: routes the log
/// frames, gives the line up as soon as a request wants it, stops once no subscriber
/// is left (the next subscription starts another) or the link is dropped or fails.
async fn read_for_subscribers(inner: Arc<Inner>) {
    let mut buffer = vec![0u8; 8192];
    'line: loop {
        // Waiting requests go first.
        loop {
            let released = inner.released.notified();
            if inner.wanted.load(Ordering::SeqCst) == 0 {
                break;
            }
            tokio::select! {
                () = inner.stop.cancelled() => break 'line,
                () = released => {}
            }
        }
        if !inner.hub.keep_reading() {
            return;
        }
        let mut line = tokio::select! {
            () = inner.stop.cancelled() => break 'line,
            line = inner.line.lock() => line,
        };
        loop {
            while let Some(message) = line.decoder.next_message() {
                inner.hub.route(message);
            }
            if !inner.hub.keep_reading() {
                return;
            }
            if inner.wanted.load(Ordering::SeqCst) > 0 {
                continue 'line;
            }
            let partial = line.decoder.partial_frame_deadline();
            let Line { io, decoder } = &mut *line;
            let read = async {
                match partial {
                    Some(at) => tokio::time::timeout_at(at.into(), io.read(&mut buffer))
                        .await
                        .ok(),
                    None => Some(io.read(&mut buffer).await),
                }
            };
            let read = tokio::select! {
                () = inner.stop.cancelled() => break 'line,
                () = inner.want.notified() => continue 'line,
                read = read => read,
            };
            match read {
                // The line stayed silent in the middle of a frame.
                None => {
                    decoder.expire_partial_frame(Instant::now());
                }
                Some(Ok(0)) => {
                    inner
                        .hub
                        .close(&format!("{}: the link was closed", inner.describe));
                    break 'line;
                }
                Some(Err(e)) => {
                    inner
                        .hub
                        .close(&format!("{}: read failed: {e}", inner.describe));
                    break 'line;
                }
                Some(Ok(n)) => decoder.push_at(&buffer[..n], Instant::now()),
            }
        }
    }
    inner.hub.reader_stopped();
}
