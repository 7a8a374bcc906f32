// A workflow's progress reports as an `AsyncSequence`.

/// The progress reports of a `WorkflowTask` from its start, as an `AsyncSequence`: every
/// change of stage in order, and the latest report of each stage (a slow consumer skips
/// the reports superseded meanwhile; the workflow never waits for it). The sequence ends
/// after `.done`, or when the workflow ends otherwise. Each iteration reads a stream of
/// its own.
///
/// ```swift
/// .task {
///     for try await progress in task.reports { state = progress }
/// }
/// ```
public struct WorkflowReportSequence: AsyncSequence {
    public typealias Element = WorkflowProgress

    let task: WorkflowTask

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: WorkflowProgressStream

        public mutating func next() async throws -> WorkflowProgress? {
            if Task.isCancelled {
                return nil
            }
            return try await stream.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: task.progress())
    }
}

extension WorkflowTask {
    /// The workflow's progress reports as an `AsyncSequence` (see
    /// `WorkflowReportSequence`).
    public var reports: WorkflowReportSequence { WorkflowReportSequence(task: self) }
}
