extension Pharmacies {
    /// What the screen shows: a title bar with its buttons and a body.
    public struct Screen: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The main part of the screen.
        public enum Body: Hashable, Sendable, Codable {
            /// A spinner with a caption.
            case spinner(String)
            /// The empty state: an icon, a message and a button.
            case placeholder(icon: String, message: String, button: String)
            /// The pharmacies, one row each.
            case list([Row])
        }

        /// One pharmacy in the list.
        public struct Row: Hashable, Sendable, Codable {
            public var name: String
            public var address: String
            /// Shown while the pharmacy is being saved.
            public var isPending: Bool

            public init(name: String, address: String, isPending: Bool = false) {
                self.name = name
                self.address = address
                self.isPending = isPending
            }
        }

        public var title: String
        /// The buttons of the title bar, left to right.
        public var buttons: [String]
        public var body: Body

        public init(title: String = "Pharmacies", buttons: [String], body: Body) {
            self.title = title
            self.buttons = buttons
            self.body = body
        }

        /// The screen drawn as text, 46 columns wide.
        public var text: String {
            let width = 44
            // Long content wraps at spaces onto lines indented like its first line.
            func line(_ content: String) -> String {
                let room = width - 2
                if content.count <= room {
                    return "| " + content + String(repeating: " ", count: room - content.count) + " |"
                }
                let indent = String(content.prefix { $0 == " " })
                var rows: [String] = []
                var row = ""
                for word in content.split(separator: " ") {
                    let candidate = row.isEmpty ? indent + word : row + " " + word
                    if candidate.count > room && !row.isEmpty {
                        rows.append(row)
                        row = indent + "  " + word
                    } else {
                        row = candidate
                    }
                }
                rows.append(row)
                return rows.map { row in
                    let clipped = row.count > room ? String(row.prefix(room - 1)) + "…" : row
                    return "| " + clipped + String(repeating: " ", count: room - clipped.count) + " |"
                }.joined(separator: "\n")
            }
            let rule = "+" + String(repeating: "-", count: width) + "+"
            var lines = [rule, line(title + "   " + buttons.map { "[\($0)]" }.joined(separator: " ")), rule]
            switch body {
            case .spinner(let caption):
                lines += [line(""), line("   ( ◌ )  \(caption)"), line("")]
            case .placeholder(let icon, let message, let button):
                lines += [line(""), line("   \(icon)  \(message)"), line("        [\(button)]"), line("")]
            case .list(let rows):
                for (number, row) in zip(1..., rows) {
                    let pending = row.isPending ? "  (saving…)" : ""
                    lines.append(line("\(number). \(row.name)\(pending)"))
                    lines.append(line("   \(row.address)"))
                }
            }
            lines.append(rule)
            return lines.joined(separator: "\n")
        }

        public var description: String { text }
    }

    /// The screen for a state: a pure function, the article's renderer.
    ///
    /// A spinner while loading, a placeholder with a retry button when loading failed or with an
    /// add button when the list is empty, and the list otherwise. While adding, the new pharmacy
    /// already shows; while deleting, the deleted one is already gone; while dismissing, the
    /// screen shows exactly what it showed before, so nothing moves as it closes.
    public static func render(_ state: State) -> Screen {
        switch state {
        case .loading:
            Screen(buttons: ["Cancel"], body: .spinner("Loading your pharmacies…"))
        case .loadingFailed(let error):
            Screen(
                buttons: ["Cancel"],
                body: .placeholder(icon: "(!)", message: "Could not load: \(error)", button: "Retry"))
        case .loaded(let pharmacies, _), .searching(let pharmacies), .showingDirections(let pharmacies, _):
            render(list: pharmacies)
        case .adding(let pharmacies, let pharmacy):
            Screen(
                buttons: ["Cancel", "Add"],
                body: .list(rows(pharmacies) + [Screen.Row(name: pharmacy.name, address: pharmacy.address, isPending: true)]))
        case .deleting(let pharmacies, let index):
            render(list: pharmacies.enumerated().filter { $0.offset != index }.map(\.element))
        case .dismissing(let state, _):
            render(state)
        }
    }

    private static func render(list pharmacies: [Pharmacy]) -> Screen {
        if pharmacies.isEmpty {
            return Screen(
                buttons: ["Cancel", "Add"],
                body: .placeholder(icon: "[+]", message: "No pharmacies saved yet", button: "Add pharmacy"))
        }
        return Screen(buttons: ["Cancel", "Add"], body: .list(rows(pharmacies)))
    }

    private static func rows(_ pharmacies: [Pharmacy]) -> [Screen.Row] {
        pharmacies.map { Screen.Row(name: $0.name, address: $0.address) }
    }
}
