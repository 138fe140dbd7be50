/// Encodes Redis commands in RESP (arrays of bulk strings). Commands are built once at
/// setup and their bytes reused, so the hot loop only copies bytes.
public enum RESPCommand {
    public static func encode(_ arguments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        append(arguments.map { Array($0.utf8) }, to: &out)
        return out
    }

    public static func append(_ arguments: [[UInt8]], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "*"))
        out.append(contentsOf: String(arguments.count).utf8)
        out.append(contentsOf: [0x0D, 0x0A])
        for argument in arguments {
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: String(argument.count).utf8)
            out.append(contentsOf: [0x0D, 0x0A])
            out.append(contentsOf: argument)
            out.append(contentsOf: [0x0D, 0x0A])
        }
    }
}
