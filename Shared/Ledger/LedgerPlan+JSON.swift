import Core
import Foundation

/// The plan's JSON written by hand (``Core/JSONWriter``): one per delivery on the fulfiller's hot path, where
/// `JSONEncoder` cost more than building the plan. Members as `Encodable` wrote them (nil ones left out; the
/// Lua reads absent and nil alike). Debug builds (every test run) also encode the plan with `JSONEncoder` and
/// refuse to go on when the two documents differ, so a member added to a type here and not below fails every
/// ledger test that writes it.
extension LedgerPlan {
    func json() throws -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        body.write(to: &writer)
        #if DEBUG
        let reference = try JSONReader.parse(Array(JSONEncoder().encode(body)))
        guard try JSONReader.parse(writer.bytes) == reference else {
            throw LedgerError.unexpectedReply(
                "the hand-written plan differs from JSONEncoder's: \(String(decoding: writer.bytes, as: UTF8.self))")
        }
        #endif
        return writer.bytes
    }
}

extension LedgerPlan.Body {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("jobId", jobId)
        writer.member("kind", kind)
        writer.member("user", user)
        writer.member("env", env)
        writer.member("channel", channel)
        writer.member("now", now)
        writer.member("verifiedAt", verifiedAt)
        writer.member("retention", retention)
        writer.member("clamp", clamp)
        writer.member("by", by)
        writer.member("byKey", byKey)
        writer.member("claim", claim)
        writer.member("explicit", explicit)
        writer.member("forwarded", forwarded)
        writer.member("hops", hops)
        writer.member("unparked", unparked)
        writer.member("order", order)
        writer.member("orderNo", orderNo)
        writer.member("pending", pending)
        if let note {
            writer.key("note")
            writer.beginObject()
            writer.member("type", note.type)
            writer.member("uuid", note.uuid)
            writer.member("signed", note.signed)
            writer.member("evidence", note.evidence)
            writer.endObject()
        }
        writer.member("due", due)
        writer.member("dueRef", dueRef)
        writer.key("txs")
        writer.beginArray()
        for tx in txs { tx.write(to: &writer) }
        writer.endArray()
        writer.key("ents")
        writer.beginArray()
        for ent in ents {
            writer.beginObject()
            writer.member("name", ent.name)
            writer.member("type", ent.type)
            writer.member("days", ent.days)
            writer.member("key", ent.key)
            writer.endObject()
        }
        writer.endArray()
        writer.member("trials", trials)
        writer.member("apple", apple)
        writer.member("ulog", ulog)
        writer.member("ulogCap", ulogCap)
        writer.member("ulogTtl", ulogTtl)
        writer.member("side", side)
        writer.member("project", project)
        writer.key("renewals")
        writer.beginArray()
        for renewal in renewals {
            writer.beginObject()
            writer.member("ent", renewal.ent)
            writer.member("otid", renewal.otid)
            writer.member("bind", renewal.bind)
            writer.member("bound", renewal.bound)
            writer.member("auto", renewal.auto)
            writer.member("retry", renewal.retry)
            writer.member("grace", renewal.grace)
            writer.member("signed", renewal.signed)
            writer.member("aprod", renewal.aprod)
            writer.member("intent", renewal.intent)
            writer.member("winback", renewal.winback)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}

extension LedgerPlan.Tx {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("tid", tid)
        writer.member("otid", otid)
        writer.member("product", product)
        writer.member("type", type)
        writer.member("coins", coins)
        writer.member("qty", qty)
        writer.member("ent", ent)
        writer.member("purchase", purchase)
        writer.member("expires", expires)
        writer.member("revoked", revoked)
        writer.member("signed", signed)
        writer.member("family", family)
        writer.member("upgraded", upgraded)
        writer.member("aat", aat)
        writer.member("rec", rec)
        writer.member("txo", txo)
        writer.member("bind", bind)
        writer.member("park", park)
        writer.member("owner", owner)
        writer.member("aatKey", aatKey)
        writer.member("towner", towner)
        writer.member("torder", torder)
        writer.member("rtype", rtype)
        writer.member("rpct", rpct)
        writer.member("offer", offer)
        writer.member("osig", osig)
        writer.member("group", group)
        writer.member("intro", intro)
        writer.member("trial", trial)
        writer.member("price", price)
        writer.member("cur", cur)
        writer.member("sf", sf)
        writer.member("otype", otype)
        writer.member("oid", oid)
        writer.endObject()
    }
}
