import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import Pipeline
import Redis

extension IngestRoutes {
    /// `PUT /v1/users/{userId}/consent {"consented": Bool}` (services only: the app's backend, which asked the
    /// user): records whether the user consented to Tollgate sharing consumption data with Apple
    /// (``Keys/consent(user:)``) → `200 {userId, consented, at}`. Without a recorded `true` the verifier answers no
    /// `CONSUMPTION_REQUEST` for that user's purchases.
    func consent(_ request: Request, userID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .consent)
        let keys = scoped(to: caller.project).keys  // the key's project's ledger only (docs/PROJECTS.md)
        guard UserID.isValid(userID) else { throw IngestError.invalidRequest("the user id is not valid") }
        struct Body: Decodable { var consented: Bool }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(try await self.body(of: request, limit: 1024)))
        } catch let error as IngestError {
            throw error
        } catch {
            throw IngestError.invalidRequest("the body must be {\"consented\": true|false}")
        }
        let now = clock.nowMilliseconds()
        _ = try await redisRead {
            try await redis.send(
                RedisCommand(
                    "HSET", key: keys.consent(user: userID), "consented", body.consented ? "1" : "0", "at", String(now),
                    "by", caller.name))
        }
        logger.info("consent recorded", metadata: ["user.id": "\(userID)", "consented": "\(body.consented)", "key": "\(caller.name)"])
        return jsonResponse(.ok) { answer in
            answer.member("at", now)
            answer.member("consented", body.consented)
            answer.member("userId", userID)
        }
    }
}
