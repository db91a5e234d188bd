package import Core

/// The ledger function's answer read by hand (``Core/JSONReader``): one per delivery on the fulfiller's hot path,
/// where `JSONDecoder` cost more than the rest of reading it. Reads what `Codable` read (absent and `null` alike
/// for the optional members; `LedgerOutcomeJSONTests` compares the two).
extension LedgerOutcome {
    package init(json bytes: [UInt8]) throws(JSONError) {
        let fields = try JSONFields(JSONReader.parse(bytes))
        var transactions: [TransactionResult]?
        if let value = fields.members["transactions"], value != .null {
            transactions = try fields.array("transactions") { (value, path) throws(JSONError) in
                let result = try JSONFields(value, path: path)
                return TransactionResult(
                    transactionId: try result.string("transactionId"), productId: try result.string("productId"),
                    result: try result.string("result"))
            }
        }
        self.init(
            outcome: try Self.kind(fields.string("outcome")), reason: try fields.optionalString("reason"),
            coins: try fields.optionalInt64("coins"), unparked: try fields.optionalInt("unparked"),
            forwarded: try fields.optionalInt("forwarded"), transactions: transactions,
            emitted: try fields.optionalString("emitted"))
        persist = try fields.optionalString("persist")
        claim = try fields.optionalBool("claim")
        side = try fields.optionalString("side")
        if let value = fields.members["signals"], value != .null {
            signals = try fields.array("signals") { (value, path) throws(JSONError) in
                guard case .string(let signal) = value else { throw JSONError("\(path) is \(value.typeName), not a string") }
                return signal
            }
        }
    }

    /// The one place the function's `outcome` word becomes a ``Kind``: a word this code does not know is refused.
    private static func kind(_ word: String) throws(JSONError) -> Kind {
        guard let kind = Kind(rawValue: word) else { throw JSONError("outcome \"\(word)\" is not one the ledger answers") }
        return kind
    }
}
