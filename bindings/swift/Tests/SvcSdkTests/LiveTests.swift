import Foundation
import SvcSdk
import Testing

/// The unit's live output logs from Swift: records over the serial bridge as an
/// `AsyncSequence` beside other calls, cancellation, readiness, typed errors.
@Suite(.serialized)
struct LiveTests {
    /// Port A streams ekfNav every 10 ms and what readiness needs (once another suite's
    /// session, which shares the unit, has given the settings lock back).
    func portA() async throws {
        let http = try InsUnit.http(url: Env.text("device_url"))
        try await http.login(user: .setup, password: "")
        for attempt in 1...100 {
            do {
                _ = try await http.write(
                    patch: #"{"output":{"comA":{"messages":{"ekfNav":"10ms","utcTime":"100ms","gps1Pos":"100ms"}}}}"#,
                    checkOnly: false
                )
                return
            } catch let e as SvcError where e.kind() == .conflict && attempt < 100 {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    @Test func recordsComeInOrderAsAnAsyncSequence() async throws {
        try await portA()
        let unit = try await InsUnit.serialTcp(address: Env.bridge)
        let stream = try unit.subscribe(messages: ["ekfNav"])
        var stamps: [Int64] = []
        for try await item in stream.items {
            guard case .record(let record) = item else { continue }
            #expect(record.message == "ekfNav")
            let latitude = try #require(record.value("latitude"))
            #expect(latitude > 48.8 && latitude < 48.9)
            stamps.append(try #require(record.timestamp))
            if stamps.count % 10 == 0 {
                _ = try await unit.info()
            }
            if stamps.count == 30 { break }
        }
        #expect(stamps == stamps.sorted())
        let stats = await stream.stats()
        #expect(stats.records >= 30)
        #expect(stats.dropped == 0)
        stream.stop()
        #expect(try await stream.next() == nil)
    }

    @Test func aCancelledTaskEndsTheSequence() async throws {
        try await portA()
        let unit = try await InsUnit.serialTcp(address: Env.bridge)
        let stream = try unit.subscribe(messages: ["ekfNav"])
        let reader = Task {
            var count = 0
            for try await _ in stream.items { count += 1 }
            return count
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        reader.cancel()
        let count = try await reader.value
        #expect(count > 5)
    }

    @Test func waitReadyAndErrors() async throws {
        try await portA()
        let unit = try await InsUnit.serialTcp(address: Env.bridge)
        let ready = try await unit.waitReady(timeout: 10)
        #expect(ready.filter == "NavPosition")
        #expect(ready.utcValid == true)
        #expect(ready.gnssReceived)

        let http = try InsUnit.http(url: Env.text("device_url"))
        #expect(await svcError { try http.subscribe() }?.kind == .invalidInput)
        #expect(await svcError { try unit.subscribe(messages: ["ekfNavv"]) }?.kind == .invalidInput)
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID())").path
        #expect(await svcError { try await LiveStream.follow(path: missing) }?.kind == .unreachable)
    }
}
