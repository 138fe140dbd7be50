import ArbiterCore

/// Decodes one text line (without its line ending) into a command.
public enum TextCommandParser {
    public enum Outcome: Sendable, Equatable {
        /// Empty or whitespace-only: ignored, no reply.
        case empty
        case command(ParsedCommand)
        case failure(RequestError)
    }

    public static func parse(_ line: UnsafeBufferPointer<UInt8>) -> Outcome {
        // A byte order mark, as some Windows tools put before a file piped in, is
        // invisible: an error that named it would read "PING is not a command".
        if line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
            return parseLine(UnsafeBufferPointer(rebasing: line[3...]))
        }
        return parseLine(line)
    }

    private static func parseLine(_ line: UnsafeBufferPointer<UInt8>) -> Outcome {
        var start = 0
        while start < line.count, LineTokenizer.isSpace(line[start]) { start += 1 }
        if start == line.count { return .empty }
        if !UTF8Validator.isValid(line) {
            return .failure(RequestError(.badUTF8, "line is not valid UTF-8; it was ignored"))
        }
        if line[start] == UInt8(ascii: "{") {
            return JSONCommandParser.parse(UnsafeBufferPointer(rebasing: line[start...]))
        }
        if let request = FastLineParser.parse(line) {
            return .command(ParsedCommand(request: request, format: .text))
        }
        return parseGeneral(line)
    }

    /// The general path: every command, every option, every error message.
    static func parseGeneral(_ line: UnsafeBufferPointer<UInt8>) -> Outcome {
        let tokens: [LineToken]
        do {
            tokens = try LineTokenizer.tokenize(line)
        } catch {
            let what = error == .unterminatedQuote ? "a quote is not closed" : "only \\\" and \\\\ may follow a backslash"
            return .failure(RequestError(.badSyntax, what))
        }
        if tokens.isEmpty { return .empty }
        do throws(RequestError) {
            return .command(ParsedCommand(request: try build(tokens), format: .text))
        } catch {
            return .failure(error)
        }
    }

    /// Convenience for tests and tools.
    public static func parse(_ line: String) -> Outcome {
        var copy = line
        return copy.withUTF8 { parse($0) }
    }

    private static func build(_ tokens: [LineToken]) throws(RequestError) -> Request {
        let word = tokens[0].key.map { "\($0)=\(tokens[0].value)" } ?? tokens[0].value
        let verb = word.uppercased()
        guard let syntax = CommandSyntax.byVerb[verb] else {
            let hint = CommandSyntax.closest(to: word).map { "did you mean \($0)? Send" } ?? "send"
            throw RequestError(.unknownCommand, "\(word) is not a command; \(hint) HELP for the list")
        }
        var args: CommandBuilder.Args = [:]
        var positional = 0
        let names = syntax.required + syntax.optional
        for token in tokens.dropFirst() {
            // PING echoes its token whatever it looks like.
            if let key = token.key, syntax.verb != .ping {
                guard syntax.options.contains(key) else {
                    let allowed = syntax.options.isEmpty ? "it takes none" : "it takes " + syntax.options.map { "\($0)=" }.joined(separator: ", ")
                    throw RequestError(.badSyntax, "\(verb) has no option \(key)=; \(allowed); usage: \(syntax.usage)")
                }
                guard args[key] == nil else { throw RequestError(.badSyntax, "\(key)= given twice") }
                args[key] = token.value
            } else {
                guard positional < names.count else {
                    throw RequestError(.badSyntax, "too many arguments; usage: \(syntax.usage)")
                }
                args[names[positional]] = token.key.map { "\($0)=\(token.value)" } ?? token.value
                positional += 1
            }
        }
        guard positional >= syntax.required.count else {
            throw RequestError(.badSyntax, "missing <\(syntax.required[positional])>; usage: \(syntax.usage)")
        }
        return try CommandBuilder.build(syntax, args, format: .text, id: nil)
    }
}
