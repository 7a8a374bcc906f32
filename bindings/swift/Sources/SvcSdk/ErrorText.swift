// What an `SvcError` says to a person: its `reason` (the `description` uniffi generates
// from the Rust `Display`), which `"\(error)"` and `localizedDescription` (what an
// alert shows) then give, rather than the list of its fields.

extension SvcError: CustomStringConvertible {}
