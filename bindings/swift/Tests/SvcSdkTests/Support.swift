import Foundation
import SvcSdk

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The emulator started on the host by `cargo xtask swift` (its JSON line in
/// SVC_EMULATOR_JSON) and the test data (SVC_FIXTURES).
enum Env {
    static let info: [String: Any] = {
        let line = ProcessInfo.processInfo.environment["SVC_EMULATOR_JSON"] ?? "{}"
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
        return object as? [String: Any] ?? [:]
    }()

    static func text(_ name: String) -> String {
        info[name].map { "\($0)" } ?? ""
    }

    static let fixtures = URL(fileURLWithPath: ProcessInfo.processInfo.environment["SVC_FIXTURES"] ?? "fixtures")

    static func fixture(_ name: String) -> URL {
        fixtures.appendingPathComponent(name)
    }

    /// The sample's processing configuration, read as an app reads a bundled file.
    static func sampleConfig() throws -> ProcessingConfig {
        try processingConfigFromJson(json: String(contentsOf: fixture("processing.json"), encoding: .utf8))
    }

    static func config(secret: String? = nil) -> CloudConfig {
        CloudConfig(
            baseUrl: text("base_url"),
            authUrl: text("auth_url"),
            notificationUrl: text("notification_url"),
            apiKey: text("api_key"),
            apiSecret: Secret(value: secret ?? text("api_secret")),
            organizationId: text("organization_id")
        )
    }

    /// The settings of an app whose tokens come from `provider` (no key, no secret).
    static func appConfig(_ provider: TokenProvider) -> CloudConfig {
        CloudConfig(
            baseUrl: text("base_url"),
            notificationUrl: text("notification_url"),
            organizationId: text("organization_id"),
            tokenProvider: provider
        )
    }

    /// The serial bridge's host and port.
    static var bridge: String { text("device_serial_tcp") }
}

/// What every `SvcError` carries, read through its common accessors.
struct ErrorFields {
    let kind: ErrorKind
    let reason: String
    let status: Int?
    let operation: String?
    let code: String?
    let processingId: String?
    let nodeErrors: [NodeError]
    let retryable: Bool
    let side: String?
}

extension SvcError {
    var fields: ErrorFields {
        ErrorFields(
            kind: kind(), reason: reason(), status: status(), operation: operation(), code: code(),
            processingId: processingId(), nodeErrors: nodeErrors(), retryable: retryable(),
            side: side()
        )
    }
}

/// The `SvcError` an async call throws (nil when it succeeds; a test failure when it
/// throws something else).
/// How `task`, cancelled, ended: `nil` when with `CancellationError`, else what it gave.
func cancellationFailure<T>(_ task: Task<T, Error>) async -> String? {
    do {
        return "ended with \(try await task.value)"
    } catch is CancellationError {
        return nil
    } catch {
        return "ended with \(error)"
    }
}

func svcError<T>(_ call: () async throws -> T) async -> ErrorFields? {
    do {
        _ = try await call()
        return nil
    } catch let e as SvcError {
        return e.fields
    } catch {
        return ErrorFields(
            kind: .internal, reason: "not an SvcError: \(error)", status: nil, operation: nil, code: nil,
            processingId: nil, nodeErrors: [], retryable: false, side: nil
        )
    }
}

/// Polls `condition` every 10 ms until it holds; false after `seconds`.
func eventually(seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return true
}

/// A TCP server that accepts connections and never answers (a hung service or unit).
final class HungServer: @unchecked Sendable {
    private let fd: Int32
    let port: UInt16

    init() {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        listen(fd, 16)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(fd, $0, &length)
            }
        }
        self.fd = fd
        port = UInt16(bigEndian: bound.sin_port)
    }

    var url: String { "http://127.0.0.1:\(port)" }

    deinit {
        close(fd)
    }
}

/// A ByteLink over a TCP socket (POSIX), as an app writes one over USB serial, an
/// External Accessory session or BLE. Blocking reads run on a queue of their own, so
/// that they do not hold a thread of the Swift concurrency pool.
final class SocketLink: ByteLink, @unchecked Sendable {
    private let fd: Int32
    private let queue = DispatchQueue(label: "socket-link", attributes: .concurrent)

    init(address: String) throws {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else {
            throw LinkError.io(reason: "bad address \(address)")
        }
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, String(parts[0]), &addr.sin_addr)
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw LinkError.io(reason: "cannot connect to \(address): errno \(errno)")
        }
    }

    deinit {
        close(fd)
    }

    private func recv(_ max: Int) -> Result<Data, LinkError> {
        var buffer = [UInt8](repeating: 0, count: max)
        #if canImport(Glibc)
        let n = Glibc.read(fd, &buffer, max)
        #else
        let n = Darwin.read(fd, &buffer, max)
        #endif
        if n < 0 {
            return .failure(LinkError.io(reason: "read failed: errno \(errno)"))
        }
        // The other side closed the connection (an empty Data would mean "nothing yet").
        if n == 0 {
            return .failure(LinkError.closed)
        }
        return .success(Data(buffer[0..<n]))
    }

    /// Closes the socket (a cable pulled): later reads and writes fail.
    func unplug() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    func read(maxBytes: Int) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: self.recv(Int(maxBytes)))
            }
        }
    }

    func write(data: Data) async throws {
        let bytes = [UInt8](data)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                #if canImport(Glibc)
                return Glibc.write(fd, base + sent, bytes.count - sent)
                #else
                return Darwin.write(fd, base + sent, bytes.count - sent)
                #endif
            }
            if n <= 0 {
                throw LinkError.io(reason: "write failed: errno \(errno)")
            }
            sent += n
        }
    }
}
