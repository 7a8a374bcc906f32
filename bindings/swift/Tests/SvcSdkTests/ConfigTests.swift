import Foundation
import SvcSdk
import Testing

/// The processing configuration as Swift values: read, built in code, written, refused.
struct ConfigTests {
    func object(_ text: String) throws -> NSDictionary {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
    }

    @Test func theSamplesReadAsTypedValuesAndAProjectBuiltInCodeWritesTheServicesJson() throws {
        let vendor = try processingConfigFromJson(
            json: String(contentsOf: Env.fixture("project.json"), encoding: .utf8))
        guard case .project(let project) = vendor else {
            Issue.record("not a project: \(vendor)")
            return
        }
        #expect(project.project.kind == "nmea")
        #expect(project.exports.map(\.profile) == ["SBET: 10Hz", "ASCII: 10Hz", "KML: 1Hz"])
        guard case .shorthand(let short) = try Env.sampleConfig() else {
            Issue.record("the sample is not a shorthand")
            return
        }
        #expect(short.imu?.leverArm == LeverArm(x: 0.12, y: 0.0, z: -1.5))

        let built = ProcessingConfig.project(config: ProjectConfig(
            project: ConfigProject(kind: "sbgECom", path: "rover/"),
            processing: ConfigProcessing(kind: "insSingle", extra: ["smoothing": "true"]),
            exports: [ConfigExport(profile: "SBET: 200Hz")]
        ))
        let expected = try object("""
            {"version": "1.0", "project": {"type": "sbgECom", "path": "rover/"},
             "processing": {"type": "insSingle", "smoothing": true},
             "exports": [{"profile": "SBET: 200Hz"}]}
            """)
        #expect(try object(processingConfigToJson(config: built)) == expected)
    }

    @Test func aBadConfigurationIsAnInvalidInputThatNamesTheField() async throws {
        let absolute = await svcError {
            try processingConfigFromJson(json: """
                {"version": "1.0", "project": {"type": "sbgECom", "path": "/data"},
                 "processing": {"type": "insSingle"}}
                """)
        }
        #expect(absolute?.kind == .invalidInput)
        #expect(absolute?.reason.contains("project.path") == true, "\(String(describing: absolute))")
        let shadow = ProcessingConfig.shorthand(config: ShorthandConfig(
            imu: ShorthandImu(file: "imu.csv", extra: ["file": "\"other.csv\""])))
        let e = await svcError { try processingConfigToJson(config: shadow) }
        #expect(e?.reason.contains("field of its own") == true, "\(String(describing: e))")
        #expect(await svcError { try processingConfigToJson(config: .json(json: "not json")) }?.kind == .invalidInput)
    }
}
