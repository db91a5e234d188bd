/// Why an App Store Server API call did not give an answer, as the job's outcome.
struct APICallFailure: Error, Sendable {
    var outcome: VerificationOutcome
}
