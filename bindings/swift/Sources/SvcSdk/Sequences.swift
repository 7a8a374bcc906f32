// The library's streams as `AsyncSequence`s: a unit's live output, a transfer's
// progress, a workflow's reports.
//
// Each is read with its `next()`, awaited as every async call of the SDK: cancelling
// the iterating `Task` cancels the read in Rust at once (no polling) and ends the
// sequence, as Swift's own `AsyncStream` ends.

/// A stream of the library, read with `next()` until `nil`.
public protocol SvcStream: Sendable {
    associatedtype Item
    func next() async throws -> Item?
    /// What the stream does when the `Task` reading it is cancelled (a live stream
    /// stops its subscription; the others need nothing).
    func readerCancelled()
}

extension SvcStream {
    public func readerCancelled() {}
}

extension LiveStream: SvcStream {
    public func readerCancelled() { stop() }
}

extension TransferProgressStream: SvcStream {}
extension WorkflowProgressStream: SvcStream {}

/// The items of a `SvcStream` as an `AsyncSequence`. It ends when the stream ends, or
/// when the iterating `Task` is cancelled; it throws `SvcError` when the stream fails.
/// Each iteration reads a stream made for it (`make`).
public struct SvcSequence<Stream: SvcStream>: AsyncSequence, Sendable {
    public typealias Element = Stream.Item

    let make: @Sendable () -> Stream

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: Stream

        public mutating func next() async throws -> Stream.Item? {
            do {
                return try await stream.next()
            } catch is CancellationError {
                stream.readerCancelled()
                return nil
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: make())
    }
}

extension LiveStream {
    /// The stream's items: each `.record`, and a `.dropped` where frames were dropped
    /// because the consumer did not keep up. Cancelling the iterating `Task` also
    /// stops the subscription.
    ///
    /// ```swift
    /// .task {
    ///     let stream = try unit.subscribe(messages: ["ekfNav"])
    ///     for try await item in stream.items {
    ///         if case .record(let record) = item { latitude = record.value("latitude") }
    ///     }
    /// }
    /// ```
    public var items: SvcSequence<LiveStream> { SvcSequence { self } }
}

extension LiveRecord {
    /// The value of column `name` (`latitude`, `velN`, …), `nil` when absent.
    public func value(_ name: String) -> Double? {
        values.first { $0.name == name }?.value ?? nil
    }
}

extension TransferTask {
    /// The transfer's progress: the snapshot now, then the latest one after each
    /// change (a slow consumer gets the newest, never a backlog, and never holds the
    /// transfer up), ending after the snapshot whose `finished` is true.
    ///
    /// ```swift
    /// .task {
    ///     for try await progress in upload.progressUpdates { sent = progress.doneBytes }
    /// }
    /// ```
    public var progressUpdates: SvcSequence<TransferProgressStream> {
        SvcSequence { self.progressStream() }
    }
}

extension WorkflowTask {
    /// The workflow's progress reports from its start: every change of stage in order,
    /// and the latest report of each stage (a slow consumer skips the reports
    /// superseded meanwhile; the workflow never waits for it), ending after `.done`, or
    /// when the workflow ends otherwise.
    ///
    /// ```swift
    /// .task {
    ///     for try await progress in task.reports { state = progress }
    /// }
    /// ```
    public var reports: SvcSequence<WorkflowProgressStream> { SvcSequence { self.progress() } }
}
