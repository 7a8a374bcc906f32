// A unit's live output logs as an `AsyncSequence`.

/// The items of a `LiveStream` as an `AsyncSequence`: each `.record`, and a `.dropped`
/// where frames were dropped because the consumer did not keep up. The sequence ends
/// when the stream ends and throws `SvcError` when its source fails.
///
/// ```swift
/// .task {
///     let stream = try unit.subscribe(messages: ["ekfNav"])
///     for try await item in stream.items {
///         if case .record(let record) = item { latitude = record.value("latitude") }
///     }
/// }
/// ```
public struct LiveItems: AsyncSequence {
    public typealias Element = LiveItem

    let stream: LiveStream

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: LiveStream

        public mutating func next() async throws -> LiveItem? {
            // A cancelled task ends the sequence and the subscription.
            if Task.isCancelled {
                stream.stop()
                return nil
            }
            return try await withTaskCancellationHandler {
                try await stream.next()
            } onCancel: { [stream] in
                stream.stop()
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: stream)
    }
}

extension LiveStream {
    /// The stream's items as an `AsyncSequence` (see `LiveItems`).
    public var items: LiveItems { LiveItems(stream: self) }
}

extension LiveRecord {
    /// The value of column `name` (`latitude`, `velN`, …), `nil` when absent.
    public func value(_ name: String) -> Double? {
        values.first { $0.name == name }?.value ?? nil
    }
}
