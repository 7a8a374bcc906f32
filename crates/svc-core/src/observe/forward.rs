//! The SDK's `tracing` events forwarded to an application's logger (Android's Logcat,
//! Apple's `os_log`, Python's `logging`), without `tracing-subscriber`.
//!
//! A [`Forwarder`] is a `tracing` subscriber that turns each event of the SDK's own
//! targets (`svc_…`) into a [`LogRecord`] — level, target, and one line of text: the
//! names and fields of the spans it happened in, its message, its fields — and hands it
//! to the application's [`LogSink`]. Events of other crates (the HTTP and TLS stacks,
//! which may write addresses with their query or headers at `trace`) are never
//! forwarded. What the SDK writes holds no secret (see the parent module); as a second
//! line of defence, a field value that is an address is written as `observe::url`
//! writes it, without query, fragment or user information.
//!
//! [`forward_globally`] installs one forwarder as the process's default subscriber (the
//! bindings' way: an app has no subscriber of its own for the SDK's copy of `tracing`)
//! and changes its sink and level later; a Rust program that has a subscriber of its
//! own does not need this module.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// One event, as the application's logger receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Its level.
    pub level: Level,
    /// The module that wrote it, e.g. `svc_core::cloud::auth`.
    pub target: String,
    /// `span{field=value}:span: message field=value …`.
    pub message: String,
}

/// Receives the SDK's log records. Called on the thread that logs (an SDK worker
/// thread, or the caller's): keep it quick. An event logged while the sink runs on the
/// same thread (the sink calling the SDK) is dropped rather than forwarded in a loop.
pub trait LogSink: Send + Sync + 'static {
    /// One record.
    fn log(&self, record: LogRecord);
}

/// Whether a target is the SDK's own.
fn ours(target: &str) -> bool {
    target.starts_with("svc_")
}

/// Levels as numbers, `0` for "nothing".
fn level_number(level: Option<Level>) -> usize {
    match level {
        None => 0,
        Some(Level::ERROR) => 1,
        Some(Level::WARN) => 2,
        Some(Level::INFO) => 3,
        Some(Level::DEBUG) => 4,
        Some(Level::TRACE) => 5,
    }
}

/// A span's name and fields as written, and how many handles it has.
struct SpanData {
    text: String,
    refs: usize,
}

/// Span identifiers, unique in the process (several forwarders may exist in tests).
static NEXT_SPAN: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The spans entered on this thread, innermost last.
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// Set while this thread runs a sink.
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// A `tracing` subscriber forwarding the SDK's events to a [`LogSink`] (none at first:
/// nothing is forwarded until [`Forwarder::set_sink`]).
#[derive(Default)]
pub struct Forwarder {
    sink: RwLock<Option<Arc<dyn LogSink>>>,
    /// The most verbose level forwarded ([`level_number`]).
    max: AtomicUsize,
    spans: Mutex<HashMap<u64, SpanData>>,
}

impl fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarder")
            .field("max", &self.max.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Forwarder {
    /// A forwarder without a sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forwards the events at `max_level` and above to `sink` from now on (`None`:
    /// forwards nothing).
    pub fn set_sink(&self, sink: Option<Arc<dyn LogSink>>, max_level: Level) {
        let max = if sink.is_some() {
            level_number(Some(max_level))
        } else {
            0
        };
        *self.sink.write().unwrap_or_else(PoisonError::into_inner) = sink;
        self.max.store(max, Ordering::Release);
        // Callsites cache whether they are enabled: ask them again.
        tracing::callsite::rebuild_interest_cache();
    }

    fn wanted(&self, metadata: &Metadata<'_>) -> bool {
        ours(metadata.target())
            && level_number(Some(*metadata.level())) <= self.max.load(Ordering::Acquire)
    }

    fn spans(&self) -> std::sync::MutexGuard<'_, HashMap<u64, SpanData>> {
        self.spans.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `a{x=1}:b: ` for the spans entered on this thread.
    fn context(&self) -> String {
        let ids = ENTERED.with(|entered| entered.borrow().clone());
        if ids.is_empty() {
            return String::new();
        }
        let spans = self.spans();
        let mut out = String::new();
        for id in ids {
            if let Some(span) = spans.get(&id) {
                out.push_str(&span.text);
                out.push(':');
            }
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out
    }
}

/// Writes fields as `name=value`, the `message` field first and bare.
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl Fields {
    fn push(&mut self, field: &Field, value: &str) {
        let value = if value.contains("://") {
            super::url(value)
        } else {
            value.to_owned()
        };
        if field.name() == "message" {
            self.message = value;
        } else {
            if !self.rest.is_empty() {
                self.rest.push(' ');
            }
            let _ = write!(self.rest, "{}={value}", field.name());
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, &format!("{value:?}"));
    }
}

impl Subscriber for Forwarder {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if !ours(metadata.target()) {
            Interest::never()
        } else if self.wanted(metadata) {
            Interest::always()
        } else {
            // Asked again when the level changes (`rebuild_interest_cache`).
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match self.max.load(Ordering::Acquire) {
            0 => LevelFilter::OFF,
            1 => LevelFilter::ERROR,
            2 => LevelFilter::WARN,
            3 => LevelFilter::INFO,
            4 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        })
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.wanted(metadata)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = NEXT_SPAN.fetch_add(1, Ordering::Relaxed);
        let mut fields = Fields::default();
        span.record(&mut fields);
        let mut text = span.metadata().name().to_owned();
        if !fields.rest.is_empty() {
            let _ = write!(text, "{{{}}}", fields.rest);
        }
        self.spans().insert(id, SpanData { text, refs: 1 });
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = Fields::default();
        values.record(&mut fields);
        if fields.rest.is_empty() {
            return;
        }
        if let Some(data) = self.spans().get_mut(&span.into_u64()) {
            match data.text.strip_suffix('}') {
                Some(open) => data.text = format!("{open} {}}}", fields.rest),
                None => {
                    let _ = write!(data.text, "{{{}}}", fields.rest);
                }
            }
        }
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        if IN_SINK.with(Cell::get) {
            return;
        }
        let Some(sink) = self
            .sink
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return;
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut message = self.context();
        message.push_str(&fields.message);
        if !fields.rest.is_empty() {
            if !fields.message.is_empty() {
                message.push(' ');
            }
            message.push_str(&fields.rest);
        }
        let record = LogRecord {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            message,
        };
        IN_SINK.with(|flag| flag.set(true));
        // A sink that panics loses its record; the SDK's work goes on.
        let _ = catch_unwind(AssertUnwindSafe(|| sink.log(record)));
        IN_SINK.with(|flag| flag.set(false));
    }

    fn enter(&self, span: &Id) {
        ENTERED.with(|entered| entered.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        let id = span.into_u64();
        ENTERED.with(|entered| {
            let mut entered = entered.borrow_mut();
            if let Some(at) = entered.iter().rposition(|&e| e == id) {
                entered.remove(at);
            }
        });
    }

    fn clone_span(&self, span: &Id) -> Id {
        if let Some(data) = self.spans().get_mut(&span.into_u64()) {
            data.refs += 1;
        }
        span.clone()
    }

    fn try_close(&self, span: Id) -> bool {
        let mut spans = self.spans();
        let id = span.into_u64();
        let closed = match spans.get_mut(&id) {
            Some(data) => {
                data.refs = data.refs.saturating_sub(1);
                data.refs == 0
            }
            None => false,
        };
        if closed {
            spans.remove(&id);
        }
        closed
    }
}

/// Why [`forward_globally`] could not install its forwarder.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "another tracing subscriber is the process's default already; add the SDK's events to it instead"
)]
pub struct OtherSubscriber;

static GLOBAL: OnceLock<Result<Arc<Forwarder>, OtherSubscriber>> = OnceLock::new();

/// Forwards the SDK's events at `max_level` and above to `sink` (`None`: stops
/// forwarding), through one [`Forwarder`] installed as the process's default
/// subscriber on the first call; later calls change its sink and level.
///
/// # Errors
/// [`OtherSubscriber`] when another subscriber was made the default first.
pub fn forward_globally(
    sink: Option<Arc<dyn LogSink>>,
    max_level: Level,
) -> Result<(), OtherSubscriber> {
    let forwarder = GLOBAL
        .get_or_init(|| {
            let forwarder = Arc::new(Forwarder::new());
            tracing::subscriber::set_global_default(forwarder.clone())
                .map(|()| forwarder)
                .map_err(|_| OtherSubscriber)
        })
        .clone()?;
    forwarder.set_sink(sink, max_level);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect(Mutex<Vec<LogRecord>>);

    impl LogSink for Collect {
        fn log(&self, record: LogRecord) {
            // Logging from the sink is not forwarded again.
            tracing::error!(target: "svc_core::test", "from the sink");
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(record);
        }
    }

    impl Collect {
        fn taken(&self) -> Vec<LogRecord> {
            std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
        }
    }

    #[test]
    fn events_of_the_sdk_reach_the_sink_with_their_spans_and_fields() {
        let forwarder = Arc::new(Forwarder::new());
        let sink = Arc::new(Collect::default());
        tracing::subscriber::with_default(forwarder.clone(), || {
            tracing::info!(target: "svc_core::x", "before any sink");
            forwarder.set_sink(Some(sink.clone()), Level::DEBUG);
            let span = tracing::info_span!(target: "svc_core::cloud", "request", operation = "getProcessing");
            let _entered = span.enter();
            tracing::debug!(
                target: "svc_core::cloud",
                url = "https://s3.example/b/k?X-Amz-Signature=abc",
                status = 200u16,
                "answered"
            );
            tracing::trace!(target: "svc_core::cloud", "too verbose");
            tracing::error!(target: "hyper::proto", "not ours");
        });
        let records = sink.taken();
        assert_eq!(
            records,
            [LogRecord {
                level: Level::DEBUG,
                target: "svc_core::cloud".into(),
                message: "request{operation=getProcessing}: answered url=https://s3.example/b/k status=200"
                    .into(),
            }]
        );
    }

    #[test]
    fn the_level_and_the_sink_can_change_and_a_panicking_sink_loses_only_its_record() {
        struct Panics;
        impl LogSink for Panics {
            fn log(&self, _record: LogRecord) {
                panic!("a sink bug");
            }
        }
        let forwarder = Arc::new(Forwarder::new());
        let sink = Arc::new(Collect::default());
        tracing::subscriber::with_default(forwarder.clone(), || {
            forwarder.set_sink(Some(Arc::new(Panics)), Level::INFO);
            tracing::warn!(target: "svc_core::x", "lost");
            forwarder.set_sink(Some(sink.clone()), Level::WARN);
            tracing::info!(target: "svc_core::x", "filtered out");
            tracing::warn!(target: "svc_core::x", n = 1, "kept");
            forwarder.set_sink(None, Level::TRACE);
            tracing::error!(target: "svc_core::x", "no sink");
        });
        let messages: Vec<String> = sink.taken().into_iter().map(|r| r.message).collect();
        assert_eq!(messages, ["kept n=1"]);
    }
}
