import Foundation
import SvcSdk
import XCTest

/// Collects workflow progress from the SDK's worker threads.
final class Recorder: WorkflowListener, @unchecked Sendable {
    private let lock = NSLock()
    private var stages: [WorkflowProgress] = []

    func onProgress(progress: WorkflowProgress) {
        lock.lock()
        stages.append(progress)
        lock.unlock()
    }

    var seen: [WorkflowProgress] {
        lock.lock()
        defer { lock.unlock() }
        return stages
    }
}

final class WorkflowTests: XCTestCase {
    // The organization runs one processing at a time: wait for the previous test's.
    let options = WorkflowOptions(waitForFreeOrganization: true, pollInitialMs: 50, pollMaxMs: 500)

    func job(_ out: URL?) throws -> ProcessingJob {
        ProcessingJob(
            inputs: [Env.fixture("rover.nmea").path, Env.fixture("imu.csv").path],
            processingJson: try String(contentsOf: Env.fixture("processing.json"), encoding: .utf8),
            name: "swift test",
            outputFolder: out?.path
        )
    }

    func testTheWholeWorkflowWithProgressGivesTheTrajectorySvcProcessGives() async throws {
        let client = try CloudClient.create(config: Env.config())
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("svc-swift-\(UUID())")
        let recorder = Recorder()
        let task = try Workflow(client: client).start(job: job(out), options: options, listener: recorder)
        let outcome = try await task.outcome()
        XCTAssertTrue(outcome.succeeded, "\(outcome)")
        XCTAssertEqual(outcome.processing.status, .processed)
        XCTAssertEqual(outcome.processing.processingResult, .succeeded)
        XCTAssertEqual(task.processingId(), outcome.processing.id)
        XCTAssertTrue(outcome.downloaded.contains { $0.hasSuffix("trajectory.csv") }, "\(outcome.downloaded)")
        // Pre-signed addresses are secrets: printing the outcome does not show them.
        XCTAssertFalse("\(outcome)".contains("Signature="))

        let stages = recorder.seen
        guard case .creatingContainer = stages.first else { return XCTFail("\(stages)") }
        XCTAssertTrue(stages.contains { if case .uploading = $0 { true } else { false } }, "\(stages)")
        XCTAssertTrue(stages.contains { if case .running = $0 { true } else { false } }, "\(stages)")
        XCTAssertTrue(stages.contains { if case .downloading = $0 { true } else { false } }, "\(stages)")
        guard case .done = stages.last else { return XCTFail("\(stages)") }

        // `svc process` on the same inputs, against the same emulator (run by the xtask).
        let ours = try String(contentsOf: out.appendingPathComponent("trajectory.csv"), encoding: .utf8)
        let theirs = try String(contentsOf: Env.fixture("cli/trajectory.csv"), encoding: .utf8)
        XCTAssertGreaterThan(ours.split(separator: "\n").count, 10)
        XCTAssertEqual(ours, theirs)
    }

    func testCancellingTheWaitingTaskCancelsTheWorkflow() async throws {
        let client = try CloudClient.create(config: Env.config())
        let task = try Workflow(client: client).start(job: job(nil), options: options)
        let waiting = Task { try await task.outcome() }
        let deadline = Date().addingTimeInterval(60)
        while task.processingId() == nil {
            XCTAssertLessThan(Date(), deadline, "the processing never started")
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        waiting.cancel()
        let waited = await svcError { try await waiting.value }
        XCTAssertEqual(waited?.kind, "canceled")
        let again = await svcError { try await task.wait() }
        XCTAssertEqual(again?.kind, "canceled")
        let processingId = try XCTUnwrap(task.processingId())
        XCTAssertEqual(again?.processingId, processingId)
        // The processing goes on in the cloud until cancelled there.
        let processing = try await client.getProcessing(processingId: processingId)
        XCTAssertTrue([ProcessingStatus.pending, .processing].contains(processing.status), "\(processing)")
        try await client.cancelProcessing(processingId: processingId)
        let canceled = try await client.getProcessing(processingId: processingId)
        XCTAssertEqual(canceled.status, .canceled)
    }

    func testTypedCloudErrors() async throws {
        let refused = try CloudClient.create(config: Env.config(secret: "not-the-secret"))
        let e = await svcError { try await refused.serverInfo() }
        XCTAssertEqual(e?.kind, "authentication")
        XCTAssertFalse(e?.reason.contains("not-the-secret") ?? true)

        let client = try CloudClient.create(config: Env.config())
        let missing = await svcError { try await client.getProcessing(processingId: "00000000-0000-4000-8000-000000000000") }
        XCTAssertEqual(missing?.kind, "not_found")
        XCTAssertEqual(missing?.status, 404)
        XCTAssertEqual(missing?.operation, "getProcessing")
        let invalid = await svcError { try await client.getContainer(containerId: "not-a-uuid") }
        XCTAssertEqual(invalid?.kind, "invalid_input")

        let pager = client.listContainers()
        var total = 0
        while let page = try await pager.nextPage() {
            total += page.count
        }
        let all = try await client.listContainersAll()
        XCTAssertEqual(total, all.count)
    }
}
