import Foundation
import SvcSdk
import Testing

/// A link as USB and BLE stacks behave: every third read gives nothing (a USB serial
/// driver's read returns empty every 16 ms or so while the unit is silent), the others
/// give pieces of 7 or 512 bytes; writes arrive in pieces of at most
/// `SerialOptions.maxWriteBytes`. Once `unplugAtNextWrite` is set, the next write sends
/// 6 bytes and the link is gone (a cable pulled mid-request).
final class UsbLikeLink: ByteLink, @unchecked Sendable {
    private let inner: SocketLink
    private let lock = NSLock()
    private var pending = Data()
    private var reads = 0
    private(set) var emptyReads = 0
    private(set) var largestWrite = 0
    var unplugAtNextWrite = false
    private var unplugged = false

    init(_ inner: SocketLink) {
        self.inner = inner
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func read(maxBytes: Int) async throws -> Data {
        let (gone, read) = locked { () -> (Bool, Int) in
            reads += 1
            return (unplugged, reads - 1)
        }
        if gone { throw LinkError.closed }
        if read % 3 == 0 {
            locked { emptyReads += 1 }
            return Data()
        }
        if locked({ pending.isEmpty }) {
            let more = try await inner.read(maxBytes: maxBytes)
            locked { pending.append(more) }
        }
        return locked {
            let n = min(pending.count, read % 3 == 1 ? 7 : 512, Int(maxBytes))
            let piece = pending.prefix(n)
            pending.removeFirst(n)
            return Data(piece)
        }
    }

    func write(data: Data) async throws {
        let (gone, unplug) = locked { () -> (Bool, Bool) in
            largestWrite = max(largestWrite, data.count)
            return (unplugged, unplugAtNextWrite)
        }
        if gone { throw LinkError.closed }
        if unplug {
            try await inner.write(data: data.prefix(6))
            inner.unplug()
            locked { unplugged = true }
            throw LinkError.io(reason: "accessory disconnected")
        }
        try await inner.write(data: data)
    }
}

/// A link over which the unit never answers: reads give nothing, every 20 ms.
final class SilentLink: ByteLink, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var reads: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func read(maxBytes: Int) async throws -> Data {
        lock.withLock { count += 1 }
        try await Task.sleep(nanoseconds: 20_000_000)
        return Data()
    }

    func write(data: Data) async throws {}
}

/// A counter the main actor increments.
@MainActor
final class Ticks {
    var count = 0
}

/// Runs `call` in a Task cancelled after 200 ms: it must end with `CancellationError`
/// at once (nothing is polled). What went wrong, or `nil`.
func endsWhenItsTaskIsCancelled<T: Sendable>(_ call: @escaping @Sendable () async throws -> T) async -> String? {
    let task = Task { try await call() }
    try? await Task.sleep(nanoseconds: 200_000_000)
    let cancelled = Date()
    task.cancel()
    if let wrong = await cancellationFailure(task) {
        return wrong
    }
    let took = Date().timeIntervalSince(cancelled)
    return took < 0.5 ? nil : "ended \(took) s after it was cancelled"
}

/// The emulated unit over its three links, and its typed errors. Serialized: the
/// tests share one unit (and its settings lock).
@Suite(.serialized)
struct UnitTests {
    func configure(_ unit: InsUnit, _ label: String) async throws {
        try await unit.login(user: .setup, password: "")
        #expect(unit.user() == .setup)
        let info = try await unit.info()
        #expect(!info.serialNumber.isEmpty)
        let outcome = try await unit.write(patch: #"{"oem":{"label":"\#(label)"}}"#, checkOnly: false)
        #expect(!outcome.needReboot)
        #expect(try await unit.node(path: "oem/label") == "\"\(label)\"")
        let report = try await unit.applyWanted(wanted: #"{"oem":{"label":"\#(label)!"}}"#, options: ApplyOptions(lock: true))
        #expect(report.changed == ["oem/label"])
        #expect(report.written)
        #expect(try await unit.node(path: "oem/label") == "\"\(label)!\"")
        try await unit.logout()
    }

    @Test func overHttp() async throws {
        try await configure(InsUnit.http(url: Env.text("device_url")), "over http")
    }

    @Test func overTheSerialTcpBridge() async throws {
        try await configure(InsUnit.serialTcp(address: Env.bridge), "over tcp")
    }

    @Test func overAByteLinkWrittenInSwift() async throws {
        let link = try SocketLink(address: Env.bridge)
        let unit = InsUnit.overLink(link: link, describe: "swift socket")
        #expect(unit.link() == "swift socket")
        try await configure(unit, "over a byte link")
        #expect(try await unit.export().count > 1000)
    }

    @Test func aByteLinkWithEmptyAndFragmentedReadsAndSmallWrites() async throws {
        let link = UsbLikeLink(try SocketLink(address: Env.bridge))
        let unit = InsUnit.overLink(link: link, describe: "usb", options: SerialOptions(maxWriteBytes: 20))
        try await configure(unit, "through a usb-like link")
        #expect(try await unit.export().count > 1000)
        #expect(link.emptyReads > 10)
        #expect(link.largestWrite == 20)
    }

    @Test func aLinkUnpluggedMidRequestFailsItClearlyAndAppliesNothing() async throws {
        let http = try InsUnit.http(url: Env.text("device_url"))
        try await http.login(user: .setup, password: "")
        let label = try await http.node(path: "oem/label")
        let link = UsbLikeLink(try SocketLink(address: Env.bridge))
        let unit = InsUnit.overLink(link: link, describe: "accessory")
        try await unit.login(user: .setup, password: "")
        link.unplugAtNextWrite = true
        let e = await svcError { try await unit.write(patch: #"{"oem":{"label":"half-written"}}"#, checkOnly: false) }
        #expect(e?.kind == .unreachable)
        #expect(e?.side == "unit")
        #expect(e?.reason.contains("accessory") == true, "\(String(describing: e))")
        #expect(await svcError { try await unit.info() }?.kind == .unreachable)
        // The unit discarded the cut frame.
        #expect(try await http.node(path: "oem/label") == label)
    }

    @Test func cancellingTheTaskCancelsUnitCallsOverHttpAndOverAByteLink() async throws {
        let silent = SilentLink()
        let overLink = InsUnit.overLink(link: silent, describe: "silent")
        #expect(await endsWhenItsTaskIsCancelled { try await overLink.info() } == nil)
        // The work stopped: the link is not read any more.
        try await Task.sleep(nanoseconds: 100_000_000)
        let reads = silent.reads
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(silent.reads == reads)

        let hung = HungServer()
        let overHttp = try InsUnit.http(url: hung.url)
        #expect(await endsWhenItsTaskIsCancelled { try await overHttp.info() } == nil)
    }

    @MainActor
    @Test func aCallFromTheMainActorDoesNotBlockIt() async throws {
        let unit = InsUnit.overLink(link: SilentLink(), describe: "silent")
        let call = Task { @MainActor in try await unit.info() }
        let ticks = Ticks()
        let ticker = Task { @MainActor in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 10_000_000)
                ticks.count += 1
            }
        }
        try await Task.sleep(nanoseconds: 500_000_000)
        ticker.cancel()
        _ = await ticker.value
        // The main actor kept running the ticker while the call waited.
        #expect(ticks.count >= 25, "\(ticks.count) ticks in 500 ms")
        call.cancel()
        _ = try? await call.value
    }

    @Test func typedErrors() async throws {
        let url = Env.text("device_url")
        let a = try InsUnit.http(url: url)
        let b = try InsUnit.http(url: url)
        try await a.login(user: .setup, password: "")
        try await b.login(user: .setup, password: "")

        let invalid = await svcError {
            try await a.write(
                patch: #"{"output":{"comA":{"messages":{"imuShort":"10ms","noSuchMessage":"10ms"}},"comB":{"messages":{"ekfNav":"7ms"}}}}"#,
                checkOnly: false)
        }
        #expect(invalid?.kind == .invalidInput)
        #expect(invalid?.status == 422)
        #expect(Set(invalid?.nodeErrors.map(\.path) ?? []) == ["output/comA/messages/noSuchMessage", "output/comB/messages/ekfNav"])

        try await a.lock()
        do {
            _ = try await b.write(patch: #"{"oem":{"label":"b"}}"#, checkOnly: false)
            Issue.record("a write under another session's lock succeeded")
        } catch let e as SvcError {
            // The common accessors, and the case still matchable.
            #expect(e.kind() == .conflict)
            #expect(e.status() == 409)
            #expect(e.operation() == "updateSettings")
            #expect(!e.retryable())
            guard case .conflict = e else {
                Issue.record("\(e)")
                return
            }
        }
        // Locks nest: the inner unlock gives back the inner hold only.
        try await a.lock()
        try await a.unlock()
        let still = await svcError { try await b.write(patch: #"{"oem":{"label":"b"}}"#, checkOnly: false) }
        #expect(still?.kind == .conflict)
        try await a.unlock()
        _ = try await b.write(patch: #"{"oem":{"label":"b"}}"#, checkOnly: false)
        // Giving back a lock the session does not hold is refused before sending.
        let notHeld = await svcError { try await a.unlock() }
        #expect(notHeld?.kind == .invalidInput)

        let refused = await svcError { try await InsUnit.http(url: url).login(user: .factory, password: "pa55-swift") }
        #expect(refused?.kind == .authentication)
        #expect(refused?.status == 401)
        #expect(!(refused?.reason.contains("pa55-swift") ?? true))

        #expect(await svcError { try InsUnit.http(url: "ftp://unit") }?.kind == .invalidInput)
        // An address reaching the unit's routes would turn every write into a restore of
        // the defaults or a reboot: refused before anything is sent.
        for tail in ["/api/v1/settings/default#", "/api/v1/reboot?", "/?auth=x"] {
            let e = await svcError { try InsUnit.http(url: url + tail) }
            #expect(e?.kind == .invalidInput)
            #expect(e?.reason.contains("not a unit address") ?? false)
        }
        #expect(await svcError { try await InsUnit.serialTcp(address: "127.0.0.1:1") }?.kind == .unreachable)
    }
}
