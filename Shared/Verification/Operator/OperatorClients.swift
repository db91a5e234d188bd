import Core

/// The refusals of an operator's command that finds no API client to ask Apple with (``OperatorAPI``).
enum OperatorClients {
    /// No app of `project` has an App Store Server API key.
    static func apiNotConfigured(in project: ProjectID) -> VerificationError {
        project.isDefault
            ? VerificationError.apiNotConfigured
            : VerificationError("api_not_configured", "no app of project \(project) has an App Store Server API key (TOLLGATE_APPS)")
    }
}
