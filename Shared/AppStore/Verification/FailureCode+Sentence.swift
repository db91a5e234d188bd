extension FailureCode {
    /// What a job's status tells the app about this code: one plain sentence, the same every time. A failure's own
    /// message can name library errors, certificates, Apple's answers and source files: it goes to the log, never to
    /// the app.
    package var sentence: String {
        if let sentence = Self.sentences[rawValue] { return sentence }
        if rawValue.hasPrefix("api_") { return "The App Store Server API refused or could not answer the request." }
        return "The purchase could not be verified."
    }

    private static let retried = " The job will be retried."

    private static let sentences: [String: String] = [
        "invalid_format": "The signed data is not in the App Store's format.",
        "unsupported_algorithm": "The signed data does not use the App Store's signature algorithm.",
        "invalid_chain": "The signed data is not signed through a certificate chain to Apple's root.",
        "invalid_signature": "The signature does not verify.",
        "certificate_expired": "A certificate of the signature was not valid when the data was signed.",
        "certificate_revoked": "A certificate of the signature is revoked.",
        "retryable_ocsp": "Apple's certificate status service did not answer." + retried,
        "chain_check_deferred": "The signature's certificates could not be checked now." + retried,
        "wrong_bundle_id": "The data is for another app.",
        "wrong_project": "The purchase is of an app of another project than the user's.",
        "wrong_app_apple_id": "The data is for another app.",
        "wrong_environment": "The data is from an App Store environment this deployment does not take.",
        "sandbox_not_allowed": "Sandbox purchases are not accepted by this deployment.",
        "missing_notification_data": "The notification does not say which app or purchase it is about.",
        "ambiguous_notification_data": "The notification is about more than one thing at once.",
        "invalid_receipt": "The receipt is not a base64 App Store receipt.",
        "receipt_request_invalid": "Apple could not read the receipt.",
        "receipt_malformed": "The receipt is not an App Store receipt.",
        "receipt_not_authentic": "The receipt is not signed by Apple.",
        "receipt_too_many_certificates": "The receipt carries more certificates than Apple's receipts do.",
        "receipt_history_too_long":
            "The customer's purchase history is longer than this deployment reads for one receipt.",
        "receipt_unsupported": "This kind of receipt cannot be checked here; send the app receipt.",
        "shared_secret_mismatch": "The app's shared secret is not the one Apple has.",
        "receipt_unauthorized": "Apple did not authorize the receipt check.",
        "receipt_rejected": "Apple rejected the receipt.",
        "apple_unavailable": "The App Store is unavailable." + retried,
        "operator_call_failed": "The operator's call could not be made now." + retried,
        "apple_rate_limited": "The App Store's rate limit was reached." + retried,
        "apple_timeout": "The App Store did not answer in time." + retried,
        "apple_unreachable": "The App Store could not be reached." + retried,
        "apple_bad_response": "The App Store's answer could not be read." + retried,
        "user_apple_budget_spent": "This user's purchases asked the App Store too often this hour." + retried,
        "api_not_found": "The App Store does not know this transaction.",
        "api_not_configured": "This deployment has no App Store Server API key for this environment.",
        "ledger_unavailable": "The ledger could not be read." + retried,
        "poison": "The job failed every time it was handled; an operator can look into it and retry it.",
        "retries_exhausted": "The job could not be completed after every retry; an operator can retry it.",
        "malformed_entry": "The job could not be read; an operator can look into it.",
    ]
}
