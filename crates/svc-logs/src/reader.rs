//! Streams of frames to records: [`LogDecoder`] (push) and [`LogReader`] (pull).

use std::collections::VecDeque;
use std::io::{self, Read};

use svc_protocol::serial::{Decoder, MessageRef, SerialError};

use crate::MessageKind;
use crate::kind::{DecodeError, Record, decode_kind};
use crate::records::SessionInfo;

/// How many faults a [`LogDecoder`] keeps; later ones are only counted
/// ([`LogDecoder::faults_dropped`]).
pub const MAX_FAULTS: usize = 1000;

/// Bytes a [`LogReader`] reads at a time, unless told otherwise.
pub const DEFAULT_CHUNK_LEN: usize = 64 * 1024;

/// Counters of a [`LogDecoder`] (or [`LogReader`]), from its creation.
///
/// Every byte fed is, at any time, in exactly one of `frame_bytes`, `skipped_bytes`
/// and `buffered_bytes` (`bytes` is their sum; after [`LogDecoder::finish`],
/// `buffered_bytes` is 0), and every whole message is exactly one of `records`,
/// `unknown` and `invalid_payload` (`messages` is their sum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Bytes fed.
    pub bytes: u64,
    /// Valid frames (standard frames and large-frame pages).
    pub frames: u64,
    /// Bytes of the valid frames.
    pub frame_bytes: u64,
    /// Whole messages out of the frames (a large message counts once).
    pub messages: u64,
    /// Messages decoded into records.
    pub records: u64,
    /// Valid messages of a class and id of no [`MessageKind`](crate::MessageKind)
    /// (another log class, the REST class 0x10, an id this crate does not know).
    pub unknown: u64,
    /// Known messages whose payload could not be decoded (too short, or a length or
    /// count that does not fit).
    pub invalid_payload: u64,
    /// Frame candidates refused for their CRC.
    pub bad_crc: u64,
    /// Frame candidates refused for their end-of-frame byte.
    pub bad_etx: u64,
    /// Frame candidates refused for a length over 4086.
    pub bad_length: u64,
    /// Incomplete frames given up at the end of the input
    /// ([`LogDecoder::finish`]).
    pub truncated: u64,
    /// Large-frame pages thrown away (out of order, or not continuing a message).
    pub page_errors: u64,
    /// Large messages given up before their last page.
    pub dropped_messages: u64,
    /// Bytes of no valid frame: garbage, and the bytes of refused or truncated frames.
    pub skipped_bytes: u64,
    /// Bytes held: the start of a frame whose end has not been fed yet.
    pub buffered_bytes: u64,
}

/// Something skipped in the input, at a byte offset from its start.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Fault {
    /// Bytes of no valid frame (garbage, or the bytes of a refused frame); adjacent
    /// spans are merged.
    Skipped {
        /// Offset of the first byte.
        offset: u64,
        /// Number of bytes.
        len: u64,
    },
    /// A frame candidate refused: [`SerialError::BadCrc`], [`SerialError::BadEtx`],
    /// [`SerialError::BadLength`], or [`SerialError::Truncated`] (incomplete at the end
    /// of the input). Its bytes are in a [`Fault::Skipped`] span too.
    BadFrame {
        /// Offset of its sync bytes.
        offset: u64,
        /// Why it was refused.
        error: SerialError,
    },
    /// A valid message of no known class and id.
    Unknown {
        /// Offset of its (first) frame.
        offset: u64,
        /// Its class.
        class: u8,
        /// Its id.
        id: u8,
    },
    /// A known message whose payload could not be decoded.
    InvalidPayload {
        /// Offset of its (first) frame.
        offset: u64,
        /// Why.
        error: DecodeError,
    },
}

impl Fault {
    /// Its byte offset in the input.
    #[must_use]
    pub fn offset(&self) -> u64 {
        match self {
            Fault::Skipped { offset, .. }
            | Fault::BadFrame { offset, .. }
            | Fault::Unknown { offset, .. }
            | Fault::InvalidPayload { offset, .. } => *offset,
        }
    }
}

/// A record and the byte offset of its (first) frame in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// Offset of the frame's sync bytes from the start of the input.
    pub offset: u64,
    /// The record.
    pub record: Record,
}

/// Push-style decoder of a stream of sbgECom logs: [`feed`](Self::feed) the bytes in
/// chunks of any size, take the records with [`next_record`](Self::next_record), and
/// call [`finish`](Self::finish) at the end of the input.
///
/// Garbage between frames, refused frames (CRC, end byte, length), unknown messages
/// and payloads too short are skipped and counted ([`stats`](Self::stats)), the
/// first [`MAX_FAULTS`] with their offsets ([`faults`](Self::faults)); a good frame
/// right after (or inside) a bad one is still found. Framing is
/// [`svc_protocol::serial::Decoder`]'s.
///
/// ```
/// use svc_logs::{LogDecoder, Record, records::Event, encode_frame};
///
/// let bytes = encode_frame(&Record::EventA(Event { timestamp: 42, ..Event::default() }), 0)?;
/// let mut decoder = LogDecoder::new();
/// decoder.feed(b"noise");
/// decoder.feed(&bytes);
/// decoder.finish();
/// assert_eq!(decoder.next_record().map(|r| r.kind().name()), Some("eventA"));
/// assert_eq!((decoder.stats().records, decoder.stats().skipped_bytes), (1, 5));
/// # Ok::<(), svc_protocol::serial::SerialError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LogDecoder {
    framing: Framing,
    ready: VecDeque<Located>,
}

impl Default for LogDecoder {
    fn default() -> Self {
        LogDecoder::new()
    }
}

impl LogDecoder {
    /// A decoder with nothing fed.
    #[must_use]
    pub fn new() -> LogDecoder {
        LogDecoder {
            framing: Framing::new(),
            ready: VecDeque::new(),
        }
    }

    /// Feeds bytes of the stream; the records of the frames they complete are ready at
    /// once.
    pub fn feed(&mut self, bytes: &[u8]) {
        let ready = &mut self.ready;
        self.framing.feed(bytes, |offset, kind, payload| {
            let record = decode_kind(kind, payload)?;
            ready.push_back(Located { offset, record });
            Ok(())
        });
    }

    /// The end of the input (or a gap in a live stream): gives up the incomplete
    /// frame held (counted in `truncated`) and the large message being reassembled
    /// (`dropped_messages`), after decoding the frames held behind its start. The
    /// decoder can be fed again afterwards.
    pub fn finish(&mut self) {
        let ready = &mut self.ready;
        self.framing.finish(|offset, kind, payload| {
            let record = decode_kind(kind, payload)?;
            ready.push_back(Located { offset, record });
            Ok(())
        });
    }

    /// The next record, oldest first; `None` until more bytes are fed.
    pub fn next_record(&mut self) -> Option<Record> {
        self.ready.pop_front().map(|located| located.record)
    }

    /// The next record with its offset in the input.
    pub fn next_located(&mut self) -> Option<Located> {
        self.ready.pop_front()
    }

    /// How many records wait to be taken.
    #[must_use]
    pub fn ready_records(&self) -> usize {
        self.ready.len()
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.framing.stats()
    }

    /// The first [`MAX_FAULTS`] faults (since the last
    /// [`take_faults`](Self::take_faults)), by offset.
    #[must_use]
    pub fn faults(&self) -> &[Fault] {
        self.framing.faults()
    }

    /// Takes the faults kept so far, making room for [`MAX_FAULTS`] more (for a live
    /// stream).
    pub fn take_faults(&mut self) -> Vec<Fault> {
        self.framing.take_faults()
    }

    /// Faults not kept because [`MAX_FAULTS`] were already held.
    #[must_use]
    pub fn faults_dropped(&self) -> u64 {
        self.framing.faults_dropped()
    }
}

/// The framing of a stream, its counters and its faults: what [`LogDecoder`] and
/// [`TableReader`](crate::tables::TableReader) share. Each whole message of a known
/// kind is handed, with its offset, to a function that decodes its payload (into a
/// [`Record`], or straight into a table's row); the messages of no known kind and the
/// payloads that function refuses are counted and located here.
#[derive(Debug, Clone)]
pub(crate) struct Framing {
    decoder: Decoder,
    bytes: u64,
    records: u64,
    unknown: u64,
    invalid_payload: u64,
    faults: Vec<Fault>,
    faults_dropped: u64,
    /// Index in `faults` of the last [`Fault::Skipped`], to merge the next one into.
    last_skipped: Option<usize>,
}

impl Framing {
    pub(crate) fn new() -> Framing {
        let mut decoder = Decoder::new();
        decoder.set_fault_log(true);
        Framing {
            decoder,
            bytes: 0,
            records: 0,
            unknown: 0,
            invalid_payload: 0,
            faults: Vec::new(),
            faults_dropped: 0,
            last_skipped: None,
        }
    }

    /// Feeds bytes; `take` gets the messages of the frames they complete, lent from
    /// the bytes (see [`Decoder::push_with`]).
    pub(crate) fn feed<F>(&mut self, bytes: &[u8], mut take: F)
    where
        F: FnMut(u64, MessageKind, &[u8]) -> Result<(), DecodeError>,
    {
        self.bytes += bytes.len() as u64;
        let mut faults = Vec::new();
        let (records, unknown, invalid) = (
            &mut self.records,
            &mut self.unknown,
            &mut self.invalid_payload,
        );
        self.decoder.push_with(bytes, |offset, message| {
            if let Some(fault) = hand(offset, message, &mut take, records, unknown, invalid) {
                faults.push(fault);
            }
        });
        self.collect(faults);
    }

    /// The end of the input (see [`LogDecoder::finish`]).
    pub(crate) fn finish<F>(&mut self, mut take: F)
    where
        F: FnMut(u64, MessageKind, &[u8]) -> Result<(), DecodeError>,
    {
        self.decoder.resync();
        let mut faults = Vec::new();
        while let Some((offset, message)) = self.decoder.next_message_with_offset() {
            if let Some(fault) = hand(
                offset,
                message.as_message_ref(),
                &mut take,
                &mut self.records,
                &mut self.unknown,
                &mut self.invalid_payload,
            ) {
                faults.push(fault);
            }
        }
        self.collect(faults);
    }

    pub(crate) fn stats(&self) -> Stats {
        let s = self.decoder.stats();
        Stats {
            bytes: self.bytes,
            frames: s.frames,
            frame_bytes: s.frame_bytes,
            messages: s.messages,
            records: self.records,
            unknown: self.unknown,
            invalid_payload: self.invalid_payload,
            bad_crc: s.bad_crc,
            bad_etx: s.bad_etx,
            bad_length: s.bad_length,
            truncated: s.truncated,
            page_errors: s.page_errors,
            dropped_messages: s.dropped_messages,
            skipped_bytes: s.skipped_bytes,
            buffered_bytes: self.decoder.buffered_len() as u64,
        }
    }

    pub(crate) fn faults(&self) -> &[Fault] {
        &self.faults
    }

    pub(crate) fn take_faults(&mut self) -> Vec<Fault> {
        self.last_skipped = None;
        std::mem::take(&mut self.faults)
    }

    pub(crate) fn faults_dropped(&self) -> u64 {
        self.faults_dropped
    }

    /// Keeps `faults` (of the messages just handed) with the framing's own, in the
    /// order of their offsets.
    fn collect(&mut self, mut faults: Vec<Fault>) {
        let refused = self.decoder.take_refused_frames();
        let skipped = self.decoder.take_skipped_spans();
        if faults.is_empty() && refused.is_empty() && skipped.is_empty() {
            return;
        }
        faults.extend(
            refused
                .into_iter()
                .map(|(offset, error)| Fault::BadFrame { offset, error }),
        );
        faults.extend(
            skipped
                .into_iter()
                .map(|(offset, len)| Fault::Skipped { offset, len }),
        );
        faults.sort_by_key(Fault::offset);
        for fault in faults {
            self.keep(fault);
        }
    }

    fn keep(&mut self, fault: Fault) {
        if let Fault::Skipped { offset, len } = fault
            && let Some(Fault::Skipped {
                offset: start,
                len: held,
            }) = self.last_skipped.and_then(|i| self.faults.get_mut(i))
            && *start + *held == offset
        {
            *held += len;
            return;
        }
        if self.faults.len() >= MAX_FAULTS {
            self.faults_dropped += 1;
            return;
        }
        if matches!(fault, Fault::Skipped { .. }) {
            self.last_skipped = Some(self.faults.len());
        }
        self.faults.push(fault);
    }
}

/// Hands one whole message to `take` if it is of a known kind, counting it; the
/// fault it makes (a message of no known kind, a payload refused), if any.
fn hand<F>(
    offset: u64,
    message: MessageRef<'_>,
    take: &mut F,
    records: &mut u64,
    unknown: &mut u64,
    invalid_payload: &mut u64,
) -> Option<Fault>
where
    F: FnMut(u64, MessageKind, &[u8]) -> Result<(), DecodeError>,
{
    let (class, id) = (message.class, message.id);
    let Some(kind) = MessageKind::from_ids(class, id) else {
        *unknown += 1;
        return Some(Fault::Unknown { offset, class, id });
    };
    match take(offset, kind, message.data) {
        Ok(()) => {
            *records += 1;
            None
        }
        Err(error) => {
            *invalid_payload += 1;
            Some(Fault::InvalidPayload { offset, error })
        }
    }
}

/// An input read [`DEFAULT_CHUNK_LEN`] (or another number of) bytes at a time.
#[derive(Debug)]
pub(crate) struct Chunks<R> {
    inner: R,
    buf: Vec<u8>,
    eof: bool,
}

impl<R: Read> Chunks<R> {
    pub(crate) fn new(inner: R, chunk_len: usize) -> Chunks<R> {
        Chunks {
            inner,
            buf: vec![0; chunk_len.max(1)],
            eof: false,
        }
    }

    /// The next bytes; `None` at the end of the input (reads interrupted are
    /// retried).
    pub(crate) fn next_chunk(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            match self.inner.read(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(None);
                }
                Ok(n) => return Ok(self.buf.get(..n)),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    pub(crate) fn is_eof(&self) -> bool {
        self.eof
    }

    pub(crate) fn into_inner(self) -> R {
        self.inner
    }
}

/// Reads the records of an sbgECom log (a data-logger file, a capture of a port) from
/// any [`Read`], [`DEFAULT_CHUNK_LEN`] bytes at a time: memory stays bounded whatever
/// the input's size. An iterator of `io::Result<Record>`; faults in the input are not
/// errors but counted (see [`LogDecoder`]).
///
/// ```
/// use svc_logs::{LogReader, Record, records::OdoVel, encode_frame};
///
/// let mut log = encode_frame(&Record::OdoVel(OdoVel { velocity: 1.5, ..OdoVel::default() }), 0)?;
/// log.extend_from_slice(b"\xff\x5a\x13");   // cut short
/// let mut reader = LogReader::new(log.as_slice());
/// let records: Vec<Record> = reader.by_ref().collect::<Result<_, _>>()?;
/// assert_eq!(records.len(), 1);
/// assert_eq!(reader.stats().truncated, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LogReader<R> {
    chunks: Chunks<R>,
    decoder: LogDecoder,
}

impl<R: Read> LogReader<R> {
    /// A reader of `inner`, reading [`DEFAULT_CHUNK_LEN`] bytes at a time.
    pub fn new(inner: R) -> LogReader<R> {
        LogReader::with_chunk_len(inner, DEFAULT_CHUNK_LEN)
    }

    /// A reader of `inner` reading `chunk_len` bytes (at least 1) at a time.
    pub fn with_chunk_len(inner: R, chunk_len: usize) -> LogReader<R> {
        LogReader {
            chunks: Chunks::new(inner, chunk_len),
            decoder: LogDecoder::new(),
        }
    }

    /// The next record with its offset; `None` at the end of the input.
    ///
    /// # Errors
    ///
    /// An error of the underlying reader (reads interrupted are retried); reading
    /// may go on afterwards.
    pub fn next_located(&mut self) -> io::Result<Option<Located>> {
        loop {
            if let Some(located) = self.decoder.next_located() {
                return Ok(Some(located));
            }
            if self.chunks.is_eof() {
                return Ok(None);
            }
            match self.chunks.next_chunk()? {
                Some(bytes) => self.decoder.feed(bytes),
                None => self.decoder.finish(),
            }
        }
    }

    /// The next record; `None` at the end of the input.
    ///
    /// # Errors
    ///
    /// As [`next_located`](Self::next_located).
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        Ok(self.next_located()?.map(|located| located.record))
    }

    /// The counters so far (final once the end of the input was reached).
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.decoder.stats()
    }

    /// The first [`MAX_FAULTS`] faults.
    #[must_use]
    pub fn faults(&self) -> &[Fault] {
        self.decoder.faults()
    }

    /// Faults not kept.
    #[must_use]
    pub fn faults_dropped(&self) -> u64 {
        self.decoder.faults_dropped()
    }

    /// Whether the end of the input was reached.
    #[must_use]
    pub fn is_eof(&self) -> bool {
        self.chunks.is_eof()
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.chunks.into_inner()
    }
}

impl<R: Read> Iterator for LogReader<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        self.next_record().transpose()
    }
}

/// Puts the pages of the session information ([`SessionInfo`]) back together.
///
/// Pages are kept by index; page 0, or a page of another page count, starts a new
/// document. The document is returned once every page of it is in.
#[derive(Debug, Clone, Default)]
pub struct SessionInfoAssembler {
    pages: Vec<Option<Vec<u8>>>,
}

impl SessionInfoAssembler {
    /// An assembler holding no page.
    #[must_use]
    pub fn new() -> SessionInfoAssembler {
        SessionInfoAssembler::default()
    }

    /// Adds a page; the whole document (the JSON text's bytes) if it completes it.
    pub fn push(&mut self, page: &SessionInfo) -> Option<Vec<u8>> {
        let count = usize::from(page.page_count);
        let index = usize::from(page.page_index);
        if index >= count {
            return None;
        }
        if page.page_index == 0 || self.pages.len() != count {
            self.pages = vec![None; count];
        }
        if let Some(slot) = self.pages.get_mut(index) {
            *slot = Some(page.data.clone());
        }
        if self.pages.iter().all(Option::is_some) {
            let document = self.pages.drain(..).flatten().flatten().collect();
            return Some(document);
        }
        None
    }
}
