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
}

/// What every `SvcError` carries, whatever its case.
struct ErrorFields {
    let kind: String
    let reason: String
    let status: UInt16?
    let operation: String?
    let code: String?
    let processingId: String?
    let nodeErrors: [NodeError]
}

extension SvcError {
    var fields: ErrorFields {
        switch self {
        case let .Authentication(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "authentication", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .PermissionDenied(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "permission_denied", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .NotFound(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "not_found", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Conflict(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "conflict", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .InvalidInput(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "invalid_input", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Unreachable(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "unreachable", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Transient(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "transient", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Canceled(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "canceled", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Timeout(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "timeout", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .InvalidResponse(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "invalid_response", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Verification(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "verification", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Io(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "io", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        case let .Internal(r, s, _, _, o, c, _, p, n, _): return ErrorFields(kind: "internal", reason: r, status: s, operation: o, code: c, processingId: p, nodeErrors: n)
        }
    }
}

/// The `SvcError` an async call throws (fails the test when it succeeds or throws
/// something else).
func svcError<T>(_ call: () async throws -> T) async -> ErrorFields? {
    do {
        _ = try await call()
        return nil
    } catch let e as SvcError {
        return e.fields
    } catch {
        return ErrorFields(kind: "not an SvcError: \(error)", reason: "", status: nil, operation: nil, code: nil, processingId: nil, nodeErrors: [])
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
            throw LinkError.Io(reason: "bad address \(address)")
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
            throw LinkError.Io(reason: "cannot connect to \(address): errno \(errno)")
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
            return .failure(LinkError.Io(reason: "read failed: errno \(errno)"))
        }
        return .success(Data(buffer[0..<n]))
    }

    func read(maxBytes: UInt32) async throws -> Data {
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
                throw LinkError.Io(reason: "write failed: errno \(errno)")
            }
            sent += n
        }
    }
}
