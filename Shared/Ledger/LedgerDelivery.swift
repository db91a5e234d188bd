package import Core
import Foundation
package import Pipeline
package import Redis

/// One verified-stream entry as the ledger applies it: the event, checked, and — when the entry is a part of
/// another entry's event forwarded to its owner — limited to the transactions forwarded.
///
/// Forwarded entries are written by the apply function itself (`ledger.only`: a JSON array of transaction ids,
/// `ledger.hops`), and parked parts of them come back with `ledger.forwarded`. A forwarded part is Apple's word
/// about those transactions only: it names no submitter and no order, and it never writes its job's status (the
/// job belongs to whoever submitted the whole event).
package struct LedgerDelivery: Sendable, Hashable {
    /// Verified-stream fields of a forwarded part.
    package enum Field {
        package static let only = "ledger.only"
        package static let hops = "ledger.hops"
        package static let forwarded = "ledger.forwarded"
        /// How many times the entry was handed from one partition's verified stream to another's.
        package static let moves = "ledger.moves"
        /// The partition it was handed over from.
        package static let from = "ledger.from"
        /// The client submission whose claim moved this parked event back (a chain of another partition): the event
        /// waits for that job to finish before it applies (``LedgerApplier/claimantWait``).
        package static let after = "ledger.after"
    }

    /// The most hand-overs between partitions one entry may take: to its purchase chain's partition while its owner
    /// is unknown, then to its owner's; more means the owner kept changing, which write-once bindings rule out.
    package static let maximumMoves = 4

    /// The most units of one purchase the ledger credits (Apple sells at most 10 at a time).
    package static let quantities = 1...100

    package var event: PurchaseEvent
    package var isForwarded: Bool
    package var hops: Int

    /// The ledger side the event applies on (an unknown label was refused when the entry was read).
    package var side: LedgerSide { LedgerSide(label: event.side) ?? .primary }

    /// The project whose ledger the event applies to (an invalid label was refused when the entry was read).
    package var project: ProjectID { ProjectID(field: event.project) ?? .default }

    /// A client's own submission: the only kind of event an order may refuse.
    package var isClientClaim: Bool { !isForwarded && event.source == .client && event.userId != nil }

    package init(event: PurchaseEvent, isForwarded: Bool = false, hops: Int = 0) {
        self.event = event
        self.isForwarded = isForwarded
        self.hops = hops
    }

    /// Decodes and checks a verified-stream entry; throws ``LedgerError/malformedEvent(_:)``.
    package init(entry: StreamEntry) throws(LedgerError) {
        guard let bytes = entry.fields[PurchaseEvent.streamField], !bytes.isEmpty else {
            throw .malformedEvent("entry \(entry.id) has no \(PurchaseEvent.streamField) field")
        }
        var event: PurchaseEvent
        do {
            event = try PurchaseEvent.decode(bytes)
        } catch {
            throw .malformedEvent("entry \(entry.id): \(error)")
        }
        guard event.version == PurchaseEvent.currentVersion else {
            throw .malformedEvent("entry \(entry.id): event version \(event.version) is not 1")
        }
        guard !event.jobId.isEmpty, event.transactions.allSatisfy({ !$0.transactionId.isEmpty && !$0.originalTransactionId.isEmpty }) else {
            throw .malformedEvent("entry \(entry.id): empty job or transaction id")
        }
        if let bad = event.transactions.first(where: { !Self.quantities.contains($0.quantity) }) {
            throw .malformedEvent("entry \(entry.id): quantity \(bad.quantity) of \(bad.transactionId) is outside \(Self.quantities)")
        }
        guard LedgerSide(label: event.side) != nil else {
            throw .malformedEvent("entry \(entry.id): side \(event.side ?? "") is not one")
        }
        guard ProjectID(field: event.project) != nil else {
            throw .malformedEvent("entry \(entry.id): project \(event.project?.prefix(40) ?? "") is not a project id")
        }
        var forwarded = entry.string(Field.forwarded) == "1"
        if let only = entry.fields[Field.only] {
            guard let ids = try? JSONDecoder().decode([String].self, from: Data(only)) else {
                throw .malformedEvent("entry \(entry.id): \(Field.only) is not a JSON array of transaction ids")
            }
            event = Self.part(of: event, transactionIds: Set(ids))
            forwarded = true
        }
        if forwarded {
            event.userId = nil
            event.orderNo = nil
        }
        self.init(event: event, isForwarded: forwarded, hops: entry.string(Field.hops).flatMap { Int($0) } ?? 0)
    }

    /// The event limited to some transactions and the renewal states of their purchase chains.
    static func part(of event: PurchaseEvent, transactionIds: Set<String>) -> PurchaseEvent {
        var part = event
        part.transactions = event.transactions.filter { transactionIds.contains($0.transactionId) }
        let chains = Set(part.transactions.map(\.originalTransactionId))
        part.renewals = event.renewals.filter { chains.contains($0.originalTransactionId) }
        return part
    }

    /// The JSON kept when this delivery is parked: the part, not the whole event it came from.
    func parkedJSON(entry: StreamEntry) throws -> String {
        guard isForwarded else { return String(decoding: entry.fields[PurchaseEvent.streamField] ?? [], as: UTF8.self) }
        return String(decoding: try event.encoded(), as: UTF8.self)
    }
}
