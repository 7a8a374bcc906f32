#!/usr/bin/env bash
# The iOS/macOS XCFramework of the SDK (static libraries with the generated C header and
# module map, module `SvcFfi`), zipped, with its SwiftPM checksum, and the Swift package
# a release publishes: bindings/swift/Package.swift with that checksum, the generated
# SvcSdk.swift and the hand-written Sources/SvcSdk files; then an app using that package
# (bindings/swift/Consumer) built for macOS (and run) and iOS.
#
# Needs macOS with Xcode (xcodebuild, lipo, swift). NOT RUN on the machine this was
# written on (no Apple toolchain there): the hosted-runner job `ios` of
# .github/workflows/mobile.yml runs it.
#
# Usage: bindings/uniffi/scripts/build-xcframework.sh [OUT]   (default target/dist/apple)
set -euo pipefail

root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="${1:-$root/target/dist/apple}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
targets=(aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios aarch64-apple-darwin x86_64-apple-darwin)

cd "$root"
rustup target add "${targets[@]}"
for target in "${targets[@]}"; do
    cargo build -p svc-ffi --profile release-ffi --locked --target "$target"
done
cargo xtask bindings swift

rm -rf "$out" && mkdir -p "$out/headers" "$out/lib"
cp target/bindings/swift/SvcFfi.h "$out/headers/"
cp target/bindings/swift/SvcFfi.modulemap "$out/headers/module.modulemap"
lib() { echo "target/$1/release-ffi/libsvc_ffi.a"; }
lipo -create "$(lib aarch64-apple-ios-sim)" "$(lib x86_64-apple-ios)" -output "$out/lib/ios-sim.a"
lipo -create "$(lib aarch64-apple-darwin)" "$(lib x86_64-apple-darwin)" -output "$out/lib/macos.a"
xcodebuild -create-xcframework \
    -library "$(lib aarch64-apple-ios)" -headers "$out/headers" \
    -library "$out/lib/ios-sim.a" -headers "$out/headers" \
    -library "$out/lib/macos.a" -headers "$out/headers" \
    -output "$out/SvcFfi.xcframework"
(cd "$out" && ditto -c -k --sequesterRsrc --keepParent SvcFfi.xcframework SvcFfi.xcframework.zip)
checksum="$(swift package compute-checksum "$out/SvcFfi.xcframework.zip")"
echo "$checksum" > "$out/SvcFfi.xcframework.zip.checksum"

# The package of the release (tag v$version): Package.swift with the checksum, the
# generated Swift beside the hand-written files.
package="$out/SvcSdk"
mkdir -p "$package/Sources/SvcSdk"
sed -e "s/^let version = \".*\"/let version = \"$version\"/" \
    -e "s/^let xcframeworkChecksum = \".*\"/let xcframeworkChecksum = \"$checksum\"/" \
    bindings/swift/Package.swift > "$package/Package.swift"
cp bindings/swift/Sources/SvcSdk/*.swift "$package/Sources/SvcSdk/"
cp target/bindings/swift/SvcSdk.swift "$package/Sources/SvcSdk/"

# The package builds against the local XCFramework (a copy inside it: SwiftPM takes
# binary targets from the package's own folder), for macOS and iOS.
cp -R "$out/SvcFfi.xcframework" "$package/"
(cd "$package" && SVC_XCFRAMEWORK=SvcFfi.xcframework swift build)
(cd "$package" && SVC_XCFRAMEWORK=SvcFfi.xcframework xcodebuild build -scheme SvcSdk -destination 'generic/platform=iOS' -quiet)
# An app that depends on the package as a team's does (bindings/swift/Consumer), with no
# build setting of its own: linked and run on macOS, linked for iOS.
consumer="$root/bindings/swift/Consumer"
(cd "$consumer" && SVC_SDK_PACKAGE="$package" SVC_XCFRAMEWORK=SvcFfi.xcframework swift build)
(cd "$consumer" && "$(SVC_SDK_PACKAGE="$package" SVC_XCFRAMEWORK=SvcFfi.xcframework swift build --show-bin-path)/SvcApp")
(cd "$consumer" && SVC_SDK_PACKAGE="$package" SVC_XCFRAMEWORK=SvcFfi.xcframework xcodebuild build -scheme SvcApp -destination 'generic/platform=iOS' -quiet)
rm -rf "$consumer/.build"
rm -rf "$package/SvcFfi.xcframework" "$package/.build"
ls -l "$out"
