// Header values without their surrounding blanks; Foundation-free so the reader stays plain.
extension Substring {
    var trimmingSpaces: String {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}

extension String {
    var trimmingSpaces: String { self[...].trimmingSpaces }
}
