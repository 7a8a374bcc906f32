// swift-tools-version:6.0
//
// A small app that depends on the SDK's Swift package as an app team's does: by
// reference, with no build setting of its own (an app names the package's URL and
// version; this one names its folder, `SVC_SDK_PACKAGE` or `..`). `cargo xtask swift`
// builds and runs it on Linux against the emulator; the `ios` job of
// .github/workflows/mobile.yml builds it for iOS and macOS against the release's package.

import Foundation
import PackageDescription

let sdk = ProcessInfo.processInfo.environment["SVC_SDK_PACKAGE"] ?? ".."
// SwiftPM names a package given by path after its folder.
let sdkIdentity = URL(fileURLWithPath: sdk).standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "SvcApp",
    platforms: [.macOS(.v12), .iOS(.v15)],
    dependencies: [.package(path: sdk)],
    targets: [
        .executableTarget(
            name: "SvcApp",
            dependencies: [.product(name: "SvcSdk", package: sdkIdentity)],
            path: "Sources/SvcApp"
        ),
    ],
    swiftLanguageModes: [.v5]
)
