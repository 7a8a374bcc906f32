// Waits that follow Swift's structured concurrency, without polling.
//
// `outcome()` and `report()` wait as `wait()` does, inside
// `withTaskCancellationHandler`: cancelling the `Task` that awaits them fires a
// `WaitSignal`, which ends the Rust wait at once. The wait then cancels the workflow or
// transfer unless it was detached (`detach()`), and the call throws
// `CancellationError`, as Swift's own async functions do. Nothing is polled and no
// global switch (`enableTaskCancellation()`) is needed.

extension WorkflowTask {
    /// The workflow's outcome (as `wait()`). Cancelling the awaiting `Task` ends this
    /// call with `CancellationError` and cancels the workflow, unless it was detached.
    ///
    /// ```swift
    /// .task { outcome = try? await task.outcome() }   // leaving the view cancels it
    /// ```
    public func outcome() async throws -> WorkflowOutcome {
        let signal = WaitSignal()
        return try await cancellable(signal) { try await self.waitUntil(signal: signal) }
    }
}

extension TransferTask {
    /// The transfer's report (as `wait()`). Cancelling the awaiting `Task` ends this
    /// call with `CancellationError` and stops the transfer, unless it was detached.
    public func report() async throws -> TransferReport {
        let signal = WaitSignal()
        return try await cancellable(signal) { try await self.waitUntil(signal: signal) }
    }
}

/// `wait`, ended by `signal` when the current `Task` is cancelled; then
/// `CancellationError`.
private func cancellable<T>(
    _ signal: WaitSignal,
    _ wait: () async throws -> T
) async throws -> T {
    do {
        return try await withTaskCancellationHandler {
            try await wait()
        } onCancel: {
            signal.fire()
        }
    } catch {
        if Task.isCancelled {
            throw CancellationError()
        }
        throw error
    }
}
