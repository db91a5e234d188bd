import AppStore
import SwiftASN1
import X509

extension FuzzTarget {
    /// AppStore's PKCS#7 app receipt reader (`AppReceiptParser`): what the verifier reads of a receipt before any
    /// signature is checked — the `SignedData` (BER, indefinite lengths), its embedded certificates and signers, the
    /// payload's attributes. Whatever it accepts, `parse` and `signedData` agree on, and the purchases' identifiers
    /// are listed once each. An input starting with a `SET` tag (0x31) is taken as a payload and wrapped in a
    /// `SignedData` here, so the fuzzer reaches the attribute reader without having to find the PKCS#7 layer.
    static let appReceipt = FuzzTarget(
        name: "AppReceipt", maxLength: 65536,
        summary: "AppStore AppReceiptParser: parse and signedData agree; certificates read"
    ) { bytes throws(FuzzFailure) in
        let receiptBytes = bytes.first == 0x31 ? ReceiptEnvelope.wrap(payload: bytes) : bytes
        let signed = try? AppReceiptParser.signedData(receiptBytes)
        for der in signed?.certificates ?? [] { _ = try? Certificate(derEncoded: der) }
        guard let receipt = try? AppReceiptParser.parse(receiptBytes) else { return }
        guard let signed else { throw FuzzFailure("parse read a receipt that signedData refuses") }
        try expect(
            (try? AppReceiptParser.parse(ReceiptEnvelope.wrap(payload: signed.content))) == receipt,
            "the same payload in another envelope reads differently")
        let identifiers = receipt.transactionIdentifiers
        try expect(Set(identifiers).count == identifiers.count, "an identifier is listed twice")
        for purchase in receipt.purchases {
            if let id = purchase.transactionId, !id.isEmpty {
                try expect(identifiers.contains(id), "transaction \(id.prefix(40)) is not listed")
            }
        }
        _ = receipt.environment
    }
}
