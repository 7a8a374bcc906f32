//! The output logs a unit streams, live: subscriptions to the sbgECom log frames of a
//! serial link (the same line that carries the unit's REST API), of UDP datagrams (a
//! unit's Ethernet outputs) or of a log file being written.
//!
//! A [`LogStream`] is one subscriber. It yields the unit's [`Record`]s (it is a
//! [`Stream`](futures::Stream)), or the raw frames ([`LogStream::next_frame`]: what a
//! session file holds), of the messages it asked for ([`Subscribe::messages`]; all
//! when empty).
//!
//! Rules:
//! - each subscriber has a bounded buffer ([`Subscribe::capacity`] frames). A subscriber
//!   that does not keep up never slows the link nor the unit's REST calls: the frames
//!   that find its buffer full are dropped, counted, and reported in the stream as
//!   [`LiveError::Dropped`] at the place where they are missing, then the stream goes
//!   on. Nothing is dropped silently;
//! - a frame of a message this SDK does not know, or whose payload does not decode, is
//!   skipped by [`LogStream::next_record`] and counted ([`LiveStats`]); as a raw frame
//!   it is delivered like any other;
//! - the stream ends with [`LiveError::Closed`] (then `None`) when its source fails or
//!   closes: the serial link failed, the file was truncated or removed;
//! - a stream keeps its serial link open: the session it came from may be dropped (a
//!   garbage-collected object of a binding), its subscribers still receive; the link
//!   closes when the session and its last stream are gone;
//! - dropping the [`LogStream`] ends the subscription; a serial link stops reading on
//!   its own behalf once no subscriber is left.
//!
//! Over a serial link, a subscription comes from [`Unit::subscribe`](crate::unit::Unit::subscribe);
//! [`LogStream::udp`] listens on a UDP port; [`LogStream::follow`] reads a file as it
//! grows. The same code then reads live and recorded data.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::task::AtomicWaker;
use svc_protocol::serial::{CLASS_REST, Decoder, Message, encode_message};

pub use svc_logs::json::{record_json, record_values};
pub use svc_logs::tables::{Tables, record_timestamp};
pub use svc_logs::{DecodeError, MessageKind, Record, records};

/// What a subscription receives.
#[derive(Clone, Debug)]
pub struct Subscribe {
    /// The messages wanted; empty: every log frame (unknown messages included).
    pub messages: Vec<MessageKind>,
    /// How many frames may wait for the subscriber before the next ones are dropped
    /// (and counted). At least 1. Default [`DEFAULT_CAPACITY`].
    pub capacity: usize,
}

/// The default [`Subscribe::capacity`]: 8 s of `imuData` at 1 kHz.
pub const DEFAULT_CAPACITY: usize = 8192;

impl Default for Subscribe {
    fn default() -> Self {
        Self {
            messages: Vec::new(),
            capacity: DEFAULT_CAPACITY,
        }
    }
}

impl Subscribe {
    /// Every log frame, with the default capacity.
    #[must_use]
    pub fn all() -> Self {
        Self::default()
    }

    /// Only these messages, with the default capacity.
    #[must_use]
    pub fn only(messages: impl IntoIterator<Item = MessageKind>) -> Self {
        Self {
            messages: messages.into_iter().collect(),
            capacity: DEFAULT_CAPACITY,
        }
    }

    /// The same, with another capacity.
    #[must_use]
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Parses a comma-separated list of message names as the unit's settings name them
    /// (`ekfNav,utcTime`); empty: every message.
    ///
    /// # Errors
    /// The first name that is no message's.
    pub fn parse_messages(list: &str) -> Result<Vec<MessageKind>, String> {
        Self::named(
            list.split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty()),
        )
    }

    /// The messages of these names, as the unit's settings name them.
    ///
    /// # Errors
    /// The first name that is no message's, with the list of the names.
    pub fn named<S: AsRef<str>>(
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<MessageKind>, String> {
        names
            .into_iter()
            .map(|name| {
                let name = name.as_ref();
                MessageKind::from_name(name).ok_or_else(|| {
                    format!(
                        "unknown message {name:?}: one of {}",
                        MessageKind::ALL
                            .iter()
                            .map(|k| k.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect()
    }

    fn wants(&self, message: &Message) -> bool {
        message.class != CLASS_REST
            && (self.messages.is_empty()
                || self
                    .messages
                    .iter()
                    .any(|k| k.class() == message.class && k.id() == message.id))
    }
}

/// Why a [`LogStream`] did not yield a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// The subscriber did not keep up: `frames` frames it asked for found its buffer
    /// full and were dropped here, between the item before and the item after. The
    /// stream goes on.
    #[error("{frames} log frames dropped: the subscriber did not keep up with the stream")]
    Dropped {
        /// How many.
        frames: u64,
    },
    /// The source failed or closed; the stream ends.
    #[error("the log stream ended: {reason}")]
    Closed {
        /// What happened.
        reason: String,
    },
}

impl LiveError {
    /// The SDK's classification: [`Dropped`](Self::Dropped) is a
    /// [`Conflict`](crate::ErrorKind::Conflict) between the stream's rate and the
    /// subscriber's (nothing to retry), [`Closed`](Self::Closed) an
    /// [`Unreachable`](crate::ErrorKind::Unreachable) source.
    #[must_use]
    pub fn kind(&self) -> crate::ErrorKind {
        match self {
            Self::Dropped { .. } => crate::ErrorKind::Conflict,
            Self::Closed { .. } => crate::ErrorKind::Unreachable,
        }
    }

    /// Which side failed: the unit for a stream that ended, `None` for a subscriber too
    /// slow for the stream.
    #[must_use]
    pub fn side(&self) -> Option<crate::Side> {
        match self {
            Self::Dropped { .. } => None,
            Self::Closed { .. } => Some(crate::Side::Unit),
        }
    }
}

/// What a subscriber received and missed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Frames received (taken from the buffer).
    pub frames: u64,
    /// Records yielded by [`LogStream::next_record`].
    pub records: u64,
    /// Frames dropped because the buffer was full.
    pub dropped: u64,
    /// Frames of a message this SDK does not know, skipped by `next_record`.
    pub unknown: u64,
    /// Frames whose payload did not decode, skipped by `next_record`.
    pub undecodable: u64,
}

/// One sbgECom log frame as it came (a large message reassembled): what a session
/// file holds. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFrame(Arc<Message>);

impl LogFrame {
    /// Its message class.
    #[must_use]
    pub fn class(&self) -> u8 {
        self.0.class
    }

    /// Its message id.
    #[must_use]
    pub fn id(&self) -> u8 {
        self.0.id
    }

    /// Its payload.
    #[must_use]
    pub fn payload(&self) -> &[u8] {
        &self.0.data
    }

    /// The message, if this SDK knows it.
    #[must_use]
    pub fn kind(&self) -> Option<MessageKind> {
        MessageKind::from_ids(self.0.class, self.0.id)
    }

    /// Its record.
    ///
    /// # Errors
    /// As [`svc_logs::decode`].
    pub fn decode(&self) -> Result<Record, DecodeError> {
        svc_logs::decode(self.0.class, self.0.id, &self.0.data)
    }

    /// Its bytes on the wire (large frames for a payload over one frame), as a session
    /// file records them.
    #[must_use]
    pub fn to_wire(&self) -> Vec<u8> {
        encode_message(self.0.id, self.0.class, &self.0.data, 0)
    }
}

// ---------------------------------------------------------------------------------
// One subscriber's buffer
// ---------------------------------------------------------------------------------

enum Entry {
    Frame(LogFrame),
    /// Frames dropped at this place.
    Gap(u64),
}

#[derive(Default)]
struct SlotState {
    queue: VecDeque<Entry>,
    /// Frames in `queue` (gaps are not counted against the capacity).
    frames: usize,
    /// Frames dropped since the last one queued (reported before the next one).
    tail_gap: u64,
    dropped: u64,
    /// Why the source ended, once it has.
    end: Option<String>,
    /// The subscriber is gone.
    gone: bool,
}

/// A subscriber's bounded buffer, filled by its source, emptied by its [`LogStream`].
pub(crate) struct Slot {
    subscribe: Subscribe,
    state: Mutex<SlotState>,
    waker: AtomicWaker,
    /// The subscriber took frames: a source that waits for room goes on.
    room: tokio::sync::Notify,
}

/// What became of a frame offered to a subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Offer {
    /// Queued, or not wanted.
    Taken,
    /// Its buffer is full (and the source asked not to drop it).
    Full,
    /// The subscriber is gone.
    Gone,
}

impl Slot {
    pub(crate) fn new(subscribe: Subscribe) -> Arc<Slot> {
        Arc::new(Slot {
            subscribe: Subscribe {
                capacity: subscribe.capacity.max(1),
                ..subscribe
            },
            state: Mutex::new(SlotState::default()),
            waker: AtomicWaker::new(),
            room: tokio::sync::Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, SlotState> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Whether the subscriber is gone (its source may stop).
    pub(crate) fn is_gone(&self) -> bool {
        self.state().gone
    }

    /// Offers a frame: queued if the subscriber wants it and has room, else counted
    /// as dropped. Whether the subscriber is still there.
    pub(crate) fn offer(&self, message: &Arc<Message>) -> bool {
        self.try_offer(message, true) != Offer::Gone
    }

    /// Offers a frame and, while the subscriber's buffer is full, waits for room
    /// instead of dropping it: a source that can wait (a file). Whether the subscriber
    /// is still there.
    pub(crate) async fn offer_waiting(&self, message: &Arc<Message>) -> bool {
        loop {
            let room = self.room.notified();
            match self.try_offer(message, false) {
                Offer::Taken => return true,
                Offer::Gone => return false,
                Offer::Full => room.await,
            }
        }
    }

    fn try_offer(&self, message: &Arc<Message>, drop_when_full: bool) -> Offer {
        if !self.subscribe.wants(message) {
            return if self.is_gone() {
                Offer::Gone
            } else {
                Offer::Taken
            };
        }
        let mut state = self.state();
        if state.gone {
            return Offer::Gone;
        }
        if state.end.is_some() {
            return Offer::Taken;
        }
        // Gaps are reported in place; the buffer holds `capacity` frames.
        if state.frames >= self.subscribe.capacity {
            if !drop_when_full {
                return Offer::Full;
            }
            state.tail_gap += 1;
            state.dropped += 1;
        } else {
            if state.tail_gap > 0 {
                let gap = std::mem::take(&mut state.tail_gap);
                state.queue.push_back(Entry::Gap(gap));
            }
            state
                .queue
                .push_back(Entry::Frame(LogFrame(Arc::clone(message))));
            state.frames += 1;
        }
        drop(state);
        self.waker.wake();
        Offer::Taken
    }

    /// Ends the subscription from the source's side: what is queued is still
    /// delivered, then [`LiveError::Closed`] with `reason`.
    pub(crate) fn close(&self, reason: &str) {
        let mut state = self.state();
        if state.end.is_none() {
            state.end = Some(reason.to_owned());
        }
        drop(state);
        self.waker.wake();
    }

    fn poll_take(&self, cx: Option<&mut Context<'_>>) -> Poll<Option<Taken>> {
        if let Some(cx) = cx.as_ref() {
            self.waker.register(cx.waker());
        }
        let mut state = self.state();
        let taken = Self::take_one(&mut state);
        drop(state);
        if matches!(taken, Poll::Ready(Some(Taken::Frame(_)))) {
            self.room.notify_one();
        }
        taken
    }

    /// Takes up to `max` items at once (one lock), into `out`; whether the stream
    /// has ended (everything taken, the end included).
    fn take_many(&self, out: &mut Vec<Taken>, max: usize) -> bool {
        let mut state = self.state();
        let mut ended = false;
        while out.len() < max {
            match Self::take_one(&mut state) {
                Poll::Ready(Some(taken)) => {
                    let end = matches!(taken, Taken::End(_));
                    out.push(taken);
                    if end {
                        ended = true;
                        break;
                    }
                }
                Poll::Ready(None) => {
                    ended = true;
                    break;
                }
                Poll::Pending => break,
            }
        }
        drop(state);
        self.room.notify_one();
        ended
    }

    /// Whether an item (or the end) is waiting, registering the waker otherwise.
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.waker.register(cx.waker());
        let state = self.state();
        if state.queue.is_empty() && state.tail_gap == 0 && state.end.is_none() {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    fn take_one(state: &mut SlotState) -> Poll<Option<Taken>> {
        if let Some(entry) = state.queue.pop_front() {
            return Poll::Ready(Some(match entry {
                Entry::Frame(frame) => {
                    state.frames -= 1;
                    Taken::Frame(frame)
                }
                Entry::Gap(n) => Taken::Gap(n),
            }));
        }
        if state.tail_gap > 0 {
            return Poll::Ready(Some(Taken::Gap(std::mem::take(&mut state.tail_gap))));
        }
        match state.end.take() {
            Some(reason) => {
                // Reported once; then the stream is over.
                state.end = Some(String::new());
                if reason.is_empty() {
                    Poll::Ready(None)
                } else {
                    Poll::Ready(Some(Taken::End(reason)))
                }
            }
            None => Poll::Pending,
        }
    }
}

/// Ends a [`LogStream`]'s subscription from anywhere ([`LogStream::closer`]).
#[derive(Clone)]
pub struct Closer(Arc<Slot>);

impl std::fmt::Debug for Closer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Closer")
    }
}

impl Closer {
    /// Ends the subscription: what is buffered is dropped, the stream ends cleanly.
    pub fn close(&self) {
        let mut state = self.0.state();
        state.gone = true;
        state.queue.clear();
        state.frames = 0;
        state.tail_gap = 0;
        if state.end.is_none() {
            state.end = Some(String::new());
        }
        drop(state);
        self.0.waker.wake();
        self.0.room.notify_one();
    }
}

enum Taken {
    Frame(LogFrame),
    Gap(u64),
    End(String),
}

// ---------------------------------------------------------------------------------
// Routing: the subscribers of one source
// ---------------------------------------------------------------------------------

/// The subscribers of one source (a serial link): every log frame decoded on the line
/// is offered to each. Their filters and buffers are their own.
#[derive(Default)]
pub(crate) struct Hub {
    slots: Mutex<HubState>,
}

#[derive(Default)]
struct HubState {
    slots: Vec<Arc<Slot>>,
    /// A reader is running on the subscribers' behalf.
    reading: bool,
}

impl Hub {
    fn state(&self) -> MutexGuard<'_, HubState> {
        match self.slots.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Adds a subscriber; whether a reader must be started for it (none runs).
    pub(crate) fn add(&self, slot: Arc<Slot>) -> bool {
        let mut state = self.state();
        state.slots.push(slot);
        !std::mem::replace(&mut state.reading, true)
    }

    /// Whether subscribers are left; when none is, the reader is marked stopped (it
    /// must stop: the next [`add`](Self::add) starts another).
    pub(crate) fn keep_reading(&self) -> bool {
        let mut state = self.state();
        state.slots.retain(|slot| !slot.is_gone());
        if state.slots.is_empty() {
            state.reading = false;
        }
        state.reading
    }

    /// The reader stopped for another reason (the link is gone).
    pub(crate) fn reader_stopped(&self) {
        self.state().reading = false;
    }

    /// Offers a log frame to every subscriber (REST messages are not offered).
    pub(crate) fn route(&self, message: Message) {
        if message.class == CLASS_REST {
            return;
        }
        let mut state = self.state();
        if state.slots.is_empty() {
            return;
        }
        let message = Arc::new(message);
        state.slots.retain(|slot| slot.offer(&message));
    }

    /// The source is gone: every subscriber's stream ends with `reason`.
    pub(crate) fn close(&self, reason: &str) {
        let mut state = self.state();
        for slot in state.slots.drain(..) {
            slot.close(reason);
        }
    }
}

// ---------------------------------------------------------------------------------
// The subscriber's end
// ---------------------------------------------------------------------------------

/// A subscription to a unit's output logs: a [`Stream`](futures::Stream) of
/// [`Record`]s (see the [module](self) for its rules).
pub struct LogStream {
    slot: Arc<Slot>,
    stats: LiveStats,
    /// The task reading the source for this stream alone (UDP, a file), stopped when
    /// the stream is dropped.
    task: Option<tokio::task::AbortHandle>,
    local_addr: Option<SocketAddr>,
    describe: String,
    /// [`fill`](LogStream::fill) saw the end: the reason it failed, `None` for a
    /// clean end; given again by the next calls.
    ended: Option<Option<String>>,
    /// What the source needs alive while the stream is (the serial link it reads).
    _source: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// What [`LogStream::fill`] took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filled {
    /// Frames taken.
    pub frames: u64,
    /// Rows added to the tables (frames of a known message that decoded; messages of
    /// no table, such as `diag`, count here but add no row).
    pub records: u64,
    /// Frames dropped before or between them (the subscriber fell behind).
    pub dropped: u64,
    /// The source ended cleanly (a followed file that stopped growing): nothing more
    /// will come.
    pub ended: bool,
}

impl std::fmt::Debug for LogStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogStream")
            .field("source", &self.describe)
            .field("messages", &self.slot.subscribe.messages)
            .field("capacity", &self.slot.subscribe.capacity)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Drop for LogStream {
    fn drop(&mut self) {
        self.slot.state().gone = true;
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl LogStream {
    pub(crate) fn new(slot: Arc<Slot>, describe: impl Into<String>) -> LogStream {
        LogStream {
            slot,
            stats: LiveStats::default(),
            task: None,
            local_addr: None,
            describe: describe.into(),
            ended: None,
            _source: None,
        }
    }

    /// The stream, keeping `source` alive as long as it lives.
    pub(crate) fn keeping(mut self, source: Arc<dyn std::any::Any + Send + Sync>) -> LogStream {
        self._source = Some(source);
        self
    }

    /// Where the stream comes from (a serial link, `udp 127.0.0.1:5600`, a file).
    #[must_use]
    pub fn source(&self) -> &str {
        &self.describe
    }

    /// The messages it receives (empty: all).
    #[must_use]
    pub fn messages(&self) -> &[MessageKind] {
        &self.slot.subscribe.messages
    }

    /// What it received and missed so far.
    #[must_use]
    pub fn stats(&self) -> LiveStats {
        LiveStats {
            dropped: self.slot.state().dropped,
            ..self.stats
        }
    }

    /// For a stream of UDP datagrams: the address it listens on.
    #[must_use]
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// The next frame, waiting for it; `None` once the stream has ended (after
    /// [`LiveError::Closed`]).
    pub async fn next_frame(&mut self) -> Option<Result<LogFrame, LiveError>> {
        std::future::poll_fn(|cx| self.poll_next_frame(Some(cx))).await
    }

    /// The next frame if one is waiting, without waiting: `Ok(None)` when none is.
    /// What a consumer that takes batches calls until it gets `Ok(None)`.
    ///
    /// # Errors
    /// [`LiveError::Dropped`] in place of the frames dropped there;
    /// [`LiveError::Closed`] once when the source has ended (then `Ok(None)` for ever:
    /// see [`is_closed`](Self::is_closed)).
    pub fn try_next_frame(&mut self) -> Result<Option<LogFrame>, LiveError> {
        match self.poll_next_frame(None) {
            Poll::Ready(Some(Ok(frame))) => Ok(Some(frame)),
            Poll::Ready(Some(Err(e))) => Err(e),
            Poll::Ready(None) | Poll::Pending => Ok(None),
        }
    }

    /// A handle that ends this subscription from anywhere (another thread, a
    /// cancellation callback of a binding): the source stops delivering to it, and a
    /// wait for the next frame returns `None` (a clean end) at once.
    #[must_use]
    pub fn closer(&self) -> Closer {
        Closer(Arc::clone(&self.slot))
    }

    /// Whether the stream has ended (its source closed and everything was taken).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        let state = self.slot.state();
        state.queue.is_empty() && state.tail_gap == 0 && state.end.is_some()
    }

    fn poll_next_frame(
        &mut self,
        cx: Option<&mut Context<'_>>,
    ) -> Poll<Option<Result<LogFrame, LiveError>>> {
        match self.slot.poll_take(cx) {
            Poll::Ready(Some(Taken::Frame(frame))) => {
                self.stats.frames += 1;
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Taken::Gap(frames))) => {
                Poll::Ready(Some(Err(LiveError::Dropped { frames })))
            }
            Poll::Ready(Some(Taken::End(reason))) => {
                Poll::Ready(Some(Err(LiveError::Closed { reason })))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The next record, waiting for it (frames of unknown messages and undecodable
    /// payloads are skipped and counted); `None` once the stream has ended.
    pub async fn next_record(&mut self) -> Option<Result<Record, LiveError>> {
        std::future::poll_fn(|cx| self.poll_next_record(Some(cx))).await
    }

    /// The next record if one is waiting, without waiting (see
    /// [`try_next_frame`](Self::try_next_frame)).
    ///
    /// # Errors
    /// As [`try_next_frame`](Self::try_next_frame).
    pub fn try_next_record(&mut self) -> Result<Option<Record>, LiveError> {
        match self.poll_next_record(None) {
            Poll::Ready(Some(Ok(record))) => Ok(Some(record)),
            Poll::Ready(Some(Err(e))) => Err(e),
            Poll::Ready(None) | Poll::Pending => Ok(None),
        }
    }

    fn poll_next_record(
        &mut self,
        mut cx: Option<&mut Context<'_>>,
    ) -> Poll<Option<Result<Record, LiveError>>> {
        loop {
            let frame = match self.poll_next_frame(cx.as_deref_mut()) {
                Poll::Ready(Some(Ok(frame))) => frame,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            };
            match frame.decode() {
                Ok(record) => {
                    self.stats.records += 1;
                    return Poll::Ready(Some(Ok(record)));
                }
                Err(DecodeError::Unknown { .. }) => self.stats.unknown += 1,
                Err(e) => {
                    self.stats.undecodable += 1;
                    tracing::debug!(source = %self.describe, error = %e, "undecodable log frame skipped");
                }
            }
        }
    }

    /// Waits up to `wait` for the first frame, then takes the frames waiting (at most
    /// `max_frames`) as rows of `tables` (decoded straight into them: no record is
    /// made), for consumers that take batches (a plot, a dataframe). Call
    /// [`Tables::finish`](svc_logs::tables::Tables::finish) to close the batches being
    /// built, then take them with
    /// [`Tables::next_batch`](svc_logs::tables::Tables::next_batch); `tables` keeps the
    /// unit's clock and UTC from one call to the next.
    ///
    /// # Errors
    /// [`LiveError::Closed`] once the source has ended, after the frames before it
    /// were returned. Dropped frames are not an error here: they are counted in
    /// [`Filled::dropped`].
    pub async fn fill(
        &mut self,
        tables: &mut svc_logs::tables::Tables,
        max_frames: usize,
        wait: Duration,
    ) -> Result<Filled, LiveError> {
        if let Some(end) = self.ended.take() {
            self.ended = Some(end.clone());
            return match end {
                Some(reason) => Err(LiveError::Closed { reason }),
                None => Ok(Filled {
                    ended: true,
                    ..Filled::default()
                }),
            };
        }
        let slot = Arc::clone(&self.slot);
        let ready = tokio::time::timeout(wait, std::future::poll_fn(|cx| slot.poll_ready(cx)));
        if ready.await.is_err() {
            return Ok(Filled::default());
        }
        let mut taken = Vec::with_capacity(max_frames.clamp(1, 65_536));
        let ended = self.slot.take_many(&mut taken, max_frames.max(1));
        let mut filled = Filled::default();
        let mut end_reason = None;
        for item in taken {
            match item {
                Taken::Frame(frame) => {
                    filled.frames += 1;
                    match frame.kind() {
                        Some(kind) => match tables.push_payload(kind, frame.payload()) {
                            Ok(()) => filled.records += 1,
                            Err(_) => self.stats.undecodable += 1,
                        },
                        None => self.stats.unknown += 1,
                    }
                }
                Taken::Gap(frames) => filled.dropped += frames,
                Taken::End(reason) => end_reason = Some(reason),
            }
        }
        self.stats.frames += filled.frames;
        self.stats.records += filled.records;
        if let Err(e) = tables.take_error() {
            return Err(LiveError::Closed {
                reason: format!("{}: building the tables failed: {e}", self.describe),
            });
        }
        if ended {
            filled.ended = end_reason.is_none();
            self.ended = Some(end_reason);
        }
        Ok(filled)
    }

    /// Listens on the UDP address `bind` (e.g. `0.0.0.0:5600`, or port 0 for any: see
    /// [`local_addr`](Self::local_addr)) for the frames a unit's Ethernet output sends
    /// (each datagram carries whole frames).
    ///
    /// # Errors
    /// The bind error, naming the address.
    pub async fn udp(bind: &str, subscribe: Subscribe) -> Result<LogStream, LiveError> {
        let socket = tokio::net::UdpSocket::bind(bind)
            .await
            .map_err(|e| LiveError::Closed {
                reason: format!("udp {bind}: {e}"),
            })?;
        let local = socket.local_addr().ok();
        let describe = format!(
            "udp {}",
            local.map_or_else(|| bind.to_owned(), |a| a.to_string())
        );
        let slot = Slot::new(subscribe);
        let feed = Arc::clone(&slot);
        let name = describe.clone();
        let task = tokio::spawn(async move {
            let mut buffer = vec![0u8; 65_536];
            let mut decoder = Decoder::new();
            loop {
                match socket.recv_from(&mut buffer).await {
                    Ok((n, _from)) => {
                        decoder.push(&buffer[..n]);
                        // A datagram holds whole frames: nothing is left for the next.
                        decoder.resync();
                        while let Some(message) = decoder.next_message() {
                            if !feed.offer(&Arc::new(message)) {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        feed.close(&format!("{name}: {e}"));
                        return;
                    }
                }
            }
        });
        let mut stream = LogStream::new(slot, describe);
        stream.task = Some(task.abort_handle());
        stream.local_addr = local;
        Ok(stream)
    }

    /// Reads the log file at `path` from its start, then as it grows (a session the
    /// unit or [`svc device stream --record`] is writing). With `idle_end`, the stream
    /// ends (`None`, no error) once the file has not grown for that long; without, it
    /// waits for more until dropped. A file truncated or removed while followed ends
    /// the stream with [`LiveError::Closed`].
    ///
    /// # Errors
    /// The file cannot be opened.
    pub async fn follow(
        path: impl AsRef<Path>,
        subscribe: Subscribe,
        idle_end: Option<Duration>,
    ) -> Result<LogStream, LiveError> {
        let path: PathBuf = path.as_ref().to_path_buf();
        let describe = format!("file {}", path.display());
        let file = tokio::fs::File::open(&path)
            .await
            .map_err(|e| LiveError::Closed {
                reason: format!("{describe}: {e}"),
            })?;
        let slot = Slot::new(subscribe);
        let feed = Arc::clone(&slot);
        let name = describe.clone();
        let task = tokio::spawn(follow_file(file, path, feed, name, idle_end));
        let mut stream = LogStream::new(slot, describe);
        stream.task = Some(task.abort_handle());
        Ok(stream)
    }
}

/// How often a followed file is looked at again once its end was reached.
const FOLLOW_POLL: Duration = Duration::from_millis(20);

async fn follow_file(
    mut file: tokio::fs::File,
    path: PathBuf,
    feed: Arc<Slot>,
    name: String,
    idle_end: Option<Duration>,
) {
    use tokio::io::AsyncReadExt as _;
    let mut buffer = vec![0u8; 256 * 1024];
    let mut decoder = Decoder::new();
    let mut position: u64 = 0;
    let mut idle_since = tokio::time::Instant::now();
    loop {
        let n = match file.read(&mut buffer).await {
            Ok(n) => n,
            Err(e) => {
                feed.close(&format!("{name}: {e}"));
                return;
            }
        };
        if n > 0 {
            position += n as u64;
            idle_since = tokio::time::Instant::now();
            decoder.push(&buffer[..n]);
            while let Some(message) = decoder.next_message() {
                if !feed.offer_waiting(&Arc::new(message)).await {
                    return;
                }
            }
            continue;
        }
        if feed.is_gone() {
            return;
        }
        match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.len() < position => {
                feed.close(&format!(
                    "{name}: truncated while followed ({} bytes, {position} read)",
                    meta.len()
                ));
                return;
            }
            Ok(_) => {}
            Err(e) => {
                feed.close(&format!("{name}: {e}"));
                return;
            }
        }
        if idle_end.is_some_and(|idle| idle_since.elapsed() >= idle) {
            // The end of a finished file: a frame cut at its end is counted as
            // truncated by the decoder, and the stream ends without an error.
            decoder.resync();
            while let Some(message) = decoder.next_message() {
                if !feed.offer_waiting(&Arc::new(message)).await {
                    return;
                }
            }
            feed.close("");
            return;
        }
        tokio::time::sleep(FOLLOW_POLL).await;
    }
}

impl futures::Stream for LogStream {
    type Item = Result<Record, LiveError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_next_record(Some(cx))
    }
}

// ---------------------------------------------------------------------------------
// Ready to log
// ---------------------------------------------------------------------------------

use svc_logs::records::{GnssPosType, SolutionMode, UtcStatus, solution_mode};

/// How good a GNSS position is, lowest first (from the position type of `gps1Pos` /
/// `gps2Pos`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FixLevel {
    /// A single point position.
    Single,
    /// A differential one: pseudorange differential, SBAS, OmniSTAR, PPP float.
    Differential,
    /// RTK float, PPP with fixed ambiguities.
    RtkFloat,
    /// RTK fixed, or a fixed location.
    RtkFixed,
}

impl FixLevel {
    /// Every level, lowest first.
    pub const ALL: [FixLevel; 4] = [
        FixLevel::Single,
        FixLevel::Differential,
        FixLevel::RtkFloat,
        FixLevel::RtkFixed,
    ];

    /// The level of a position type; `None` for no solution.
    #[must_use]
    pub fn of(pos_type: GnssPosType) -> Option<FixLevel> {
        match pos_type {
            GnssPosType::NoSolution | GnssPosType::Unknown => None,
            GnssPosType::Single => Some(FixLevel::Single),
            GnssPosType::PsrDiff
            | GnssPosType::Sbas
            | GnssPosType::Omnistar
            | GnssPosType::PppFloat => Some(FixLevel::Differential),
            GnssPosType::RtkFloat | GnssPosType::PppInt => Some(FixLevel::RtkFloat),
            GnssPosType::RtkInt | GnssPosType::Fixed => Some(FixLevel::RtkFixed),
            _ => None,
        }
    }

    /// Its name: `single`, `differential`, `rtkFloat`, `rtkFixed`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FixLevel::Single => "single",
            FixLevel::Differential => "differential",
            FixLevel::RtkFloat => "rtkFloat",
            FixLevel::RtkFixed => "rtkFixed",
        }
    }

    /// The level of this [name](Self::name).
    #[must_use]
    pub fn from_name(name: &str) -> Option<FixLevel> {
        FixLevel::ALL.into_iter().find(|level| level.name() == name)
    }
}

impl std::fmt::Display for FixLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What "ready to log" asks of the unit's output logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadyCriteria {
    /// A GNSS position at least this good (`gps1Pos` or `gps2Pos`); `None`: no GNSS
    /// condition.
    pub min_fix: Option<FixLevel>,
    /// The navigation filter aligned: solution mode "navigation position" (attitude,
    /// velocity and position) in `ekfNav`, `ekfEuler` or `ekfQuat`.
    pub aligned: bool,
    /// UTC valid: `utcTime` with UTC known, leap seconds included.
    pub utc: bool,
}

impl Default for ReadyCriteria {
    /// A GNSS fix of any kind, the filter aligned, UTC valid.
    fn default() -> Self {
        Self {
            min_fix: Some(FixLevel::Single),
            aligned: true,
            utc: true,
        }
    }
}

impl ReadyCriteria {
    /// The messages that tell whether these criteria are met: one of them must be
    /// enabled on the port for each condition.
    #[must_use]
    pub fn messages(&self) -> Vec<MessageKind> {
        let mut names = Vec::new();
        if self.min_fix.is_some() {
            names.extend(["gps1Pos", "gps2Pos"]);
        }
        if self.aligned {
            names.extend(["ekfNav", "ekfEuler", "ekfQuat"]);
        }
        if self.utc {
            names.push("utcTime");
        }
        names
            .into_iter()
            .filter_map(MessageKind::from_name)
            .collect()
    }
}

/// What a unit's output logs last said about its readiness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readiness {
    /// The best GNSS position of the last `gps1Pos` and `gps2Pos`: `Some(None)` when
    /// they have no solution, `None` when none was received.
    pub fix: Option<Option<FixLevel>>,
    /// The filter's mode in the last `ekfNav`, `ekfEuler` or `ekfQuat` (`None`: none
    /// received, or a mode this SDK does not know).
    pub filter: Option<SolutionMode>,
    /// Whether the last `utcTime` had a valid UTC (`None`: none received).
    pub utc_valid: Option<bool>,
    /// `gps1Pos` and `gps2Pos` last seen, to keep the better of the two.
    gnss: [Option<Option<FixLevel>>; 2],
}

impl Readiness {
    /// Takes what `record` says (other messages change nothing).
    pub fn update(&mut self, record: &Record) {
        match record {
            Record::Gps1Pos(pos) => self.gnss[0] = Some(pos.pos_type().and_then(FixLevel::of)),
            Record::Gps2Pos(pos) => self.gnss[1] = Some(pos.pos_type().and_then(FixLevel::of)),
            Record::EkfNav(nav) => self.filter = solution_mode(nav.status),
            Record::EkfEuler(euler) => self.filter = solution_mode(euler.status),
            Record::EkfQuat(quat) => self.filter = solution_mode(quat.status),
            Record::UtcTime(utc) => {
                self.utc_valid = Some(utc.utc_status() == Some(UtcStatus::Initialized));
            }
            _ => return,
        }
        self.fix = match self.gnss {
            [None, None] => None,
            [a, b] => Some(a.flatten().max(b.flatten())),
        };
    }

    /// What `criteria` ask that is not there, in words (empty: ready).
    #[must_use]
    pub fn missing(&self, criteria: &ReadyCriteria) -> Vec<String> {
        let mut missing = Vec::new();
        if let Some(min) = criteria.min_fix {
            match self.fix {
                None => missing.push(format!(
                    "a GNSS fix of at least {min}: no gps1Pos or gps2Pos received (enable one on the port)"
                )),
                Some(None) => missing.push(format!("a GNSS fix of at least {min}: no solution")),
                Some(Some(fix)) if fix < min => {
                    missing.push(format!("a GNSS fix of at least {min}: {fix}"));
                }
                Some(Some(_)) => {}
            }
        }
        if criteria.aligned {
            match self.filter {
                Some(SolutionMode::NavPosition) => {}
                Some(mode) => missing.push(format!("the filter aligned: mode {mode:?}")),
                None => missing.push(
                    "the filter aligned: no ekfNav, ekfEuler or ekfQuat received (enable one on the port)"
                        .to_owned(),
                ),
            }
        }
        if criteria.utc {
            match self.utc_valid {
                Some(true) => {}
                Some(false) => missing.push("UTC valid: not yet".to_owned()),
                None => missing
                    .push("UTC valid: no utcTime received (enable it on the port)".to_owned()),
            }
        }
        missing
    }
}

/// The unit was not ready in time ([`wait_ready`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not ready to log after {} ms: {}", .waited.as_millis(), .missing.join("; "))]
pub struct NotReady {
    /// How long it was waited for.
    pub waited: Duration,
    /// What was missing at the end, in words.
    pub missing: Vec<String>,
    /// What the stream last said.
    pub readiness: Readiness,
    /// The stream ended before (its reason), instead of the time running out.
    pub closed: Option<String>,
}

/// Reads `stream` until its records meet `criteria` (see [`Readiness`]), at most for
/// `timeout`. Frames dropped on the way change nothing: only the last state counts.
///
/// # Errors
/// [`NotReady`], saying what was missing, when the time ran out or the stream ended.
pub async fn wait_ready(
    stream: &mut LogStream,
    criteria: &ReadyCriteria,
    timeout: Duration,
) -> Result<Readiness, NotReady> {
    let started = tokio::time::Instant::now();
    let deadline = started + timeout;
    let mut readiness = Readiness::default();
    let mut closed = None;
    loop {
        if readiness.missing(criteria).is_empty() {
            return Ok(readiness);
        }
        match tokio::time::timeout_at(deadline, stream.next_record()).await {
            Ok(Some(Ok(record))) => readiness.update(&record),
            Ok(Some(Err(LiveError::Dropped { .. }))) => {}
            Ok(Some(Err(LiveError::Closed { reason }))) => {
                closed = Some(reason);
                break;
            }
            Ok(None) | Err(_) => break,
        }
    }
    Err(NotReady {
        waited: started.elapsed(),
        missing: readiness.missing(criteria),
        readiness,
        closed,
    })
}
