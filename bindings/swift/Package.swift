// swift-tools-version:6.0
//
// The Swift binding of the SDK, in two forms:
//
// - Release (the default, what an app gets by depending on this package at a tag
//   `v<version>`): the `SvcFfi` binary target is the XCFramework of that release
//   (iOS device and simulators, macOS), built by bindings/uniffi/scripts/build-xcframework.sh
//   on macOS, which also writes its checksum here; `SvcSdk` holds the Swift generated
//   by uniffi from the same build.
// - Local, for this repository's tests (`SVC_FFI_LIB_DIR` set, as `cargo xtask swift`
//   does): `SvcFfi` is the generated C header as a system library (its module map links
//   `svc_ffi`); the folder of the library is given to the linker on the command line
//   (`swift build -Xlinker -L<dir>`), so that the package also builds as a dependency,
//   as the app in `Consumer/` uses it.
//
// On Apple platforms the library's TLS verifier uses the Security and CoreFoundation
// frameworks: `SvcSdk` links them, so an app needs no linker setting of its own.
//
// `SVC_XCFRAMEWORK=<path to SvcFfi.xcframework, inside this package's folder>` uses a
// local XCFramework instead of the release's download (the script's own check).
//
// The version is the workspace's (`cargo xtask dist --check` checks that they agree).

import Foundation
import PackageDescription

let version = "0.1.0"
let xcframeworkChecksum = "0000000000000000000000000000000000000000000000000000000000000000"

let environment = ProcessInfo.processInfo.environment
let localLibDir = environment["SVC_FFI_LIB_DIR"]

let ffi: Target
if localLibDir != nil {
    // The generated C header of the library's exported functions.
    ffi = .systemLibrary(name: "SvcFfi", path: "Sources/SvcFfi")
} else if let path = environment["SVC_XCFRAMEWORK"] {
    ffi = .binaryTarget(name: "SvcFfi", path: path)
} else {
    ffi = .binaryTarget(
        name: "SvcFfi",
        url: "https://github.com/svc-sdk/svc-sdk/releases/download/v\(version)/SvcFfi.xcframework.zip",
        checksum: xcframeworkChecksum
    )
}

var targets: [Target] = [
    ffi,
    // The generated Swift API and the hand-written additions (Sequences.swift, ErrorText.swift).
    .target(
        name: "SvcSdk",
        dependencies: ["SvcFfi"],
        path: "Sources/SvcSdk",
        linkerSettings: [
            .linkedFramework("Security", .when(platforms: [.macOS, .iOS])),
            .linkedFramework("CoreFoundation", .when(platforms: [.macOS, .iOS])),
        ]
    ),
]
if localLibDir != nil {
    targets.append(.testTarget(name: "SvcSdkTests", dependencies: ["SvcSdk"], path: "Tests/SvcSdkTests"))
}

let package = Package(
    name: "SvcSdk",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [.library(name: "SvcSdk", targets: ["SvcSdk"])],
    targets: targets,
    // The generated code is written for the Swift 5 language mode.
    swiftLanguageModes: [.v5]
)
