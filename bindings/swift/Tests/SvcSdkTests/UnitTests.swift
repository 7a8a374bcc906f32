import Foundation
import SvcSdk
import Testing

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
        try await configure(InsUnit.serialTcp(address: Env.text("device_serial_tcp")), "over tcp")
    }

    @Test func overAByteLinkWrittenInSwift() async throws {
        let link = try SocketLink(address: Env.text("device_serial_tcp"))
        let unit = InsUnit.overLink(link: link, describe: "swift socket")
        #expect(unit.link() == "swift socket")
        try await configure(unit, "over a byte link")
        #expect(try await unit.export().count > 1000)
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
        #expect(invalid?.kind == "invalid_input")
        #expect(invalid?.status == 422)
        #expect(Set(invalid?.nodeErrors.map(\.path) ?? []) == ["output/comA/messages/noSuchMessage", "output/comB/messages/ekfNav"])

        try await a.lock()
        let locked = await svcError { try await b.write(patch: #"{"oem":{"label":"b"}}"#, checkOnly: false) }
        #expect(locked?.kind == "conflict")
        #expect(locked?.status == 409)
        // Locks nest: the inner unlock gives back the inner hold only.
        try await a.lock()
        try await a.unlock()
        let still = await svcError { try await b.write(patch: #"{"oem":{"label":"b"}}"#, checkOnly: false) }
        #expect(still?.kind == "conflict")
        try await a.unlock()
        _ = try await b.write(patch: #"{"oem":{"label":"b"}}"#, checkOnly: false)
        // Giving back a lock the session does not hold is refused before sending.
        let notHeld = await svcError { try await a.unlock() }
        #expect(notHeld?.kind == "invalid_input")

        let refused = await svcError { try await InsUnit.http(url: url).login(user: .factory, password: "pa55-swift") }
        #expect(refused?.kind == "authentication")
        #expect(refused?.status == 401)
        #expect(!(refused?.reason.contains("pa55-swift") ?? true))

        #expect(await svcError { try InsUnit.http(url: "ftp://unit") }?.kind == "invalid_input")
        #expect(await svcError { try await InsUnit.serialTcp(address: "127.0.0.1:1") }?.kind == "unreachable")
    }
}
