import Foundation

/// An iOS 6 style transaction receipt (`SKPaymentTransaction.transactionReceipt`, deprecated since iOS 7): base64
/// of a text dictionary (`"purchase-info" = "<base64>"; "signature" = "<base64>"; …`) whose `purchase-info` is
/// another such dictionary with `"transaction-id" = "…";`.
///
/// Its signature is Apple's own format, which only `verifyReceipt` checks: Tollgate reads the identifiers (to
/// route the receipt and for operators) and never credits on them alone.
package struct TransactionReceipt: Sendable, Hashable {
    package var transactionId: String
    package var originalTransactionId: String?
    package var productId: String?
    package var bundleId: String?

    /// Reads a transaction receipt's decoded bytes; `nil` when they are not one (no `purchase-info` holding a
    /// `transaction-id`).
    package init?(decoded bytes: [UInt8]) {
        guard let outer = String(validating: bytes, as: UTF8.self),
            let info = Self.pairs(outer)["purchase-info"],
            let infoBytes = Data(base64Encoded: info),
            let inner = String(validating: Array(infoBytes), as: UTF8.self)
        else { return nil }
        let fields = Self.pairs(inner)
        guard let transactionId = fields["transaction-id"], !transactionId.isEmpty else { return nil }
        self.transactionId = transactionId
        originalTransactionId = fields["original-transaction-id"]
        productId = fields["product-id"]
        bundleId = fields["bid"]
    }

    /// The `"key" = "value";` pairs of a text dictionary (values without escapes, as Apple writes them).
    static func pairs(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while let keyStart = rest.firstIndex(of: "\"") {
            let afterKeyQuote = rest.index(after: keyStart)
            guard let keyEnd = rest[afterKeyQuote...].firstIndex(of: "\"") else { break }
            let key = String(rest[afterKeyQuote..<keyEnd])
            var cursor = rest[rest.index(after: keyEnd)...].drop(while: { $0 == " " || $0 == "\t" })
            guard cursor.first == "=" else {
                rest = rest[rest.index(after: keyEnd)...]
                continue
            }
            cursor = cursor.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
            guard cursor.first == "\"" else {
                rest = cursor
                continue
            }
            let valueStart = cursor.index(after: cursor.startIndex)
            guard let valueEnd = cursor[valueStart...].firstIndex(of: "\"") else { break }
            if result[key] == nil { result[key] = String(cursor[valueStart..<valueEnd]) }
            rest = cursor[cursor.index(after: valueEnd)...]
        }
        return result
    }
}
