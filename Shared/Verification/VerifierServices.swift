package import AppStore
import Core
import Foundation
package import HTTPClient

/// The verifier's clients of Apple, built from its configuration: the `verifier` executable's builder (`App.build` in
/// Services/Verifier), the reconciler and `tollctl` each make theirs here.
package enum VerifierServices {
    /// The JWS verifier, the receipt checkers (`verifyReceipt`'s client, the offline signature check) and the API clients, sharing one transport of the configured
    /// kind (instrumented for the calls to Apple; OCSP queries, should online checks be switched on, go through it
    /// uninstrumented).
    package static func appleClients(
        _ configuration: VerifierConfiguration, metrics: VerifierMetrics
    ) throws -> (SignedDataVerifier, ReceiptCheckers, AppleAPIClients) {
        let base = configuration.httpTransport.make(maximumConnectionsPerHost: max(4, configuration.concurrency))
        let transport = InstrumentedTransport(base: base, metrics: metrics)
        let signedData: SignedDataVerifier
        do {
            signedData = try SignedDataVerifier(
                configuration: SignedDataVerifierConfiguration(
                    rootCertificates: configuration.rootCertificates, bundleId: configuration.bundleId,
                    environment: configuration.environment, appAppleId: configuration.appAppleId,
                    acceptsSandbox: configuration.acceptSandbox, onlineChecks: configuration.onlineChecks,
                    checksRevocation: configuration.onlineChecks,
                    ocspRequester: TransportOCSPRequester(transport: base, timeout: configuration.appleTimeout),
                    onlineChainLifetime: Double(configuration.onlineChainLifetime.components.seconds),
                    additionalApps: configuration.additionalApps.map(\.identity)))
        } catch {
            throw ConfigurationError(variable: "TOLLGATE_ROOT_CERTS", problem: "is not usable: \(error.message)")
        }
        let receipts = ReceiptClient(
            configuration: ReceiptClientConfiguration(
                bundleId: configuration.bundleId, sharedSecret: configuration.sharedSecret,
                additionalApps: configuration.additionalApps.map { .init(bundleId: $0.bundleId, sharedSecret: $0.sharedSecret) },
                productionURL: configuration.verifyReceiptURL, sandboxURL: configuration.verifyReceiptSandboxURL,
                allowSandbox: configuration.allowsSandbox, startInSandbox: configuration.environment == .sandbox,
                timeout: configuration.appleTimeout), transport: transport)
        let signatures: ReceiptSignatureVerifier
        do {
            signatures = try ReceiptSignatureVerifier(
                rootCertificates: configuration.receiptRoots, intermediateCertificates: configuration.receiptIntermediates)
        } catch {
            throw ConfigurationError(
                variable: "TOLLGATE_RECEIPT_ROOT_CERTS, TOLLGATE_RECEIPT_INTERMEDIATE_CERTS", problem: "is not usable: \(error.message)")
        }
        return (
            signedData, ReceiptCheckers(legacy: receipts, signatures: signatures),
            try makeAPIClients(configuration, transport: transport)
        )
    }

    /// The App Store Server API clients of every app with a key, per environment the deployment accepts: each app's
    /// with its own key and its own bundle ID as `bid` (``AppleAPIClients``); none without a key.
    package static func makeAPIClients(
        _ configuration: VerifierConfiguration, transport: any HTTPTransport
    ) throws -> AppleAPIClients {
        var environments: [AppStoreEnvironment] = []
        if configuration.environment == .production { environments.append(.production) }
        if configuration.allowsSandbox { environments.append(.sandbox) }
        var entries: [AppleAPIClients.Entry] = []
        for app in configuration.apps {
            guard let key = app.apiKey else { continue }
            for environment in environments {
                do {
                    let client = try AppStoreServerAPIClient(
                        configuration: AppStoreServerAPIConfiguration(
                            issuerId: key.issuerId, keyId: key.keyId, privateKeyPEM: key.privateKeyPEM,
                            bundleId: app.bundleId, environment: environment, productionURL: configuration.apiURL,
                            sandboxURL: configuration.apiSandboxURL, timeout: configuration.appleTimeout), transport: transport)
                    entries.append(AppleAPIClients.Entry(bundleId: app.bundleId, environment: environment, client: client))
                } catch {
                    let variable = configuration.additionalApps.isEmpty ? "TOLLGATE_API_PRIVATE_KEY_PATH" : AppRegistry.variable
                    throw ConfigurationError(
                        variable: variable,
                        problem: configuration.additionalApps.isEmpty
                            ? "is not usable: \(error.message)" : "has an unusable apiKey for \(app.bundleId): \(error.message)")
                }
            }
        }
        return AppleAPIClients(entries)
    }
}
