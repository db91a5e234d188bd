/// What the ledger does with a second introductory free trial of one user in one subscription group
/// (`TOLLGATE_REPEAT_FREE_TRIAL`): Apple allows one introductory offer per Apple ID and group, so a user with two
/// Apple IDs can start a second free trial; Tollgate knows both belong to one user.
package enum RepeatFreeTrial: String, Sendable, Hashable, CaseIterable {
    /// The second trial grants access like any other period (the default).
    case allow
    /// The second trial (another purchase chain's introductory offer whose `offerDiscountType` is `FREE_TRIAL`, after
    /// an introductory offer of the same group) is recorded but grants nothing; the first paid period of its chain
    /// grants access as usual. Paid introductory offers are always honoured.
    case refuse
}
