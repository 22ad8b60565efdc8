/// A Swift source file with its comments and string literals blanked out (each of their
/// characters but newlines becomes a space), so that a search for calls finds only code and
/// reports the line and column of the original text.
struct SwiftCode {
    /// The code, one `Character` per original character.
    let characters: [Character]

    init(_ source: String) {
        var output: [Character] = []
        output.reserveCapacity(source.count)
        let input = Array(source)
        var index = 0
        func blank(_ count: Int) {
            for offset in 0..<count where index + offset < input.count {
                output.append(input[index + offset] == "\n" ? "\n" : " ")
            }
            index += count
        }
        func starts(_ text: String) -> Bool {
            let characters = Array(text)
            return index + characters.count <= input.count && Array(input[index..<index + characters.count]) == characters
        }
        while index < input.count {
            if starts("//") {
                var end = index
                while end < input.count, input[end] != "\n" { end += 1 }
                blank(end - index)
            } else if starts("/*") {
                blank(Self.blockCommentLength(input, from: index))
            } else if let length = Self.stringLiteralLength(input, from: index) {
                blank(length)
            } else {
                output.append(input[index])
                index += 1
            }
        }
        characters = output
    }

    /// The line and column (both from 1) of a character.
    func position(of offset: Int) -> (line: Int, column: Int) {
        var line = 1, column = 1
        for character in characters[..<offset] {
            if character == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }

    /// Comments nest in Swift.
    private static func blockCommentLength(_ input: [Character], from start: Int) -> Int {
        var depth = 0, index = start
        while index < input.count {
            if input[index] == "/", index + 1 < input.count, input[index + 1] == "*" {
                depth += 1
                index += 2
            } else if input[index] == "*", index + 1 < input.count, input[index + 1] == "/" {
                depth -= 1
                index += 2
                if depth == 0 { break }
            } else {
                index += 1
            }
        }
        return index - start
    }

    /// The length of a string literal starting here (`"`, `"""`, with any number of `#`),
    /// nil when none starts here.
    private static func stringLiteralLength(_ input: [Character], from start: Int) -> Int? {
        var index = start
        var hashes = 0
        while index < input.count, input[index] == "#" {
            hashes += 1
            index += 1
        }
        guard index < input.count, input[index] == "\"" else { return nil }
        let multiline = index + 2 < input.count && input[index + 1] == "\"" && input[index + 2] == "\""
        let quotes = multiline ? 3 : 1
        index += quotes
        let closing = Array(repeating: Character("\""), count: quotes) + Array(repeating: Character("#"), count: hashes)
        while index < input.count {
            if input[index] == "\\" && hashes == 0 {
                index += 2
                continue
            }
            if !multiline && input[index] == "\n" { break }  // not a literal after all; resume as code
            if index + closing.count <= input.count && Array(input[index..<index + closing.count]) == closing {
                return index + closing.count - start
            }
            index += 1
        }
        return index - start
    }
}
