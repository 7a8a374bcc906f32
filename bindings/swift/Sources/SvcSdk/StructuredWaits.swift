// Waits that follow Swift's structured concurrency, without polling.
//
// `outcome()`, `report()`, `upload(toContainer:)` and `download(outputsOf:)` wait inside
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

extension Transfers {
    /// Uploads local files to the registered files of a container and waits (reads the
    /// container for their forms first). `files` maps each container path to its
    /// local file. Cancelling the awaiting `Task` ends this call with
    /// `CancellationError` and stops the upload.
    public func upload(
        toContainer containerId: String, of client: CloudClient, files: [String: String]
    ) async throws -> TransferReport {
        let signal = WaitSignal()
        return try await cancellable(signal) {
            try await self.uploadToContainer(
                client: client, containerId: containerId, files: files, signal: signal)
        }
    }

    /// Downloads every output of a `processed` processing into `folder` and waits.
    /// Cancelling the awaiting `Task` ends this call with `CancellationError` and
    /// stops the download (no partial file is left).
    public func download(
        outputsOf processingId: String, of client: CloudClient, into folder: String
    ) async throws -> TransferReport {
        let signal = WaitSignal()
        return try await cancellable(signal) {
            try await self.downloadOutputs(
                client: client, processingId: processingId, folder: folder, signal: signal)
        }
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
