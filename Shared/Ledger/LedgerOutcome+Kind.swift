extension LedgerOutcome {
    /// What a ledger function call did with one verified event: the `outcome` of its JSON answer (`apply`, `park`,
    /// `handed_over` in `Lua/ledger.lua` and `Lua/ledger_transactions.lua`; docs/CLUSTER.md §5). The raw value is the
    /// word the function answers, which the fulfiller's `tollgate_ledger_events_total` metric labels. An answer with
    /// any other word is refused where it is read (``LedgerOutcome/init(json:)``), as an unexpected reply.
    package enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Applied: the ledger was written (or nothing was owed) and the entry acknowledged.
        case fulfilled
        /// Refused (``LedgerOutcome/reason`` says why); the entry acknowledged.
        case rejected
        /// A notification already applied; the entry acknowledged.
        case duplicate
        /// No owner known yet: the event waits in its purchase chain's parked list.
        case parked
        /// N partitions: handed to the partition of its owner or of its purchase chains.
        case forwarded
        /// Another consumer completed the entry first: nothing written.
        case ackedElsewhere = "acked_elsewhere"
        /// The owner changed since it was looked up (or, with ``LedgerOutcome/claim``, a chain of another partition
        /// must be claimed first): nothing written, look the owner up again.
        case reresolve
    }
}
