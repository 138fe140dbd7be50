import ArbiterWire

/// Standard Webhooks 1.0: the headers and signature its libraries in every common
/// language verify, so a receiver needs no code of ours.
public enum WebhookSignature {
    /// `v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`.
    public static func sign(key: [UInt8], id: String, timestamp: Int64, body: [UInt8]) -> String {
        var mac = HMACSHA256(key: key)
        mac.update(Array("\(id).\(timestamp).".utf8))
        mac.update(body)
        return "v1," + Base64.encode(mac.finalize())
    }

    /// The headers of one attempt; the signature only with a key.
    public static func headers(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]?) -> [(String, String)] {
        var headers = [("webhook-id", id), ("webhook-timestamp", String(timestamp))]
        if let key { headers.append(("webhook-signature", sign(key: key, id: id, timestamp: timestamp, body: body))) }
        return headers
    }
}
