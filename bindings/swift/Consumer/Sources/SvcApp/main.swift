// An app's first use of the SDK: a client for its organization, one call answered, a
// failure caught as a typed error, a Task cancelled. With SVC_EMULATOR_JSON (the
// emulator's line) it talks to that service; without it, it only checks that the
// library is linked and answers (a refused configuration, before any request).

import Foundation
import SvcSdk

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SvcApp: \(message)\n".utf8))
    exit(1)
}

let environment = ProcessInfo.processInfo.environment
guard
    let line = environment["SVC_EMULATOR_JSON"],
    let info = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
else {
    do {
        _ = try CloudClient.create(config: CloudConfig(
            baseUrl: "not a url", notificationUrl: "", apiKey: "k", apiSecret: Secret(value: "s"),
            organizationId: ""))
        fail("a configuration without addresses was accepted")
    } catch let error as SvcError {
        print("SvcApp: linked; a bad configuration is refused (\(error.kind()))")
        exit(0)
    }
}
func text(_ name: String) -> String { info[name].map { "\($0)" } ?? "" }

let client = try CloudClient.create(config: CloudConfig(
    baseUrl: text("base_url"), authUrl: text("auth_url"),
    notificationUrl: text("notification_url"), apiKey: text("api_key"),
    apiSecret: Secret(value: text("api_secret")), organizationId: text("organization_id")))
let server = try await client.serverInfo()
do {
    _ = try await client.getProcessing(processingId: UUID().uuidString.lowercased())
    fail("an unknown processing was found")
} catch let error as SvcError where error.kind() == .notFound {
    // The service's 404, typed.
}
let waiting = Task { try await client.listContainersAll() }
waiting.cancel()
_ = try? await waiting.value
print("SvcApp: service \(server.version ?? "?") answered; errors typed")
