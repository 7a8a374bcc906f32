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
        var stamps: [TimeInterval] = []
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
        let stats = try await stream.stats()
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

    /// An sbgECom `status` frame (class 0, id 1) with this timestamp.
    func statusFrame(_ timestamp: UInt32) -> [UInt8] {
        var payload = withUnsafeBytes(of: timestamp.littleEndian) { Array($0) }
        payload += [UInt8](repeating: 0, count: 18)
        let body: [UInt8] = [0x01, 0x00, UInt8(payload.count), 0x00] + payload
        var crc: UInt16 = 0  // CRC-16/KERMIT
        for byte in body {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x8408 : crc >> 1 }
        }
        return [0xFF, 0x5A] + body + [UInt8(crc & 0xFF), UInt8(crc >> 8), 0x33]
    }

    @Test func aFileIsReadAsItGrows() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: path) }
        try Data((0..<25).flatMap { statusFrame(UInt32($0) * 1000) }).write(to: path)
        let stream = try await LiveStream.follow(path: path.path, idleEnd: 0.5)
        var stamps: [TimeInterval] = []
        for try await item in stream.items {
            guard case .record(let record) = item else { continue }
            #expect(record.message == "status")
            stamps.append(try #require(record.timestamp))
            if stamps.count == 25 {
                let file = try FileHandle(forWritingTo: path)
                file.seekToEndOfFile()
                file.write(Data((25..<50).flatMap { statusFrame(UInt32($0) * 1000) }))
                try file.close()
            }
        }
        // Everything, in order, then the end once the file stopped growing.
        #expect(stamps == (0..<50).map { Double($0) / 1000 })
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
