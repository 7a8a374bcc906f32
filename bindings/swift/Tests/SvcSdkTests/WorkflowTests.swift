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

    var done: Bool {
        seen.contains { if case .done = $0 { true } else { false } }
    }
}

/// Collects transfer progress; holds the transfer in its first report until `release()`
/// (so that a wait is cancelled while the transfer surely runs).
final class TransferRecorder: TransferListener, @unchecked Sendable {
    private let lock = NSLock()
    private var snapshots: [TransferProgress] = []
    private let gate = DispatchSemaphore(value: 0)

    func onProgress(progress: TransferProgress) {
        lock.lock()
        let first = snapshots.isEmpty
        snapshots.append(progress)
        lock.unlock()
        if first {
            _ = gate.wait(timeout: .now() + 30)
        }
    }

    func release() {
        gate.signal()
    }

    var last: TransferProgress? {
        lock.lock()
        defer { lock.unlock() }
        return snapshots.last
    }
}

final class WorkflowTests: XCTestCase {
    // The organization runs one processing at a time: wait for the previous test's.
    let options = WorkflowOptions(waitForFreeOrganization: true, pollInitial: 0.05, pollMax: 0.5)

    func job(_ out: URL?) throws -> ProcessingJob {
        ProcessingJob(
            inputs: [Env.fixture("rover.nmea").path, Env.fixture("imu.csv").path],
            processingConfig: try Env.sampleConfig(),
            name: "swift test",
            outputFolder: out?.path
        )
    }

    func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("svc-swift-\(UUID())")
    }

    func testTheWholeWorkflowWithProgressGivesTheTrajectorySvcProcessGives() async throws {
        let client = try CloudClient.create(config: Env.config())
        let out = temporaryFolder()
        let recorder = Recorder()
        let task = try Workflow(client: client).start(job: job(out), options: options, listener: recorder)
        // The same reports as an AsyncSequence, read beside the listener.
        let reading = Task { () throws -> [WorkflowProgress] in
            var seen: [WorkflowProgress] = []
            for try await progress in task.reports { seen.append(progress) }
            return seen
        }
        let outcome = try await task.wait()
        let read = try await reading.value
        guard case .creatingContainer = read.first else { return XCTFail("\(read)") }
        XCTAssertTrue(read.contains { if case .running = $0 { true } else { false } }, "\(read)")
        guard case .done = read.last else { return XCTFail("\(read)") }
        XCTAssertTrue(outcome.succeeded, "\(outcome)")
        XCTAssertTrue(task.isFinished())
        XCTAssertEqual(outcome.processing.status, .processed)
        XCTAssertEqual(outcome.processing.processingResult, .succeeded)
        XCTAssertEqual(task.processingId(), outcome.processing.id)
        // The service returns the configuration submitted, as the same values.
        XCTAssertEqual(outcome.processing.processingConfig, try Env.sampleConfig())
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

    func testACancelledWaitCancelsTheWorkflowUnlessDetachedCancelStopsIt() async throws {
        let client = try CloudClient.create(config: Env.config())
        // The Task that waits is cancelled (a view going away): the wait ends, and so
        // does the workflow.
        let scoped = try Workflow(client: client).start(job: job(nil), options: options)
        let began = await eventually { scoped.processingId() != nil }
        XCTAssertTrue(began, "the processing never started")
        let waitingScoped = Task { try await scoped.wait() }
        try await Task.sleep(nanoseconds: 100_000_000)
        waitingScoped.cancel()
        let first = await cancellationFailure(waitingScoped)
        XCTAssertNil(first)
        let after = await svcError { try await scoped.wait() }
        XCTAssertEqual(after?.kind, .canceled)

        // Detached, it goes on to its end when its wait is cancelled.
        let recorder = Recorder()
        let task = try Workflow(client: client).start(job: job(nil), options: options, listener: recorder)
        task.detach()
        let started = await eventually { task.processingId() != nil }
        XCTAssertTrue(started, "the processing never started")
        let waiting = Task { try await task.wait() }
        try await Task.sleep(nanoseconds: 100_000_000)
        waiting.cancel()
        let waited = await cancellationFailure(waiting)
        XCTAssertNil(waited)
        let ended = await eventually { recorder.done }
        XCTAssertTrue(ended, "the workflow stopped")
        let outcome = try await task.wait()
        XCTAssertTrue(outcome.succeeded)

        // cancel() stops it; every wait then says so.
        let stopped = try Workflow(client: client).start(job: job(nil), options: options)
        let running = await eventually { stopped.processingId() != nil }
        XCTAssertTrue(running)
        stopped.cancel()
        let again = await svcError { try await stopped.wait() }
        XCTAssertEqual(again?.kind, .canceled)
        let processingId = try XCTUnwrap(stopped.processingId())
        XCTAssertEqual(again?.processingId, processingId)
        // The processing goes on in the cloud until cancelled there.
        let processing = try await client.getProcessing(processingId: processingId)
        XCTAssertTrue([ProcessingStatus.pending, .processing].contains(processing.status), "\(processing)")
        try await client.cancelProcessing(processingId: processingId)
        let canceled = try await client.getProcessing(processingId: processingId)
        XCTAssertEqual(canceled.status, .canceled)
    }

    func testAWaitInATaskAlreadyCancelledEndsAtOnceWithoutTouchingTheWorkflow() async throws {
        let client = try CloudClient.create(config: Env.config())
        let task = try Workflow(client: client).start(job: job(nil), options: options)
        let began = await eventually { task.processingId() != nil }
        XCTAssertTrue(began, "the processing never started")
        // The Task is cancelled before it awaits: the call ends before it begins to wait.
        let waiting = Task {
            while !Task.isCancelled {
                await Task.yield()
            }
            let entered = Date()
            do {
                _ = try await task.wait()
                return "an outcome"
            } catch is CancellationError {
                return Date().timeIntervalSince(entered) < 0.5 ? "ended at once" : "ended late"
            }
        }
        waiting.cancel()
        let how = try await waiting.value
        XCTAssertEqual(how, "ended at once")
        // A wait that never began did not cancel the workflow: it goes on to its end.
        let outcome = try await task.wait()
        XCTAssertTrue(outcome.succeeded)
    }

    func testAProcessingStartedEarlierIsResumedToItsOutputs() async throws {
        let client = try CloudClient.create(config: Env.config())
        // Started, not followed (as an app that was closed meanwhile).
        let notFollowed = WorkflowOptions(waitForFreeOrganization: true, follow: false, pollInitial: 0.05, pollMax: 0.5)
        let started = try await Workflow(client: client).start(job: job(nil), options: notFollowed).wait()
        let out = temporaryFolder()
        let recorder = Recorder()
        let outcome = try await Workflow(client: client)
            .resume(processingId: started.processing.id, outputFolder: out.path, options: options, listener: recorder)
            .wait()
        XCTAssertTrue(outcome.succeeded, "\(outcome)")
        XCTAssertEqual(outcome.processing.id, started.processing.id)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out.appendingPathComponent("trajectory.csv").path))
        XCTAssertTrue(recorder.done)
    }

    func testUploadsToAContainerThenDownloadsOfOutputs() async throws {
        let client = try CloudClient.create(config: Env.config())
        let inputs = [Env.fixture("rover.nmea"), Env.fixture("imu.csv")]
        func size(_ url: URL) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        }
        let container = try await client.createContainer(request: CreateContainerRequest(
            region: .euWest3,
            files: try inputs.map { CreateContainerFile(path: $0.lastPathComponent, size: try size($0), fileType: .input) }
        ))
        let jobs = try container.files.map { file in
            let local = try XCTUnwrap(inputs.first { $0.lastPathComponent == file.path })
            return UploadJob(localPath: local.path, containerPath: file.path, size: try size(local), uploadInfo: try XCTUnwrap(file.uploadInfo))
        }
        let recorder = TransferRecorder()
        let upload = try Transfers(options: TransferOptions(parallelism: 2, progressInterval: 0.01), listener: recorder).upload(jobs: jobs)
        // Detached, a cancelled wait ends (the transfer is held in its first report
        // meanwhile)…
        upload.detach()
        let waiting = Task { try await upload.wait() }
        try await Task.sleep(nanoseconds: 100_000_000)
        waiting.cancel()
        let waited = await cancellationFailure(waiting)
        XCTAssertNil(waited)
        XCTAssertFalse(upload.isFinished())
        // …and the transfer goes on to its end.
        recorder.release()
        let report = try await upload.wait()
        XCTAssertEqual(report.files.map(\.bytes).sorted(), try inputs.map(size).sorted())
        XCTAssertTrue(report.files.allSatisfy { $0.state == .done }, "\(report)")
        XCTAssertEqual(recorder.last?.finished, true)
        let uploaded = try await client.getContainer(containerId: container.id)
        XCTAssertTrue(uploaded.files.allSatisfy { $0.status == .ready }, "\(uploaded)")

        let outcome = try await Workflow(client: client).start(job: job(nil), options: options).wait()
        let outputs = try await client.listProcessingOutputs(processingId: outcome.processing.id)
        let folder = temporaryFolder()
        let download = try await Transfers(options: TransferOptions()).download(outputs: outputs, folder: folder.path).wait()
        XCTAssertEqual(download.files.count, outputs.count)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("trajectory.csv").path))
    }

    func testFilesUploadedToAContainerByPathOutputsDownloadedByProcessingAnUnknownContainerTyped() async throws {
        let client = try CloudClient.create(config: Env.config())
        let rover = Env.fixture("rover.nmea")
        let size = (try FileManager.default.attributesOfItem(atPath: rover.path)[.size] as? NSNumber)?.intValue ?? 0
        let container = try await client.createContainer(request: CreateContainerRequest(
            region: .euWest3, files: [CreateContainerFile(path: "gnss/rover.nmea", size: size, fileType: .input)]
        ))
        let transfers = try Transfers(options: TransferOptions())
        let missing = await svcError {
            try await transfers.uploadToContainer(client: client, containerId: UUID().uuidString.lowercased(), files: ["gnss/rover.nmea": rover.path])
        }
        XCTAssertEqual(missing?.kind, .notFound)
        XCTAssertEqual(missing?.status, 404)
        XCTAssertEqual(missing?.operation, "getContainer")
        XCTAssertTrue(missing?.reason.contains("nothing was transferred") ?? false, "\(String(describing: missing))")

        let report = try await transfers.uploadToContainer(client: client, containerId: container.id, files: ["gnss/rover.nmea": rover.path])
        XCTAssertEqual(report.files.map(\.bytes), [size])
        let uploaded = try await client.getContainer(containerId: container.id)
        XCTAssertEqual(uploaded.files.first?.status, .ready)

        let processing = try await client.startProcessing(request: StartProcessingRequest(
            containerId: container.id,
            processingConfig: try Env.sampleConfig()
        ))
        let deadline = Date().addingTimeInterval(30)
        while try await client.getProcessing(processingId: processing.id).status != .processed {
            XCTAssertLessThan(Date(), deadline, "the processing did not end")
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        // Times are `TimeInterval`s, not counts of seconds.
        let ended = try await client.getProcessing(processingId: processing.id)
        let ran: TimeInterval = try XCTUnwrap(ended.processingDuration)
        XCTAssertGreaterThanOrEqual(ran, 1)
        let folder = temporaryFolder()
        let downloaded = try await transfers.downloadOutputs(client: client, processingId: processing.id, folder: folder.path)
        let outputs = try await client.listProcessingOutputs(processingId: processing.id)
        XCTAssertEqual(downloaded.files.count, outputs.count)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("trajectory.csv").path))
    }

    func testACancelledTaskStopsAnUploadAtTheStorage() async throws {
        // `cargo xtask swift` runs the emulator with a slow uplink (4 MiB/s): 8 MiB are
        // still in flight 300 ms after the start.
        let client = try CloudClient.create(config: Env.config())
        let local = temporaryFolder().appendingPathComponent("imu.bin")
        try FileManager.default.createDirectory(at: local.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 7, count: 8 * 1024 * 1024).write(to: local)
        let container = try await client.createContainer(request: CreateContainerRequest(
            region: .euWest3, files: [CreateContainerFile(path: "imu.bin", size: 8 * 1024 * 1024, fileType: .input)]
        ))
        let transfers = try Transfers(options: TransferOptions())
        let upload = Task { try await transfers.uploadToContainer(client: client, containerId: container.id, files: ["imu.bin": local.path]) }
        try await Task.sleep(nanoseconds: 300_000_000)
        upload.cancel()
        do {
            _ = try await upload.value
            XCTFail("the cancelled upload ended with a report")
        } catch is CancellationError {}
        // Past the time the whole file would have taken: the storage never got it.
        try await Task.sleep(nanoseconds: 2_500_000_000)
        let after = try await client.getContainer(containerId: container.id)
        XCTAssertEqual(after.files.first?.status, .pending)
    }

    func testAnUploadsProgressAsAnAsyncSequenceEndsWithTheFinishedSnapshot() async throws {
        let client = try CloudClient.create(config: Env.config())
        let imu = Env.fixture("imu.csv")
        let size = (try FileManager.default.attributesOfItem(atPath: imu.path)[.size] as? NSNumber)?.intValue ?? 0
        let container = try await client.createContainer(request: CreateContainerRequest(
            region: .euWest3, files: [CreateContainerFile(path: "imu.csv", size: size, fileType: .input)]
        ))
        let file = try XCTUnwrap(container.files.first)
        let upload = try Transfers(options: TransferOptions()).upload(jobs: [
            UploadJob(localPath: imu.path, containerPath: file.path, size: size, uploadInfo: try XCTUnwrap(file.uploadInfo)),
        ])
        var seen: [TransferProgress] = []
        for try await progress in upload.progressUpdates {
            seen.append(progress)
        }
        XCTAssertFalse(seen.dropLast().contains { $0.finished }, "\(seen)")
        let last = try XCTUnwrap(seen.last)
        XCTAssertTrue(last.finished)
        XCTAssertEqual(last.doneBytes, size)
        XCTAssertEqual(seen.map(\.doneBytes), seen.map(\.doneBytes).sorted())
        let report = try await upload.wait()
        XCTAssertEqual(report.files.first?.bytes, size)
    }

    func testCancellingTheTaskCancelsCloudCallsAndPagers() async throws {
        let hung = HungServer()
        let base = Env.config()
        let client = try CloudClient.create(config: CloudConfig(
            baseUrl: hung.url, authUrl: hung.url, notificationUrl: base.notificationUrl,
            apiKey: base.apiKey, apiSecret: base.apiSecret, organizationId: base.organizationId
        ))
        let info = await endsWhenItsTaskIsCancelled { try await client.serverInfo() }
        XCTAssertNil(info)
        let pager = client.listContainers()
        let page = await endsWhenItsTaskIsCancelled { try await pager.nextPage() }
        XCTAssertNil(page)
        let all = await endsWhenItsTaskIsCancelled { try await client.listProcessingsAll() }
        XCTAssertNil(all)
    }

    func testTypedCloudErrors() async throws {
        let refused = try CloudClient.create(config: Env.config(secret: "not-the-secret"))
        let e = await svcError { try await refused.serverInfo() }
        XCTAssertEqual(e?.kind, .authentication)
        XCTAssertFalse(e?.reason.contains("not-the-secret") ?? true)

        let client = try CloudClient.create(config: Env.config())
        let missing = await svcError { try await client.getProcessing(processingId: "00000000-0000-4000-8000-000000000000") }
        XCTAssertEqual(missing?.kind, .notFound)
        XCTAssertEqual(missing?.status, 404)
        XCTAssertEqual(missing?.operation, "getProcessing")
        XCTAssertEqual(missing?.retryable, false)
        let invalid = await svcError { try await client.getContainer(containerId: "not-a-uuid") }
        XCTAssertEqual(invalid?.kind, .invalidInput)
        // What an alert or a log line shows: the sentence, not the fields.
        do {
            _ = try await client.getProcessing(processingId: "00000000-0000-4000-8000-000000000000")
            XCTFail("an unknown processing was found")
        } catch let error as SvcError {
            XCTAssertEqual(error.localizedDescription, error.reason())
            XCTAssertEqual("\(error)", error.reason())
            XCTAssertFalse(error.localizedDescription.contains("status="))
        }

        let pager = client.listContainers()
        var total = 0
        while let page = try await pager.nextPage() {
            total += page.count
        }
        let all = try await client.listContainersAll()
        XCTAssertEqual(total, all.count)
    }
}
