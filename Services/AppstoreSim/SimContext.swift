import AppStore
import AppStoreTesting
import Foundation

/// What a change to the ledger needs besides the ledger: the signer, the settings and the time.
struct SimContext: Sendable {
    var signer: JWSSigner
    var configuration: SimConfiguration
    /// Now, in milliseconds since 1970.
    var now: Int64

    func sign(_ transaction: SimTransaction) throws(SimError) -> String {
        do {
            return try signer.sign(transaction.payload(signedDate: now))
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the transaction could not be signed")
        }
    }

    func sign(_ subscription: SimSubscription, latest: SimTransaction) throws(SimError) -> String {
        do {
            return try signer.sign(subscription.renewalInfo(latest: latest, signedDate: now))
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the renewal info could not be signed")
        }
    }
}
