// Structured cancellation for Swift. uniffi's Swift futures do not forward a Task's
// cancellation to Rust (Kotlin's coroutines do), so these waits cancel the Rust work
// themselves when the Task that waits is cancelled.

extension WorkflowTask {
    /// Waits for the end of the workflow; cancelling the Swift `Task` that waits
    /// cancels the workflow (a processing already started goes on in the cloud), and
    /// this then throws `SvcError.Canceled`.
    public func outcome() async throws -> WorkflowOutcome {
        try await withTaskCancellationHandler {
            try await wait()
        } onCancel: {
            cancel()
        }
    }
}

extension TransferTask {
    /// Waits for the end of the transfer; cancelling the Swift `Task` that waits
    /// cancels the transfer, and this then throws `SvcError.Canceled`.
    public func report() async throws -> TransferReport {
        try await withTaskCancellationHandler {
            try await wait()
        } onCancel: {
            cancel()
        }
    }
}
