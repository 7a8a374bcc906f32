import Foundation
import SvcSdk
import Testing

struct WebhookTests {
    @Test func theSharedWebhookVectors() throws {
        let data = try Data(contentsOf: Env.fixture("webhook_vectors.json"))
        let doc = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let vectors = try #require(doc["vectors"] as? [[String: Any]])
        #expect(vectors.count >= 10)
        for v in vectors {
            let name = v["name"] as? String ?? "?"
            let secrets = v["secrets"] as? [String] ?? []
            let tolerance = (v["tolerance_seconds"] as? NSNumber).map { TimeInterval(truncating: $0) }
            let webhook = try Webhook(secrets: secrets, tolerance: tolerance)
            var headers: [String: String] = [:]
            if let t = v["timestamp"] as? String { headers["Svc-Timestamp"] = t }
            if let s = v["signature"] as? String { headers["svc-signature"] = s }
            let body = Data((v["body"] as? String ?? "").utf8)
            let now = Date(timeIntervalSince1970: (v["now"] as? NSNumber)?.doubleValue ?? 0)
            func outcome(_ verify: () throws -> WebhookEvent) -> String {
                do {
                    _ = try verify()
                    return "valid"
                } catch let e as SvcError {
                    return e.code() ?? "none"
                } catch {
                    return "\(error)"
                }
            }
            #expect(outcome { try webhook.verifyAt(headers: headers, body: body, now: now) } == v["expected"] as? String, "\(name)")
            #expect(outcome { try webhook.verifyIgnoringTimestamp(headers: headers, body: body) } == v["ignoring_timestamp"] as? String, "\(name)")
        }
    }

    @Test func aVerifierWithoutASecretIsRefused() {
        do {
            _ = try Webhook(secrets: [""])
            Issue.record("a verifier without a secret was built")
        } catch let e as SvcError {
            #expect(e.code() == "no_secret")
            #expect(e.kind() == .invalidInput)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func settingsDiffThroughJsonStrings() throws {
        let patch = try settingsDiff(old: #"{"a":{"b":1,"c":"x"}}"#, new: #"{"a":{"b":2,"c":"x"}}"#)
        #expect(patch.changed == ["a/b"])
        #expect(patch.tree == #"{"a":{"b":2}}"#)
        // The fleet case: a reference tree kept, each unit's export diffed in one call.
        let reference = try SettingsTree.fromJson(json: #"{"a":{"b":1,"c":"x"}}"#)
        #expect(try reference.diffJson(new: #"{"a":{"b":2,"c":"x"}}"#) == patch)
        #expect(throws: SvcError.self) { try reference.diffJson(new: "{") }
    }
}
