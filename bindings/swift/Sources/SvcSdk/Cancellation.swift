// Swift task cancellation for every async call of the SDK.
//
// uniffi's generated Swift awaits a Rust future without forwarding the cancellation of
// the Task that awaits it. It polls that future from inside the Task, though, so the
// library can ask the Task itself: once `enableTaskCancellation()` has installed this
// probe, every async call asks `Task.isCancelled` while it waits (at each poll, and
// every 100 ms), and a cancelled Task ends the call with `SvcError.Canceled` and stops
// its work in Rust (the HTTP request, the unit request, the page being read).

/// Answers `Task.isCancelled` for the task running on the calling thread (the library
/// asks it from inside that task).
final class SwiftTaskCancellation: TaskCancellation {
    func isCancelled() throws -> Bool {
        Task.isCancelled
    }
}

/// Makes every async call of the SDK end when the Swift `Task` awaiting it is
/// cancelled. Call it once, early (e.g. in your `App`'s `init`); calling it again does
/// no harm.
///
/// Waits (`WorkflowTask.wait()`, `TransferTask.wait()`) end too, without stopping the
/// workflow or transfer they wait for: only `cancel()` does that.
public func enableTaskCancellation() {
    setTaskCancellation(probe: SwiftTaskCancellation())
}
