package import Foundation

/// `../shared/vectors` beside the repository: data Apple signed (`apple-real`, with its `manifest.json`) and the
/// legacy `verifyReceipt`/V1 fixtures (`legacy`).
package enum Vectors {
    /// The repository root (found from this file's path, so any checkout works).
    package static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    package static let directory = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors")
    package static let appleReal = directory.appendingPathComponent("apple-real")
    package static let legacy = directory.appendingPathComponent("legacy")

    /// The trimmed text of `apple-real/<name>`.
    package static func appleReal(_ name: String) throws -> String {
        try String(contentsOf: appleReal.appendingPathComponent(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
