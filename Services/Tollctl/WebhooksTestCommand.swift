import AppStore
import ArgumentParser
import Foundation
import HTTPClient
import Webhooks

/// `tollctl webhooks test [--endpoint NAME]`: posts a signed test event (`type` `test`, `seq` 0, no user) to the
/// endpoint, as the notifier would, and prints the answer: status, headers and at most 8 KB of body. Exit status 1
/// unless it is 2xx.
struct WebhooksTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test", abstract: "Send a signed test event to an endpoint and print the answer.")

    @OptionGroup var options: WebhooksOptions

    func run() async throws {
        let settings = try WebhooksOptions.settings()
        let endpoint = try options.chosen(in: settings)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let id = "test-\(UUID().uuidString.lowercased())"
        let body = Array(#"{"id":"\#(id)","type":"test","seq":0,"at":\#(now)}"#.utf8)
        let sender = WebhookSender(transport: WebhookSender.makeTransport(connectionsPerHost: 1), timeout: settings.timeout)
        let request = sender.request(body: body, eventID: id, endpoint: endpoint, timestamp: now / 1000)
        print("POST \(endpoint.url.absoluteString)  Tollgate-Event-Id: \(id)")
        let response: HTTPTransportResponse
        do {
            response = try await sender.transport.send(request)
        } catch let error as HTTPTransportError {
            print("no answer: \(error)")
            throw ExitCode(1)
        }
        print("HTTP \(response.status)")
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { print("\(name): \(value)") }
        print("")
        print(String(decoding: response.body.prefix(WebhookSender.maximumResponseSize), as: UTF8.self))
        if !(200...299).contains(response.status) { throw ExitCode(1) }
    }
}
