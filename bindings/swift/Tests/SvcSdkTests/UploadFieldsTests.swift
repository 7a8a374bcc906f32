import Foundation
import SvcSdk
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fields of an upload form as the service hands them out: the SDK sends every one,
/// unchanged and in order, those it does not know included. `cargo xtask swift` starts
/// the emulator with `--upload-extra-field x-amz-meta-uploaded-by=svc sdk swift/1+2=3`,
/// which adds that field to every form, signed into its policy like the others: an
/// upload succeeds only if the field is sent unchanged.
final class UploadFieldsTests: XCTestCase {
    /// The fields every form carries, in the order the service hands them out.
    let standard = [
        "bucket", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date",
        "key", "Policy", "X-Amz-Signature", "X-Amz-Security-Token",
    ]
    /// A field this SDK knows nothing of, with a value a careless form encoder would change.
    let extraName = "x-amz-meta-uploaded-by"
    let extraValue = "svc sdk swift/1+2=3"

    /// One HTTP exchange: the status and the body.
    func send(_ request: URLRequest) async throws -> (Int, Data) {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
                }
            }.resume()
        }
    }

    func json(_ data: Data) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The container as the service answers it, read without the SDK: the raw text (the
    /// order of the form's fields) and the parsed JSON.
    func rawContainer(_ id: String) async throws -> (String, [String: Any]) {
        var discovery = URLRequest(url: try XCTUnwrap(URL(string: "\(Env.text("auth_url"))/.well-known/openid-configuration")))
        discovery.httpMethod = "GET"
        let discovered = try json(try await send(discovery).1)
        let endpoint = try XCTUnwrap(discovered["token_endpoint"] as? String)
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let form = [
            ("grant_type", "password"), ("client_id", "api-key"), ("username", Env.text("api_key")),
            ("password", Env.text("api_secret")), ("scope", "openid"),
        ].map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        var grant = URLRequest(url: try XCTUnwrap(URL(string: endpoint)))
        grant.httpMethod = "POST"
        grant.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        grant.httpBody = Data(form.utf8)
        let granted = try json(try await send(grant).1)
        let token = try XCTUnwrap(granted["access_token"] as? String)
        var get = URLRequest(url: try XCTUnwrap(URL(string: "\(Env.text("base_url"))/api/v2/containers/\(id)")))
        get.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let body = try await send(get).1
        return (String(decoding: body, as: UTF8.self), try json(body))
    }

    /// A multipart POST of `fields` in order, then `file`: the storage's status.
    func postForm(_ url: String, _ fields: [(String, String)], _ content: Data) async throws -> Int {
        let boundary = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var body = Data()
        for (name, value) in fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\n\r\n".utf8))
        body.append(content)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        var request = URLRequest(url: try XCTUnwrap(URL(string: url)))
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        request.setValue(String(body.count), forHTTPHeaderField: "Content-Length")
        request.httpBody = body
        return try await send(request).0
    }

    func testAnUnknownFieldHandedOutIsSentAndTheUploadSucceeds() async throws {
        let client = try CloudClient.create(config: Env.config())
        let local = Env.fixture("rover.nmea")
        let content = try Data(contentsOf: local)
        let container = try await client.createContainer(request: CreateContainerRequest(
            region: .euWest3,
            files: [CreateContainerFile(path: "rover.nmea", size: content.count, fileType: .input)]
        ))

        // The form, as the service wrote it: the standard fields in its order, then the
        // unknown one.
        let (text, parsed) = try await rawContainer(container.id)
        let fieldsText = try XCTUnwrap(text.range(of: "\"fields\":")).upperBound
        let names = standard + [extraName]
        let positions = names.map { text.range(of: "\"\($0)\":", range: fieldsText..<text.endIndex)?.lowerBound }
        XCTAssertFalse(
            positions.contains(nil),
            "every form carries \(names) (start the emulator with --upload-extra-field \(extraName)=\(extraValue), as cargo xtask swift does): \(text)"
        )
        let found = positions.compactMap { $0 }
        XCTAssertEqual(found, found.sorted(), "the fields in the order \(names): \(text)")
        let files = try XCTUnwrap(parsed["files"] as? [[String: Any]])
        let info = try XCTUnwrap(files.first?["uploadInfo"] as? [String: Any])
        let fields = try XCTUnwrap(info["fields"] as? [String: String])
        XCTAssertEqual(fields[extraName], extraValue)

        // Without it storage refuses the form: the success below is the SDK sending it.
        let url = try XCTUnwrap(info["url"] as? String)
        let without = names.dropLast().map { ($0, fields[$0] ?? "") }
        let refused = try await postForm(url, without, content)
        XCTAssertEqual(refused, 403)
        let pending = try await client.getContainer(containerId: container.id)
        XCTAssertEqual(pending.files.first?.status, .pending)

        let file = try XCTUnwrap(container.files.first)
        let job = UploadJob(localPath: local.path, containerPath: file.path, size: content.count, uploadInfo: try XCTUnwrap(file.uploadInfo))
        let report = try await Transfers(options: TransferOptions()).upload(jobs: [job]).wait()
        XCTAssertEqual(report.files.map(\.state), [.done], "\(report)")
        XCTAssertEqual(report.files.map(\.attempts), [1])
        let uploaded = try await client.getContainer(containerId: container.id)
        XCTAssertEqual(uploaded.files.first?.status, .ready)
    }
}
