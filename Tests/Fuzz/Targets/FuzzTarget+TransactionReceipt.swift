import AppStore
import Foundation

extension FuzzTarget {
    /// AppStore's iOS 6 transaction receipt reader (`TransactionReceipt(decoded:)`), which the verifier tries on every
    /// decoded receipt before the PKCS#7 reader: the input once as the decoded receipt, once as the `purchase-info`
    /// dictionary inside one (base64 in an outer dictionary built here). What it reads is a non-empty transaction ID,
    /// and every value it returns stands quoted in the text it came from.
    static let transactionReceipt = FuzzTarget(
        name: "TransactionReceipt", maxLength: 16384,
        summary: "AppStore TransactionReceipt: values read stand quoted in the input"
    ) { bytes throws(FuzzFailure) in
        if let receipt = TransactionReceipt(decoded: bytes) {
            try expect(!receipt.transactionId.isEmpty, "an empty transaction ID was read")
        }
        let outer = Array("{\n\t\"signature\" = \"AA==\";\n\t\"purchase-info\" = \"\(Data(bytes).base64EncodedString())\";\n}".utf8)
        guard let receipt = TransactionReceipt(decoded: outer) else { return }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw FuzzFailure("a purchase-info that is not UTF-8 was read")
        }
        try expect(!receipt.transactionId.isEmpty, "an empty transaction ID was read")
        for value in [receipt.transactionId, receipt.originalTransactionId, receipt.productId, receipt.bundleId] {
            guard let value else { continue }
            try expect(!value.contains("\""), "a value holds a quote")
            try expect(text.contains("\"\(value)\""), "'\(value.prefix(40))' does not stand quoted in the input")
        }
    }
}
