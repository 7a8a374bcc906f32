//! The streaming decoder: bytes in, whole messages out.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use super::frame::{Message, MessageRef, Parsed, parse, parse_page};
use super::{
    FRAME_OVERHEAD, HEADER_LEN, LARGE_FRAME_BIT, MAX_FRAME_LEN, MAX_MESSAGE_LEN, MAX_PAGE_DATA,
    SYNC1, SYNC2, SerialError,
};

/// Most bytes reserved ahead for a large message, whatever its page count says.
const MAX_RESERVE: usize = 1 << 20;

/// Counters of a [`Decoder`], from its creation.
///
/// Every byte pushed is, at any time, in exactly one of: a valid frame
/// ([`frame_bytes`](Self::frame_bytes)), the skipped bytes
/// ([`skipped_bytes`](Self::skipped_bytes)), or the decoder's buffer
/// ([`Decoder::buffered_len`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DecoderStats {
    /// Valid frames (sync, length, CRC and ETX good), standard or large.
    pub frames: u64,
    /// Bytes of those frames.
    pub frame_bytes: u64,
    /// Whole messages produced.
    pub messages: u64,
    /// Bytes that belong to no valid frame: garbage between frames and the bytes of
    /// invalid frames.
    pub skipped_bytes: u64,
    /// Frame candidates refused because of their CRC.
    pub bad_crc: u64,
    /// Frame candidates refused because the byte after the CRC was not `0x33`.
    pub bad_etx: u64,
    /// Frame candidates refused because their length field was over 4086.
    pub bad_length: u64,
    /// Incomplete frames given up by [`Decoder::resync`] or
    /// [`Decoder::abandon_partial_frame`] (an inter-byte timeout).
    pub truncated: u64,
    /// Valid large-frame pages thrown away: out of order, of another transfer, message
    /// or page count than the message being reassembled, not starting a message (index
    /// not 0, or no message being reassembled), shorter than a page header, or making
    /// the message longer than the decoder's limit.
    pub page_errors: u64,
    /// Large messages dropped before their last page (by a page error, a new message
    /// starting, or [`Decoder::resync`]).
    pub dropped_messages: u64,
}

impl DecoderStats {
    /// Invalid frame candidates: `bad_crc + bad_etx + bad_length + truncated`.
    #[must_use]
    pub fn bad_frames(&self) -> u64 {
        self.bad_crc + self.bad_etx + self.bad_length + self.truncated
    }
}

/// Streaming decoder of sbgECom frames: [`push`](Self::push) the bytes read from the
/// link, in chunks of any size, then take the whole messages with
/// [`next_message`](Self::next_message) or [`messages`](Self::messages).
///
/// - It looks for the sync bytes `0xFF 0x5A`, and skips (and counts, see
///   [`stats`](Self::stats)) garbage between frames and invalid frames: a length over
///   4086 (refused as soon as the 6-byte header is in, so a bogus length never makes
///   it wait), a bad ETX, a bad CRC. After an invalid frame it looks for the next sync
///   from the byte after the refused sync, so a good frame right behind (or inside)
///   a bad one is still found.
/// - It reassembles large frames: pages 0, 1, ... count-1 of one id, class, transfer
///   id and count, in order. A page that does not continue the message being
///   reassembled drops it (counted in `dropped_messages`); that page then starts a new
///   message if its index is 0, else it is thrown away too (`page_errors`). Pages need
///   not be full on reception. Standard frames in between are delivered and do not
///   disturb the reassembly.
/// - Its buffer of raw bytes holds at most one incomplete frame (under 4095 bytes);
///   a message being reassembled is bounded by
///   [`with_max_message_len`](Self::with_max_message_len).
/// - A frame whose header is corrupt but announces a length in range would otherwise
///   hold every following frame until its announced length has arrived. With an
///   [inter-byte timeout](Self::with_inter_byte_timeout), an incomplete frame whose
///   last byte came longer ago than the timeout is abandoned
///   ([`abandon_partial_frame`](Self::abandon_partial_frame)) and the next sync is
///   searched at once in the bytes held behind its start: the transport pushes with
///   [`push_at`](Self::push_at) and, while the line is silent, wakes up at
///   [`partial_frame_deadline`](Self::partial_frame_deadline) to call
///   [`expire_partial_frame`](Self::expire_partial_frame).
///
/// Pure and synchronous: the transport reads, pushes, and pops (and tells the time).
///
/// ```
/// use svc_protocol::serial::{Decoder, RestRequest};
///
/// let bytes = RestRequest::get("/api/v1/info", "").encode(0);
/// let mut decoder = Decoder::new();
/// decoder.push(b"noise");
/// decoder.push(&bytes[..5]);
/// assert!(decoder.next_message().is_none());
/// decoder.push(&bytes[5..]);
/// let message = decoder.next_message().expect("a whole message");
/// assert_eq!(RestRequest::decode(&message)?, RestRequest::get("/api/v1/info", ""));
/// assert_eq!(decoder.stats().skipped_bytes, 5);
/// # Ok::<(), svc_protocol::serial::SerialError>(())
/// ```
#[derive(Clone)]
pub struct Decoder {
    /// Raw bytes of an incomplete frame (starting at a sync, or a lone trailing 0xFF).
    pending: Vec<u8>,
    /// Whole messages not yet taken.
    ready: VecDeque<Message>,
    /// Byte offset (in everything pushed) of the first frame of each message of `ready`.
    ready_offsets: VecDeque<u64>,
    /// The large message being reassembled.
    partial: Option<Partial>,
    stats: DecoderStats,
    max_message_len: usize,
    /// Silence after which an incomplete frame is abandoned; `None`: never.
    inter_byte_timeout: Option<Duration>,
    /// When the last byte was pushed with [`Decoder::push_at`].
    last_byte_at: Option<Instant>,
    /// Where bytes were skipped and frames refused, when asked for
    /// ([`Decoder::set_fault_log`]).
    fault_log: Option<FaultLog>,
}

/// What [`Decoder::set_fault_log`] records.
#[derive(Clone, Default)]
struct FaultLog {
    /// Skipped spans (offset, length), adjacent ones merged.
    skipped: Vec<(u64, u64)>,
    /// Refused frame candidates (offset of their sync, why).
    refused: Vec<(u64, SerialError)>,
}

/// A large message being reassembled.
#[derive(Clone)]
struct Partial {
    id: u8,
    class: u8,
    transfer_id: u8,
    count: u16,
    next: u16,
    data: Vec<u8>,
    /// Byte offset of its first page.
    offset: u64,
}

/// Shows lengths and counters, never the bytes held (they may hold a token).
impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("buffered_len", &self.pending.len())
            .field("ready_messages", &self.ready.len())
            .field("partial_message_len", &self.partial_message_len())
            .field("max_message_len", &self.max_message_len)
            .field("inter_byte_timeout", &self.inter_byte_timeout)
            .field("stats", &self.stats)
            .finish()
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder with an empty buffer, accepting messages up to [`MAX_MESSAGE_LEN`]
    /// bytes (the protocol's limit: 65535 full pages).
    #[must_use]
    pub fn new() -> Decoder {
        Decoder::with_max_message_len(MAX_MESSAGE_LEN)
    }

    /// A decoder that drops a large message as soon as its data exceed `max` bytes
    /// (counted in `page_errors` and `dropped_messages`). Standard frames (at most 4086
    /// bytes) are always delivered.
    #[must_use]
    pub fn with_max_message_len(max: usize) -> Decoder {
        Decoder {
            pending: Vec::new(),
            ready: VecDeque::new(),
            ready_offsets: VecDeque::new(),
            partial: None,
            stats: DecoderStats::default(),
            max_message_len: max,
            inter_byte_timeout: None,
            last_byte_at: None,
            fault_log: None,
        }
    }

    /// The same decoder, abandoning an incomplete frame once the line has been silent
    /// for longer than `gap` (see [`push_at`](Self::push_at) and
    /// [`expire_partial_frame`](Self::expire_partial_frame)). A serial line sends the
    /// bytes of a frame back to back: a gap inside a frame means it was cut or its
    /// header was corrupt.
    #[must_use]
    pub fn with_inter_byte_timeout(mut self, gap: Duration) -> Decoder {
        self.inter_byte_timeout = Some(gap);
        self
    }

    /// Sets (or, with `None`, removes) the inter-byte timeout.
    pub fn set_inter_byte_timeout(&mut self, gap: Option<Duration>) {
        self.inter_byte_timeout = gap;
    }

    /// The inter-byte timeout, if one is set.
    #[must_use]
    pub fn inter_byte_timeout(&self) -> Option<Duration> {
        self.inter_byte_timeout
    }

    /// As [`push`](Self::push), for bytes read at `now`: an incomplete frame held since
    /// a byte pushed longer than the inter-byte timeout before `now` is abandoned first
    /// ([`abandon_partial_frame`](Self::abandon_partial_frame)), so that the new bytes
    /// are searched for a sync of their own instead of completing a dead frame.
    pub fn push_at(&mut self, bytes: &[u8], now: Instant) {
        self.expire_partial_frame(now);
        self.push(bytes);
        if !bytes.is_empty() {
            self.last_byte_at = Some(now);
        }
    }

    /// When the incomplete frame held now is to be abandoned if no byte comes before:
    /// the last [`push_at`](Self::push_at) plus the inter-byte timeout. `None` when
    /// nothing is held, no timeout is set or the bytes were pushed without a time.
    #[must_use]
    pub fn partial_frame_deadline(&self) -> Option<Instant> {
        if self.pending.is_empty() {
            return None;
        }
        let gap = self.inter_byte_timeout?;
        self.last_byte_at?.checked_add(gap)
    }

    /// Abandons the incomplete frame held if its deadline
    /// ([`partial_frame_deadline`](Self::partial_frame_deadline)) has passed at `now`;
    /// whether it did. Frames found behind its start are then ready.
    pub fn expire_partial_frame(&mut self, now: Instant) -> bool {
        match self.partial_frame_deadline() {
            Some(deadline) if now > deadline => {
                self.abandon_partial_frame();
                true
            }
            _ => false,
        }
    }

    /// Gives up the incomplete frame held (counted in `truncated`), then searches the
    /// bytes after its sync for the next frame at once: whole frames among them are
    /// decoded, the start of another one is held. A large message being reassembled is
    /// kept (its next page may still come: see [`resync`](Self::resync) to drop it too).
    /// Whether something was held.
    pub fn abandon_partial_frame(&mut self) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        let held = std::mem::take(&mut self.pending);
        if held.len() >= 2 {
            self.stats.truncated += 1;
            if let Some(log) = self.fault_log.as_mut() {
                let needed = match held.get(4..6) {
                    Some(&[lo, hi]) => usize::from(u16::from_le_bytes([lo, hi])) + FRAME_OVERHEAD,
                    _ => HEADER_LEN,
                };
                let at = self.stats.frame_bytes + self.stats.skipped_bytes;
                log.refused.push((
                    at,
                    SerialError::Truncated {
                        needed,
                        found: held.len(),
                    },
                ));
            }
        }
        // The refused sync byte; the rest is scanned again.
        self.skip(1);
        let rest = &held[1..];
        let consumed = self.queued(|decoder, queue| decoder.scan(rest, queue));
        self.pending = rest[consumed..].to_vec();
        true
    }

    /// Feeds bytes read from the link (any chunk size, even empty). Frames completed
    /// by them are decoded at once; their messages wait for
    /// [`next_message`](Self::next_message). Never fails: invalid bytes are skipped
    /// and counted.
    pub fn push(&mut self, bytes: &[u8]) {
        self.queued(|decoder, queue| decoder.feed(bytes, queue));
    }

    /// As [`push`](Self::push), handing each message the bytes complete to `take` at
    /// once, with the byte offset of its (first) frame, instead of queueing it: the
    /// message's data are lent from the decoder's input (a standard frame's straight
    /// from `bytes`), so nothing is copied or allocated per message. Messages still
    /// queued by an earlier [`push`](Self::push) are handed first, so the order is
    /// the order on the wire.
    ///
    /// ```
    /// use svc_protocol::serial::{Decoder, encode_message};
    ///
    /// let mut bytes = encode_message(0x02, 0x00, b"ab", 0);
    /// bytes.extend(encode_message(0x03, 0x00, b"cde", 0));
    /// let mut decoder = Decoder::new();
    /// let mut seen = Vec::new();
    /// decoder.push_with(&bytes, |offset, message| seen.push((offset, message.id, message.data.len())));
    /// assert_eq!(seen, [(0, 0x02, 2), (11, 0x03, 3)]);
    /// ```
    pub fn push_with<F>(&mut self, bytes: &[u8], mut take: F)
    where
        F: FnMut(u64, MessageRef<'_>),
    {
        while let Some((offset, message)) = self.next_message_with_offset() {
            take(offset, message.as_message_ref());
        }
        self.feed(bytes, &mut Lend(&mut take));
    }

    /// Runs `f` with a sink that queues the messages (for
    /// [`next_message`](Self::next_message)).
    fn queued<R>(&mut self, f: impl FnOnce(&mut Decoder, &mut Queue<'_>) -> R) -> R {
        let mut ready = std::mem::take(&mut self.ready);
        let mut offsets = std::mem::take(&mut self.ready_offsets);
        let result = f(
            self,
            &mut Queue {
                ready: &mut ready,
                offsets: &mut offsets,
            },
        );
        self.ready = ready;
        self.ready_offsets = offsets;
        result
    }

    /// The framing of [`push`](Self::push) and [`push_with`](Self::push_with): whole
    /// messages go to `sink`.
    fn feed<S: Sink>(&mut self, bytes: &[u8], sink: &mut S) {
        let mut input = bytes;
        let mut held = std::mem::take(&mut self.pending);
        // Complete the held frame from the input, a bounded piece at a time, until
        // nothing from before this call is held.
        while !held.is_empty() && !input.is_empty() {
            let old = held.len();
            let take = input.len().min(MAX_FRAME_LEN);
            held.extend_from_slice(&input[..take]);
            let consumed = self.scan(&held, sink);
            if consumed >= old {
                // Everything held before was used: go on from the input itself.
                held.clear();
                input = &input[consumed - old..];
            } else {
                held.drain(..consumed);
                input = &input[take..];
            }
        }
        if held.is_empty() {
            let consumed = self.scan(input, sink);
            held.extend_from_slice(&input[consumed..]);
        }
        self.pending = held;
    }

    /// The next whole message, oldest first; `None` until more bytes are pushed.
    pub fn next_message(&mut self) -> Option<Message> {
        self.ready_offsets.pop_front();
        self.ready.pop_front()
    }

    /// As [`next_message`](Self::next_message), with the byte offset of the message's
    /// (first) frame in everything pushed since the decoder was created.
    pub fn next_message_with_offset(&mut self) -> Option<(u64, Message)> {
        let message = self.ready.pop_front()?;
        Some((self.ready_offsets.pop_front().unwrap_or(0), message))
    }

    /// Starts (`true`) or stops recording where bytes are skipped and which frame
    /// candidates are refused, for [`take_skipped_spans`](Self::take_skipped_spans)
    /// and [`take_refused_frames`](Self::take_refused_frames). Off by default. What is
    /// recorded grows with the faults until taken: take it after each push. Stopping
    /// drops what was not taken.
    pub fn set_fault_log(&mut self, on: bool) {
        match (on, self.fault_log.is_some()) {
            (true, false) => self.fault_log = Some(FaultLog::default()),
            (false, true) => self.fault_log = None,
            _ => {}
        }
    }

    /// The spans of skipped bytes recorded since the last call (see
    /// [`set_fault_log`](Self::set_fault_log)), oldest first, as (offset in
    /// everything pushed, length); adjacent spans are merged. Their lengths add up to
    /// the growth of `skipped_bytes` while recording.
    pub fn take_skipped_spans(&mut self) -> Vec<(u64, u64)> {
        self.fault_log
            .as_mut()
            .map(|log| std::mem::take(&mut log.skipped))
            .unwrap_or_default()
    }

    /// The frame candidates refused since the last call (see
    /// [`set_fault_log`](Self::set_fault_log)), oldest first, as (offset of their sync
    /// in everything pushed, why): [`SerialError::BadCrc`], [`SerialError::BadEtx`],
    /// [`SerialError::BadLength`], or [`SerialError::Truncated`] for an incomplete
    /// frame given up.
    pub fn take_refused_frames(&mut self) -> Vec<(u64, SerialError)> {
        self.fault_log
            .as_mut()
            .map(|log| std::mem::take(&mut log.refused))
            .unwrap_or_default()
    }

    /// Counts `n` bytes skipped at the current position (recording the span if asked).
    fn skip(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        let at = self.stats.frame_bytes + self.stats.skipped_bytes;
        if let Some(log) = self.fault_log.as_mut() {
            match log.skipped.last_mut() {
                Some((start, len)) if *start + *len == at => *len += n,
                _ => log.skipped.push((at, n)),
            }
        }
        self.stats.skipped_bytes += n;
    }

    /// An iterator over the whole messages decoded so far (taking them).
    pub fn messages(&mut self) -> Messages<'_> {
        Messages { decoder: self }
    }

    /// How many whole messages wait for [`next_message`](Self::next_message).
    #[must_use]
    pub fn ready_messages(&self) -> usize {
        self.ready.len()
    }

    /// How many raw bytes are held: the start of a frame whose end has not been pushed
    /// yet (less than 4095 bytes).
    #[must_use]
    pub fn buffered_len(&self) -> usize {
        self.pending.len()
    }

    /// The bytes received so far of messages of `class` not yet whole: the incomplete
    /// frame held (once its header is in) and the large message being reassembled, when
    /// they are of that class. A transport waiting for one kind of message (a REST
    /// answer) sees it progress, whatever else the line carries (a stream of output
    /// logs).
    #[must_use]
    pub fn bytes_in_progress(&self, class: u8) -> usize {
        let held = match self.pending.get(3) {
            Some(&c) if c & !LARGE_FRAME_BIT == class => self.pending.len(),
            _ => 0,
        };
        let partial = match &self.partial {
            Some(p) if p.class & !LARGE_FRAME_BIT == class => p.data.len(),
            _ => 0,
        };
        held + partial
    }

    /// How many data bytes of a large message being reassembled are held, if one is.
    #[must_use]
    pub fn partial_message_len(&self) -> Option<usize> {
        self.partial.as_ref().map(|p| p.data.len())
    }

    /// The counters: frames and messages decoded, bytes skipped, frames refused.
    #[must_use]
    pub fn stats(&self) -> DecoderStats {
        self.stats
    }

    /// Gives up on what is in progress, for a transport whose read timed out: the held
    /// incomplete frame (counted in `truncated`; frames already pushed behind its start
    /// are then decoded) and the large message being reassembled (counted in
    /// `dropped_messages`). Messages already decoded stay ready.
    pub fn resync(&mut self) {
        // The frames held behind the abandoned one first: a page among them may continue
        // (or complete) the large message, or start one, which is then given up too.
        while self.abandon_partial_frame() {}
        if self.partial.take().is_some() {
            self.stats.dropped_messages += 1;
        }
    }

    /// Decodes every whole frame in `data`; returns how many bytes were used (the
    /// rest, the start of a frame or a lone trailing 0xFF, must be kept). Only the
    /// bytes used are counted.
    fn scan<S: Sink>(&mut self, data: &[u8], sink: &mut S) -> usize {
        let mut pos = 0;
        loop {
            let rest = &data[pos..];
            let Some(offset) = find_sync(rest) else {
                let keep = usize::from(rest.last() == Some(&SYNC1));
                let skipped = rest.len() - keep;
                self.skip(skipped as u64);
                return pos + skipped;
            };
            self.skip(offset as u64);
            pos += offset;
            match parse(&data[pos..]) {
                Parsed::Incomplete { .. } => return pos,
                Parsed::Invalid(error) => {
                    match error {
                        SerialError::BadLength { .. } => self.stats.bad_length += 1,
                        SerialError::BadEtx { .. } => self.stats.bad_etx += 1,
                        _ => self.stats.bad_crc += 1,
                    }
                    if let Some(log) = self.fault_log.as_mut() {
                        let at = self.stats.frame_bytes + self.stats.skipped_bytes;
                        log.refused.push((at, error));
                    }
                    self.skip(1);
                    pos += 1;
                }
                Parsed::Frame { id, class, len } => {
                    let at = self.stats.frame_bytes + self.stats.skipped_bytes;
                    self.stats.frames += 1;
                    self.stats.frame_bytes += len as u64;
                    self.on_frame(id, class, &data[pos + HEADER_LEN..pos + len - 3], at, sink);
                    pos += len;
                }
            }
        }
    }

    fn on_frame<S: Sink>(&mut self, id: u8, class: u8, data: &[u8], at: u64, sink: &mut S) {
        if class & LARGE_FRAME_BIT == 0 {
            self.stats.messages += 1;
            sink.lent(at, MessageRef { id, class, data });
            return;
        }
        let class = class & !LARGE_FRAME_BIT;
        let Some(page) = parse_page(data) else {
            self.stats.page_errors += 1;
            return;
        };
        let continues = self.partial.as_ref().is_some_and(|p| {
            p.id == id
                && p.class == class
                && p.transfer_id == page.transfer_id
                && p.count == page.count
                && p.next == page.index
        });
        if !continues {
            if self.partial.take().is_some() {
                self.stats.dropped_messages += 1;
            }
            if page.index != 0 || page.count == 0 {
                self.stats.page_errors += 1;
                return;
            }
            let expected = usize::from(page.count) * MAX_PAGE_DATA;
            self.partial = Some(Partial {
                id,
                class,
                transfer_id: page.transfer_id,
                count: page.count,
                next: 0,
                offset: at,
                data: Vec::with_capacity(expected.min(self.max_message_len).min(MAX_RESERVE)),
            });
        }
        let Some(partial) = self.partial.as_mut() else {
            return;
        };
        if partial.data.len() + page.data.len() > self.max_message_len {
            self.partial = None;
            self.stats.page_errors += 1;
            self.stats.dropped_messages += 1;
            return;
        }
        partial.data.extend_from_slice(page.data);
        partial.next += 1;
        if partial.next == partial.count
            && let Some(done) = self.partial.take()
        {
            self.stats.messages += 1;
            sink.owned(
                done.offset,
                Message {
                    id: done.id,
                    class: done.class,
                    data: done.data,
                },
            );
        }
    }
}

/// Where the framing puts whole messages: a standard frame's message is lent from the
/// bytes scanned, a reassembled large message is owned.
trait Sink {
    fn lent(&mut self, at: u64, message: MessageRef<'_>);
    fn owned(&mut self, at: u64, message: Message);
}

/// The queue of [`Decoder::next_message`].
struct Queue<'q> {
    ready: &'q mut VecDeque<Message>,
    offsets: &'q mut VecDeque<u64>,
}

impl Sink for Queue<'_> {
    fn lent(&mut self, at: u64, message: MessageRef<'_>) {
        self.owned(at, message.to_message());
    }

    fn owned(&mut self, at: u64, message: Message) {
        self.ready.push_back(message);
        self.offsets.push_back(at);
    }
}

/// The function of [`Decoder::push_with`].
struct Lend<'f, F>(&'f mut F);

impl<F: FnMut(u64, MessageRef<'_>)> Sink for Lend<'_, F> {
    fn lent(&mut self, at: u64, message: MessageRef<'_>) {
        (self.0)(at, message);
    }

    fn owned(&mut self, at: u64, message: Message) {
        (self.0)(at, message.as_message_ref());
    }
}

/// Position of the first `0xFF 0x5A` in `bytes`.
fn find_sync(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(offset) = bytes[from..].iter().position(|&b| b == SYNC1) {
        let at = from + offset;
        match bytes.get(at + 1) {
            Some(&SYNC2) => return Some(at),
            Some(_) => from = at + 1,
            None => return None,
        }
    }
    None
}

/// Iterator over the messages a [`Decoder`] has decoded so far (see
/// [`Decoder::messages`]); it ends when none is left, and the decoder goes on taking
/// bytes afterwards.
#[derive(Debug)]
pub struct Messages<'a> {
    decoder: &'a mut Decoder,
}

impl Iterator for Messages<'_> {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        self.decoder.next_message()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.decoder.ready.len(), Some(self.decoder.ready.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Frame, MAX_PAYLOAD, encode_message};
    use super::*;

    fn check_invariant(decoder: &Decoder, pushed: usize) {
        let s = decoder.stats();
        assert_eq!(
            s.frame_bytes + s.skipped_bytes + decoder.buffered_len() as u64,
            pushed as u64,
            "{s:?}"
        );
    }

    #[test]
    fn offsets_and_fault_log() {
        let good = encode_message(1, 2, b"abc", 0);
        let mut bad = encode_message(3, 4, b"defg", 0);
        let crc_at = bad.len() - 3;
        bad[crc_at] ^= 0xff;
        let large = encode_message(5, 6, &[9; MAX_PAYLOAD + 1], 0);
        let mut stream = b"xy".to_vec();
        stream.extend_from_slice(&good);
        stream.extend_from_slice(&bad);
        stream.extend_from_slice(&large);
        stream.extend_from_slice(&good[..8]);
        let mut decoder = Decoder::new();
        decoder.set_fault_log(true);
        for chunk in stream.chunks(5) {
            decoder.push(chunk);
        }
        decoder.resync();
        let (at, message) = decoder.next_message_with_offset().unwrap();
        assert_eq!((at, message.data.as_slice()), (2, &b"abc"[..]));
        let (at, message) = decoder.next_message_with_offset().unwrap();
        assert_eq!(at as usize, 2 + good.len() + bad.len());
        assert_eq!(message.data.len(), MAX_PAYLOAD + 1);
        assert!(decoder.next_message_with_offset().is_none());
        let refused = decoder.take_refused_frames();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert_eq!(refused[0].0 as usize, 2 + good.len());
        assert!(matches!(refused[0].1, SerialError::BadCrc { .. }));
        let end = 2 + good.len() + bad.len() + large.len();
        assert_eq!(refused[1].0 as usize, end);
        assert_eq!(
            refused[1].1,
            SerialError::Truncated {
                needed: good.len(),
                found: 8
            }
        );
        let spans = decoder.take_skipped_spans();
        assert_eq!(
            spans,
            vec![
                (0, 2),
                ((2 + good.len()) as u64, bad.len() as u64),
                (end as u64, 8)
            ]
        );
        let total: u64 = spans.iter().map(|s| s.1).sum();
        assert_eq!(total, decoder.stats().skipped_bytes);
        assert!(decoder.take_skipped_spans().is_empty());
        check_invariant(&decoder, stream.len());
    }

    /// A stream of every case: garbage, good frames, a bad CRC, a large message whose
    /// pages have standard frames between them, a frame hidden inside a bad one.
    fn mixed_stream() -> Vec<u8> {
        let mut stream = b"\x00\xffgarbage\xff".to_vec();
        stream.extend(encode_message(1, 2, b"first", 0));
        let mut bad = encode_message(3, 4, b"bad crc", 0);
        let crc_at = bad.len() - 3;
        bad[crc_at] ^= 0x55;
        stream.extend(bad);
        let large = encode_message(5, 6, &[7; 2 * MAX_PAYLOAD + 10], 3);
        let mut pages = Vec::new();
        let mut rest = &large[..];
        while !rest.is_empty() {
            let len = HEADER_LEN + usize::from(u16::from_le_bytes([rest[4], rest[5]])) + 3;
            pages.push(&rest[..len]);
            rest = &rest[len..];
        }
        for (i, page) in pages.iter().enumerate() {
            stream.extend_from_slice(page);
            stream.extend(encode_message(8, 0, &[i as u8; 3], 0));
        }
        let inner = encode_message(9, 0, b"inner", 0);
        let mut outer = encode_message(10, 0, &inner, 0);
        let outer_crc = outer.len() - 3;
        outer[outer_crc] ^= 0x01;
        stream.extend(outer);
        stream.extend(encode_message(11, 0, b"last", 0));
        stream
    }

    #[test]
    fn push_with_lends_what_push_queues() {
        let stream = mixed_stream();
        for chunk in [1, 2, 3, 7, 64, 4095, 5000, stream.len()] {
            let mut queued = Decoder::new();
            queued.set_fault_log(true);
            let mut expected = Vec::new();
            for piece in stream.chunks(chunk) {
                queued.push(piece);
                while let Some((at, message)) = queued.next_message_with_offset() {
                    expected.push((at, message));
                }
            }
            let mut lent = Decoder::new();
            lent.set_fault_log(true);
            let mut got = Vec::new();
            for piece in stream.chunks(chunk) {
                lent.push_with(piece, |at, message| got.push((at, message.to_message())));
            }
            assert_eq!(got, expected, "chunks of {chunk}");
            assert_eq!(lent.stats(), queued.stats(), "chunks of {chunk}");
            assert_eq!(lent.take_refused_frames(), queued.take_refused_frames());
            assert_eq!(lent.take_skipped_spans(), queued.take_skipped_spans());
            check_invariant(&lent, stream.len());
        }
        let ids: Vec<u8> = {
            let mut decoder = Decoder::new();
            let mut ids = Vec::new();
            decoder.push_with(&stream, |_, message| ids.push(message.id));
            ids
        };
        assert_eq!(ids, [1, 8, 8, 5, 8, 9, 11]);
    }

    #[test]
    fn push_with_hands_the_queued_messages_first() {
        let first = encode_message(1, 0, b"a", 0);
        let second = encode_message(2, 0, b"b", 0);
        let mut decoder = Decoder::new();
        // A header announcing more than follows, then abandoned: the frame behind its
        // sync is queued.
        let mut cut = vec![SYNC1, SYNC2, 1, 0, 100, 0];
        cut.extend_from_slice(&first);
        decoder.push(&cut);
        assert!(decoder.abandon_partial_frame());
        assert_eq!(decoder.ready_messages(), 1);
        let mut ids = Vec::new();
        decoder.push_with(&second, |at, message| ids.push((at, message.id)));
        assert_eq!(ids, [(6, 1), (6 + first.len() as u64, 2)]);
        assert_eq!(decoder.ready_messages(), 0);
    }

    #[test]
    fn debug_shows_no_bytes() {
        let mut decoder = Decoder::new();
        decoder.push(&encode_message(1, 2, b"secret", 0)[..12]);
        let shown = format!("{decoder:?}");
        assert!(shown.contains("buffered_len: 12"), "{shown}");
        assert!(!shown.contains("115"), "{shown}"); // b's'
    }

    #[test]
    fn find_sync_cases() {
        assert_eq!(find_sync(b""), None);
        assert_eq!(find_sync(b"\xff"), None);
        assert_eq!(find_sync(b"\xff\x5a"), Some(0));
        assert_eq!(find_sync(b"\xff\xff\x5a"), Some(1));
        assert_eq!(find_sync(b"ab\xff\x00\xff\x5a"), Some(4));
        assert_eq!(find_sync(b"\x5a\xff"), None);
    }

    #[test]
    fn a_trailing_ff_is_kept_until_the_next_byte() {
        let frame = encode_message(1, 2, b"x", 0);
        let mut decoder = Decoder::new();
        decoder.push(b"junk\xff");
        assert_eq!(decoder.buffered_len(), 1);
        decoder.push(&frame[..1]);
        // "\xff\xff": the first one cannot start a sync anymore.
        assert_eq!(decoder.buffered_len(), 1);
        decoder.push(&frame[1..]);
        assert_eq!(decoder.next_message().unwrap().data, b"x");
        assert_eq!(decoder.stats().skipped_bytes, 5);
        check_invariant(&decoder, 5 + frame.len());
    }

    #[test]
    fn the_buffer_stays_under_one_frame() {
        let frame = encode_message(1, 2, &[7; MAX_PAYLOAD], 0);
        let mut stream = Vec::new();
        for _ in 0..5 {
            stream.extend_from_slice(&frame);
        }
        let mut decoder = Decoder::new();
        let mut max = 0;
        for chunk in stream.chunks(1000) {
            decoder.push(chunk);
            max = max.max(decoder.buffered_len());
        }
        assert!(max < MAX_FRAME_LEN, "{max}");
        assert_eq!(decoder.messages().count(), 5);
        check_invariant(&decoder, stream.len());
        // Only garbage: nothing is held but a possible trailing 0xFF.
        let mut decoder = Decoder::new();
        decoder.push(&[0x00; 100_000]);
        assert_eq!(decoder.buffered_len(), 0);
        assert_eq!(decoder.stats().skipped_bytes, 100_000);
    }

    #[test]
    fn push_keeps_the_held_frame_across_calls_of_one_byte() {
        let a = encode_message(3, 4, &[1; 300], 0);
        let mut decoder = Decoder::new();
        for &b in &a {
            decoder.push(&[b]);
        }
        assert_eq!(decoder.next_message().unwrap().data, vec![1; 300]);
        assert_eq!(decoder.buffered_len(), 0);
    }

    #[test]
    fn a_large_page_too_short_for_its_header_is_a_page_error() {
        let bytes = Frame::new(1, 0x82, vec![0, 0, 0]).encode().unwrap();
        let mut decoder = Decoder::new();
        decoder.push(&bytes);
        assert!(decoder.next_message().is_none());
        assert_eq!(decoder.stats().page_errors, 1);
        assert_eq!(decoder.stats().frames, 1);
    }

    #[test]
    fn a_page_count_of_zero_is_refused() {
        let bytes = Frame::new(1, 0x82, vec![0, 0, 0, 0, 0, b'a'])
            .encode()
            .unwrap();
        let mut decoder = Decoder::new();
        decoder.push(&bytes);
        assert!(decoder.next_message().is_none());
        assert_eq!(decoder.stats().page_errors, 1);
    }

    #[test]
    fn resync_gives_up_a_large_message_started_by_the_bytes_it_decodes() {
        // A header announcing 1328 bytes holds the first page of a two-page message
        // behind it; resync decodes that page, and must then give its message up too.
        let first_page = Frame::large_page(48, 0x10, 3, 0, 2, b"{\"big\":\"")
            .unwrap()
            .encode()
            .unwrap();
        let mut bytes = vec![0xff, 0x5a, 0x04, 0x00, 0x30, 0x05];
        bytes.extend_from_slice(&first_page);
        let mut decoder = Decoder::new();
        decoder.push(&bytes);
        assert_eq!(decoder.buffered_len(), bytes.len());
        decoder.resync();
        assert_eq!(decoder.partial_message_len(), None);
        assert_eq!(decoder.buffered_len(), 0);
        let s = decoder.stats();
        assert_eq!((s.frames, s.truncated, s.dropped_messages), (1, 1, 1));
        check_invariant(&decoder, bytes.len());
        // What comes next is decoded on its own.
        let next = encode_message(1, 2, b"next", 0);
        decoder.push(&next);
        assert_eq!(decoder.next_message().unwrap().data, b"next");
        assert_eq!(decoder.partial_message_len(), None);
    }

    #[test]
    fn resync_completes_a_large_message_whose_last_page_was_held() {
        // The last page sits behind a frame cut short: resync decodes it, and the
        // message it completes is delivered rather than dropped.
        let data = vec![7; MAX_PAGE_DATA + 10];
        let bytes = encode_message(5, 6, &data, 1);
        let (first, last) = bytes.split_at(MAX_FRAME_LEN);
        let mut decoder = Decoder::new();
        decoder.push(first);
        decoder.push(&[0xff, 0x5a, 0x04, 0x00, 0x30, 0x05]);
        decoder.push(last);
        assert!(decoder.next_message().is_none());
        decoder.resync();
        assert_eq!(decoder.next_message().unwrap().data, data);
        assert_eq!(decoder.stats().dropped_messages, 0);
        check_invariant(&decoder, bytes.len() + 6);
    }

    #[test]
    fn the_message_limit_drops_a_long_large_message() {
        let bytes = encode_message(1, 2, &[0; 3 * MAX_PAGE_DATA], 0);
        let mut decoder = Decoder::with_max_message_len(2 * MAX_PAGE_DATA);
        decoder.push(&bytes);
        assert!(decoder.next_message().is_none());
        let s = decoder.stats();
        assert_eq!((s.page_errors, s.dropped_messages), (1, 1));
        assert_eq!(decoder.partial_message_len(), None);
    }
}
