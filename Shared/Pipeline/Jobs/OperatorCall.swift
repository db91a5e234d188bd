package import Core

/// An operator's call of Apple's API requested over HTTP (issue 31 item 6; `POST /v1/admin/apple/…`,
/// `GET /v1/lookup?orderId=`): ingest checks it as the CLI does and enqueues it as a job of kind
/// ``JobKind/operatorCall``; the verifier, which alone holds the App Store Server API key, makes the call with the same
/// checks as `tollctl` (`Verification/Operator`) and finishes the job with Apple's answer as its result.
///
/// The payload: `{"op": "set_account_token" | "extend" | "lookup_order", "by": <key name>, "project"?, …the op's
/// fields}`. `project` is the asking key's project (docs/PROJECTS.md), absent for `default` (so jobs queued before it
/// existed read as the default project's): the verifier makes the call with that project's apps and on its ledger only.
package struct OperatorCall: Sendable, Equatable {
    package enum Operation: Sendable, Equatable {
        /// Set App Account Token: tie a purchase to a user (`tollctl apple set-account-token`).
        case setAccountToken(originalTransactionId: String, userId: String, environment: String?)
        /// Extend a Subscription Renewal Date (`tollctl apple extend`).
        case extend(originalTransactionId: String, days: Int, reason: Int, requestId: String)
        /// Look Up Order ID (`tollctl lookup ORDER_ID`).
        case lookupOrder(orderId: String)
    }

    package var operation: Operation
    /// The service key's name that asked.
    package var by: String
    /// The asking key's project: whose apps are asked and whose ledger is read or changed.
    package var project: ProjectID

    package init(_ operation: Operation, by: String, project: ProjectID = .default) {
        self.operation = operation
        self.by = by
        self.project = project
    }

    /// The job's payload.
    package var payload: [UInt8] {
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        switch operation {
        case .setAccountToken(let otid, let user, let environment):
            writer.member("op", "set_account_token")
            writer.member("originalTransactionId", otid)
            writer.member("userId", user)
            writer.member("environment", environment)
        case .extend(let otid, let days, let reason, let requestId):
            writer.member("op", "extend")
            writer.member("originalTransactionId", otid)
            writer.member("days", days)
            writer.member("reason", reason)
            writer.member("requestId", requestId)
        case .lookupOrder(let orderId):
            writer.member("op", "lookup_order")
            writer.member("orderId", orderId)
        }
        writer.member("by", by)
        if let project = project.label { writer.member("project", project) }
        writer.endObject()
        return writer.bytes
    }

    /// Reads a payload; the fields' rules are checked again (the stream is not trusted more than the door).
    package init(json bytes: [UInt8]) throws(JSONError) {
        let fields = try JSONFields(JSONReader.parse(bytes))
        by = try fields.string("by")
        guard let project = ProjectID(field: try fields.optionalString("project")) else {
            throw JSONError("project: not a project id")
        }
        self.project = project
        switch try fields.string("op") {
        case "set_account_token":
            operation = .setAccountToken(
                originalTransactionId: try fields.string("originalTransactionId"), userId: try fields.string("userId"),
                environment: try fields.optionalString("environment"))
        case "extend":
            operation = .extend(
                originalTransactionId: try fields.string("originalTransactionId"), days: try fields.int("days"),
                reason: try fields.int("reason"), requestId: try fields.string("requestId"))
        case "lookup_order":
            operation = .lookupOrder(orderId: try fields.string("orderId"))
        case let other:
            throw JSONError("op: unknown operation \(other.prefix(32))")
        }
        if let problem { throw JSONError(problem) }
    }

    /// What the CLI's `validate()` refuses, as a sentence; nil when the call is well formed.
    package var problem: String? {
        switch operation {
        case .setAccountToken(let otid, let user, let environment):
            if !Self.isDigits(otid) { return "originalTransactionId must be 1-32 digits" }
            if !UserID.isValid(user) { return "userId must be 1-128 ASCII letters, digits, '-', '_', '.' or '@'" }
            if let environment, !["production", "sandbox"].contains(environment) { return "environment must be production or sandbox" }
        case .extend(let otid, let days, let reason, let requestId):
            if !Self.isDigits(otid) { return "originalTransactionId must be 1-32 digits" }
            if !(1...90).contains(days) { return "days must be 1-90" }
            if !(0...3).contains(reason) { return "reason must be 0-3" }
            if !Self.isUUID(requestId) { return "requestId must be a UUID" }
        case .lookupOrder(let orderId):
            if !PlainIdentifier.isValid(orderId) { return "orderId must be 1-64 letters, digits, '.', '-' or '_'" }
        }
        return nil
    }

    static func isDigits(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count) && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// A lower-case UUID in its 36-character form.
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        return bytes.indices.allSatisfy { index in
            [8, 13, 18, 23].contains(index)
                ? bytes[index] == UInt8(ascii: "-")
                : (bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9"))
                    || (bytes[index] >= UInt8(ascii: "a") && bytes[index] <= UInt8(ascii: "f"))
        }
    }
}
