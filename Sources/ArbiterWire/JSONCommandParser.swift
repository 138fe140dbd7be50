import ArbiterCore

/// Decodes a JSON command (`{"cmd":"down","panel":"demo","button":"b1","id":"c7"}`).
public enum JSONCommandParser {
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> TextCommandParser.Outcome {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maxDepth: 8)
        } catch {
            return .failure(RequestError(.badSyntax, "invalid JSON: \(error.description)", format: .json))
        }
        guard case .object(let members) = value else {
            return .failure(RequestError(.badSyntax, "a command is a JSON object", format: .json))
        }
        var id: CommandID?
        switch value["id"] {
        case .none, .null?: id = nil
        case .string(let s)?: id = .string(s)
        case .number(let n)?: id = .number(n)
        case let other?:
            return .failure(RequestError(.badSyntax, "id must be a string or a number, not \(other.typeName)", format: .json))
        }
        do throws(RequestError) {
            return .command(ParsedCommand(request: try build(members, id: id), format: .json, id: id))
        } catch {
            return .failure(error)
        }
    }

    public static func parse(_ text: String) -> TextCommandParser.Outcome {
        var copy = text
        return copy.withUTF8 { parse($0) }
    }

    private static func build(_ members: [(String, JSONValue)], id: CommandID?) throws(RequestError) -> Request {
        func fail(_ code: ErrorCode, _ message: String) -> RequestError {
            RequestError(code, message, format: .json, id: id)
        }
        guard let cmd = members.first(where: { $0.0 == "cmd" })?.1 else {
            throw fail(.badSyntax, "missing \"cmd\"; send {\"cmd\":\"help\"} for the list")
        }
        guard case .string(let word) = cmd else { throw fail(.badSyntax, "\"cmd\" must be a string") }
        guard let syntax = CommandSyntax.byVerb[word.uppercased()] else {
            let hint = CommandSyntax.closest(to: word).map { "did you mean \($0.lowercased())? Send" } ?? "send"
            throw fail(.unknownCommand, "\(word) is not a command; \(hint) {\"cmd\":\"help\"} for the list")
        }
        let allowed = Set(syntax.required + syntax.optional + syntax.options)
        var args: CommandBuilder.Args = [:]
        for (key, value) in members where key != "cmd" && key != "id" {
            guard allowed.contains(key) else {
                let fields = (syntax.required + syntax.optional + syntax.options).map { "\"\($0)\"" }.joined(separator: ", ")
                throw fail(.badSyntax, "\(word) has no field \"\(key)\"" + (fields.isEmpty ? "" : "; its fields: \(fields)"))
            }
            guard args[key] == nil else { throw fail(.badSyntax, "\"\(key)\" given twice") }
            switch value {
            case .string(let s): args[key] = s
            case .number(let n) where key == "fence" || key == "n" || key == "token": args[key] = n
            default: throw fail(.badSyntax, "\"\(key)\" must be a string, not \(value.typeName)")
            }
        }
        for name in syntax.required where args[name] == nil {
            throw fail(.badSyntax, "missing \"\(name)\" for \(word)")
        }
        return try CommandBuilder.build(syntax, args, format: .json, id: id)
    }
}
