import Foundation
package import Pipeline

/// The fulfiller's own ledger keys, next to the shared contract in `Keys+Ledger.swift`.
///
/// | key | type | fields |
/// |---|---|---|
/// | `tg:{u:<userId>}:tx:<transactionId>` | hash | see ``TransactionRecord`` |
/// | `tg:{u:<userId>}:txs` | zset | member transactionId, score purchase date (ms) |
/// | `tg:{u:<userId>}:ledger` | hash | renewal state `r:<ent>:{auto,retry,grace,signed,aprod,intent,winback}` (`aprod` the auto-renew product, `intent` Apple's expiration intent, `winback` eligible win-back offer ids comma-joined), `shortfall`, `fraud:<reason>`, `intro:<group>` (the purchase chain of the group's first introductory offer) |
/// | `tg:{u:<userId>}:notifications` | set | applied `notificationUUID`s |
/// | `tg:{u:<userId>}:ent:<entitlement>` | hash | transactionId → `state,purchaseMs,expiresMs,upgraded` (state `1` grants, `0` revoked, `2` withheld) |
/// | `tg:{otx:<originalTransactionId>}:owner` | string | the user the purchase chain is bound to |
/// | `tg:{otx:<originalTransactionId>}:parked` | list | events waiting for an owner (`{"j": jobId, "e": eventJSON}`) |
/// | `tg:{p0}:txo:<transactionId>` | string | the user whose record it is, in the owner's partition (the look-up index of `GET /v1/transactions/{id}`) |
/// | `tg:{p0}:subs:due` | zset | member `["<environment>","<entitlement>","<userId>"]` (JSON), score = when to ask Apple (ms) |
/// | `tg:{p0}:subs:ref` | hash | same member → the latest transactionId of that subscription |
///
/// The two `subs` keys are the verifier's sweep index (`Shared/Verification/Sweep`, Services/Verifier/README.md):
/// written by the apply function in the verified stream's slot, which that call already touches, so no new slot
/// is involved.
///
/// The binding and parked keys are tagged by the originalTransactionId, so with one partition a Redis Function
/// touching them and a user's keys spans two slots: fine on one primary, the default deployment. With N partitions
/// (Redis Cluster) they carry the tag of the chain's partition, and a chain of another partition than its owner's is
/// claimed in a separate step (docs/CLUSTER.md §4 and §5).
extension Keys {
    package func transaction(user userID: String, transactionId: String) -> String {
        "\(sidedUser(userID)):tx:\(transactionId)"
    }

    package func transactions(user userID: String) -> String { "\(sidedUser(userID)):txs" }

    package func ledgerMeta(user userID: String) -> String { "\(sidedUser(userID)):ledger" }

    /// A user's own event log, `tg:{u:<userId>}:events` (stream, entry ids `<seq>-0`; ``UserEventLog``).
    package func userEvents(user userID: String) -> String { "\(sidedUser(userID)):events" }

    /// A partition's sequence of app-level events (hash, `seq`), `tg:{p0}:events.app`, in its events stream's slot.
    package func appEventSequence(partition: Partition) -> String { projectPartitionKey(partition, "events.app") }

    package func notifications(user userID: String) -> String { "\(sidedUser(userID)):notifications" }

    package func entitlement(user userID: String, name: String) -> String {
        "\(sidedUser(userID)):ent:\(name)"
    }

    package func binding(originalTransactionId: String) -> String {
        "\(projectPrefix):\(chainTag(originalTransactionId)):owner"
    }

    package func parked(originalTransactionId: String) -> String {
        "\(projectPrefix):\(chainTag(originalTransactionId)):parked"
    }

    /// Who owns a transaction's record: `tg:{p0}:txo:<transactionId>` (string, the user id), in the owner's partition,
    /// written by the apply call with the record. A reader that knows only the transaction asks every partition.
    package func transactionOwner(partition: Partition, transactionId: String) -> String {
        projectPartitionKey(partition, "txo", transactionId)
    }

    /// The sweep index of a partition: auto-renewable subscriptions by when to ask Apple about them,
    /// `tg:{p0}:subs:due`, in the partition of the users it lists.
    package func subscriptionsDue(partition: Partition = .first) -> String { projectPartitionKey(partition, "subs", "due") }

    /// The latest transactionId per sweep-index member, `tg:{p0}:subs:ref`.
    package func subscriptionsDueReference(partition: Partition = .first) -> String { projectPartitionKey(partition, "subs", "ref") }

    /// `SCAN MATCH` pattern of every account hash, of either side (``account(ofKey:)`` tells them apart).
    package var accountPattern: String {
        layout.isSingle ? "\(projectPrefix):{u:*:account" : "\(projectPrefix):{p*}:u:*:account"
    }

    /// The user and side of an account key (``account(user:)`` of either side), or nil when `key` is not one. A
    /// scan with ``accountPattern`` finds both sides' accounts: the sandbox side's is `…:sbx:account`.
    package func account(ofKey key: String) -> (user: String, side: LedgerSide)? {
        let sandboxTail = "\(LedgerSide.sandbox.keyInfix):account"
        if key.hasSuffix(sandboxTail) {
            return user(ofAccountKey: String(key.dropLast(sandboxTail.count)) + ":account").map { ($0, .sandbox) }
        }
        return user(ofAccountKey: key).map { ($0, .primary) }
    }

    /// The user id of a primary-side account key, or nil when `key` is not one.
    package func user(ofAccountKey key: String) -> String? {
        let tail = layout.isSingle ? "}:account" : ":account"
        let head = "\(projectPrefix):{"
        // A user id never holds `:` (``UserID``): a key ending `:sbx:account` is a sandbox side's.
        guard key.hasPrefix(head), key.hasSuffix(tail), !key.hasSuffix("\(LedgerSide.sandbox.keyInfix):account") else {
            return nil
        }
        let inner = key.dropFirst(head.count).dropLast(tail.count)
        if layout.isSingle {
            guard inner.hasPrefix("u:"), inner.count > 2 else { return nil }
            return String(inner.dropFirst(2))
        }
        guard let marker = inner.range(of: "}:u:") else { return nil }
        let user = inner[marker.upperBound...]
        guard !user.isEmpty, userTag(String(user)) == "{" + inner else { return nil }
        return String(user)
    }
}
