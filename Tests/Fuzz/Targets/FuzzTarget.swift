/// One reader under the fuzzer: its name (the corpus folder `Tests/Fuzz/Corpus/<name>` and the first argument of
/// `tollgate-fuzz`) and a check that gives it one input and throws when something that must hold does not. A crash,
/// a trap or an input that takes too long is a finding too; libFuzzer's flags (`scripts/fuzz`) bound time and memory.
struct FuzzTarget: Sendable {
    let name: String
    /// The largest input libFuzzer makes (`-max_len`): what the reader meets at most in practice.
    let maxLength: Int
    /// What the check asserts, for `--list`.
    let summary: String
    let check: @Sendable ([UInt8]) throws(FuzzFailure) -> Void

    /// Every target, in the order `scripts/fuzz --ci` runs them.
    static let all: [FuzzTarget] = [.jsonReader, .base64URL, .jwsStructure, .appReceipt, .transactionReceipt, .legacyJSON]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
