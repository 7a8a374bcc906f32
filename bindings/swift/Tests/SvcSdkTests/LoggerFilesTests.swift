import Foundation
import SvcSdk
import Testing

/// The unit's recorded sessions over FTP from Swift: list, download, delete with the
/// right, typed errors without the password.
@Suite(.serialized)
struct LoggerFilesTests {
    @Test func aRecordedSessionIsListedDownloadedAndDeletedWithTheRight() async throws {
        let ftp = Env.text("device_ftp")
        let unit = try InsUnit.http(url: Env.text("device_url"))
        try await unit.loggerStart()
        try await Task.sleep(nanoseconds: 300_000_000)
        try await unit.loggerStop()

        let viewer = try unit.loggerFiles(ftp: ftp)
        #expect(viewer.user() == "viewer")
        let sessions = try await viewer.sessions()
        let session = try #require(sessions.first { $0.name == "session" })
        #expect(session.recording == false)
        #expect(session.files.first?.name == "session.001")
        #expect(session.size == session.files.reduce(0) { $0 + $1.size })
        #expect(session.size > 0)

        let dest = FileManager.default.temporaryDirectory.appendingPathComponent("sessions-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dest) }
        let done = try await viewer.download(name: "session", dest: dest.path)
        #expect(done.bytes == session.size)
        #expect(!done.deleted)
        let first = dest.appendingPathComponent("session/session.001")
        #expect(done.files.first == first.path)
        let data = try Data(contentsOf: first)
        #expect(data.count == session.files[0].size)
        #expect(!FileManager.default.fileExists(atPath: first.path + ".part"))

        // A viewer may not delete: 550, typed; the session stays.
        let refused = await svcError { try await viewer.delete(session: "session") }
        #expect(refused?.kind == .permissionDenied)
        #expect(refused?.status == 550)
        #expect(await svcError { try await viewer.download(name: "nope", dest: dest.path) }?.kind == .notFound)

        // An operator: downloaded, checked, then deleted.
        let operatorFiles = try unit.loggerFiles(ftp: ftp, user: .operator, password: "")
        #expect(operatorFiles.user() == "operator")
        let again = dest.appendingPathComponent("again")
        let taken = try await operatorFiles.download(name: "session", dest: again.path, deleteAfter: true)
        #expect(taken.deleted)
        #expect(try Data(contentsOf: again.appendingPathComponent("session/session.001")) == data)
        #expect(try await operatorFiles.sessions().allSatisfy { $0.name != "session" })
    }

    @Test func wrongPasswordsAndMissingAddressesAreTyped() async throws {
        let ftp = Env.text("device_ftp")
        let unit = try InsUnit.http(url: Env.text("device_url"))
        let wrong = try unit.loggerFiles(ftp: ftp, user: .factory, password: "pa55-swift-ftp")
        let refused = await svcError { try await wrong.sessions() }
        #expect(refused?.kind == .authentication)
        #expect(refused?.status == 530)
        #expect(!(refused?.reason.contains("pa55-swift-ftp") ?? true))
        #expect(await svcError { try unit.loggerFiles(ftp: ftp, user: nil, password: "alone") }?.kind == .invalidInput)
        // A unit over a serial link has no host: the FTP address is needed.
        let serial = try await InsUnit.serialTcp(address: Env.bridge)
        #expect(await svcError { try serial.loggerFiles() }?.kind == .invalidInput)
        #expect(try serial.loggerFiles(ftp: ftp).address() == ftp)
    }
}
