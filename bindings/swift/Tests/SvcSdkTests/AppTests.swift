import Foundation
import SvcSdk
import Testing

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The app's backend, which holds the organization's key and secret and hands out
/// access tokens.
final class Backend: TokenProvider, @unchecked Sendable {
    private let minting: CloudClient
    private let lock = NSLock()
    private var count = 0

    init(_ minting: CloudClient) {
        self.minting = minting
    }

    var calls: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func accessToken() async throws -> AccessToken {
        lock.withLock { count += 1 }
        return try await minting.accessToken()
    }
}

final class Refusing: TokenProvider, @unchecked Sendable {
    func accessToken() async throws -> AccessToken {
        throw TokenProviderError.refused(reason: "signed out")
    }
}

/// Collects the SDK's log records (an app hands them to `os_log`).
final class Collect: LogSink, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LogRecord] = []

    func log(record: LogRecord) {
        lock.lock()
        stored.append(record)
        lock.unlock()
    }

    var records: [LogRecord] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// The resident set of this process, in bytes (Linux).
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return kilobytes * 1024
}

/// What a distributed app needs: tokens from its backend, logs, a long life.
@Suite(.serialized)
struct AppTests {
    @Test func aClientWithATokenProviderHoldsNoSecret() async throws {
        let backend = Backend(try CloudClient.create(config: Env.config()))
        let config = Env.appConfig(backend)
        #expect(!"\(config)".contains(Env.text("api_secret")))
        let client = try CloudClient.create(config: config)
        _ = try await client.serverInfo()
        _ = try await client.listContainersAll()
        #expect(backend.calls == 1)

        let refused = await svcError { try await CloudClient.create(config: Env.appConfig(Refusing())).serverInfo() }
        #expect(refused?.kind == .authentication)
        #expect(refused?.reason.contains("signed out") == true)
        #expect(refused?.retryable == false)
    }

    @Test func aWorkflowAndAUnitSessionLogThroughTheSinkWithoutASecret() async throws {
        let sink = Collect()
        try setLogSink(sink: sink, level: .trace)
        let client = try CloudClient.create(config: Env.config())
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("svc-logs-\(UUID())")
        let outcome = try await Workflow(client: client).start(
            job: ProcessingJob(
                inputs: [Env.fixture("rover.nmea").path, Env.fixture("imu.csv").path],
                processingConfig: try Env.sampleConfig(),
                outputFolder: out.path
            ),
            options: WorkflowOptions(waitForFreeOrganization: true, pollInitial: 0.05)
        ).wait()
        let unit = try InsUnit.http(url: Env.text("device_url"))
        try await unit.login(user: .setup, password: "")
        try await unit.changePassword(user: .viewer, password: "op-pa55word")
        _ = await svcError { try await InsUnit.http(url: Env.text("device_url")).login(user: .viewer, password: "wr0ng-pa55") }
        try await unit.changePassword(user: .viewer, password: "")
        let token = try await client.accessToken().token.reveal()
        try setLogSink(sink: nil, level: .trace)

        let records = sink.records
        #expect(records.count > 20)
        #expect(records.allSatisfy { $0.target.hasPrefix("svc_") })
        #expect(records.contains { $0.level == .info && $0.message.contains("access token obtained") })
        var secrets = [Env.text("api_secret"), token, "op-pa55word", "wr0ng-pa55"]
        for output in outcome.outputs {
            if let query = output.url.reveal().split(separator: "?", maxSplits: 1).dropFirst().first {
                secrets.append(String(query))
            }
        }
        for record in records {
            for secret in secrets {
                #expect(!record.message.contains(secret), "\(record)")
            }
        }
        let before = sink.records.count
        _ = try await unit.info()
        #expect(sink.records.count == before)
    }

    @Test func tenThousandCallsLeaveTheMemoryFlat() async throws {
        let tree = try String(contentsOf: Env.fixture("unit_default.json"), encoding: .utf8)
        let changed = tree.replacingOccurrences(of: #""label": """#, with: #""label": "leak check""#)
        #expect(changed != tree)
        let client = try CloudClient.create(config: Env.config())
        let unit = try InsUnit.http(url: Env.text("device_url"))
        try await unit.login(user: .setup, password: "")
        // Each call in turn: a sync call moving 32 KB each way, an object made and used,
        // an async call failing (its error crosses), an async call over HTTP.
        func call(_ i: Int) async throws {
            switch i % 4 {
            case 0:
                #expect(try settingsDiff(old: tree, new: changed).changed.count == 1)
            case 1:
                #expect(try SettingsTree.fromJson(json: changed).diffJson(new: tree).changed.count == 1)
            case 2:
                #expect(await svcError { try await client.getContainer(containerId: "not-a-uuid") }?.kind == .invalidInput)
            default:
                #expect(try await unit.node(path: "oem/label").isEmpty == false)
            }
        }
        for i in 0..<1_000 { try await call(i) }
        let before = residentBytes()
        let started = Date()
        for i in 0..<10_000 { try await call(i) }
        let seconds = Date().timeIntervalSince(started)
        let after = residentBytes()
        let report = String(
            format: "10,000 calls from Swift (settingsDiff of 32 KB trees, SettingsTree made and used, a failing async call, a unit call over HTTP; 2,500 each) in %.1f s: resident set %.1f -> %.1f MB (%+.2f MB)",
            seconds, Double(before) / 1e6, Double(after) / 1e6, Double(after - before) / 1e6
        )
        print(report)
        try? report.write(toFile: Env.fixture("memory.txt").path, atomically: true, encoding: .utf8)
        // A leaked 32 KB buffer per diff would be 80 MB; a leaked error, 0.5 MB.
        #expect(after - before < 4_000_000, "\(report)")
    }
}
