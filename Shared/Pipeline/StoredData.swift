/// The version of the data Tollgate keeps in Redis (docs/UPGRADING.md): an integer in the layout record
/// (``Keys/layoutRecord``, field ``field``), raised by a release that changes stored data in a way an older ledger
/// needs a step for (`tollctl upgrade`, ``Keys/checkLayout(on:)``). A release that only adds fields read with a
/// default, or keys written when first needed, keeps the version.
///
/// | version | release | what changed |
/// |---|---|---|
/// | 0 (no marker) | before 0.9.0 | — |
/// | 1 | 0.9.0 | the transaction owner index `tg:{pN}:txo:<tid>` (ledger v7), backfilled for older records |
package enum StoredData {
    /// The data version this build reads and writes.
    package static let version = 1

    /// The layout record's field that holds the version.
    package static let field = "data"

    /// The release that introduced each version after 0.
    static let releases = [1: "0.9.0"]

    /// The release that raised the version above `stored`, so data of version `stored` was written before it; nil for
    /// the current version or one this build does not know.
    package static func release(after stored: Int) -> String? { releases[stored + 1] }
}
