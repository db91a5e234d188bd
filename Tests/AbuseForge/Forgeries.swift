import AppStore
import AppStoreTesting
import Foundation

/// The abuse run's crafted inputs, written to files one a line.
enum Forgeries {
    /// `count` receipt bombs (``CrossSignedReceipt``) around a plausible receipt, base64, one a line.
    static func receiptBombs(keys: Int, count: Int, out: String) throws {
        var lines: [String] = []
        for index in 0..<max(1, count) {
            let receipt = AppReceipt(
                receiptType: "ProductionSandbox", bundleId: "com.example.app", applicationVersion: "1", opaqueValue: [1, 2, 3],
                creationDate: Date(),
                purchases: [
                    AppReceiptPurchase(
                        quantity: 1, productId: "com.example.coins100", transactionId: "9\(index)", originalTransactionId: "9\(index)",
                        purchaseDate: Date())
                ])
            lines.append(Data(try CrossSignedReceipt.make(keys: keys, receipt: receipt)).base64EncodedString())
        }
        try write(lines, to: out)
    }

    /// `count` V2 notification bodies of `bundleId` (sandbox) around the chain of the authority in `caDirectory`:
    /// `broken-leaf` (each a new leaf its intermediate never signed) or `impostor` (each a new intermediate named like
    /// the real one).
    static func notifications(caDirectory: String, bundleId: String, kind: String, count: Int, out: String) throws {
        let authority = try TestCertificateAuthority(directory: URL(fileURLWithPath: caDirectory))
        let x5c = [authority.leafDER, authority.intermediateDER, authority.rootDER]
        var lines: [String] = []
        for _ in 0..<max(1, count) {
            let signer: JWSSigner
            switch kind {
            case "broken-leaf": signer = try ChainForgery.brokenLeaf(x5c: x5c)
            case "impostor": signer = try ChainForgery.impostorIntermediate(x5c: x5c)
            default: throw ForgeError("--kind must be broken-leaf or impostor")
            }
            let payload: [String: Any] = [
                "notificationType": "ONE_TIME_CHARGE", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": bundleId, "environment": "Sandbox"],
            ]
            let jws = try signer.sign(json: JSONSerialization.data(withJSONObject: payload))
            lines.append(#"{"signedPayload":"\#(jws)"}"#)
        }
        try write(lines, to: out)
    }

    static func write(_ lines: [String], to path: String) throws {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }
}
