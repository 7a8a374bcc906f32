// A transfer's progress as an `AsyncSequence`.

/// The progress of a `TransferTask` as an `AsyncSequence`: the snapshot now, then the
/// latest one after each change (a slow consumer gets the newest, never a backlog, and
/// never holds the transfer up), ending after the snapshot whose `finished` is true, or
/// when the iterating `Task` is cancelled. Each iteration reads a stream of its own.
///
/// ```swift
/// .task {
///     for try await progress in upload.progressUpdates { sent = progress.doneBytes }
/// }
/// ```
public struct TransferProgressSequence: AsyncSequence {
    public typealias Element = TransferProgress

    let task: TransferTask

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: TransferProgressStream

        public mutating func next() async throws -> TransferProgress? {
            if Task.isCancelled {
                return nil
            }
            return try await stream.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: task.progressStream())
    }
}

extension TransferTask {
    /// The transfer's progress as an `AsyncSequence` (see `TransferProgressSequence`).
    public var progressUpdates: TransferProgressSequence { TransferProgressSequence(task: self) }
}
