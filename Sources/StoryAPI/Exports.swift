import Foundation

extension API {
    /// How `GET /v1/projects/{id}/exports/pdf` lays out a print sheet: the
    /// query parameters (and `storyteller export pdf`'s options) as values,
    /// each parsed with a message in the user's words when it is wrong.
    package struct PrintSheetOptions: Hashable, Sendable {
        /// The paper sizes, in PDF points (1/72 inch) portrait.
        package enum Paper: String, CaseIterable, Sendable {
            case a4 = "A4"
            case a3 = "A3"
            case letter = "Letter"
            case legal = "Legal"
            case tabloid = "Tabloid"

            /// Width and height in points, portrait (ISO 216 sizes rounded as PDF writers round them).
            package var portraitSize: (width: Double, height: Double) {
                switch self {
                case .a4: (595.276, 841.89)
                case .a3: (841.89, 1190.551)
                case .letter: (612, 792)
                case .legal: (612, 1008)
                case .tabloid: (792, 1224)
                }
            }

            /// The paper a name means, in any case (`a4`, `LETTER`).
            package init?(named text: String) {
                guard let paper = Self.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
                    return nil
                }
                self = paper
            }
        }

        package enum Orientation: String, CaseIterable, Sendable { case portrait, landscape }

        /// Where a panel's text goes.
        package enum TextPlacement: String, CaseIterable, Sendable { case below, beside }

        /// What is printed with each panel.
        package enum Field: String, CaseIterable, Sendable { case label, caption, dialogue, action, notes, duration }

        package var paper: Paper = .a4
        package var orientation: Orientation = .landscape
        /// Panels down and across a page.
        package var rows = 2
        package var columns = 3
        package var text: TextPlacement = .below
        /// In the order asked for (the text of a panel follows it).
        package var fields: [Field] = Self.defaultFields
        /// Only these pages of the sheet (numbered as in the whole sheet); nil: all.
        package var pages: ClosedRange<Int>?

        /// The panels a page may hold (`per-page`), as storyboard tools offer them.
        package static let perPageChoices = [1, 2, 3, 4, 6, 8, 9, 12]
        /// The rows and columns a `grid` may have.
        package static let gridRange = 1...8
        /// Label, caption, dialogue and duration: what storyboard tools print by default.
        package static let defaultFields: [Field] = [.label, .caption, .dialogue, .duration]

        package init() {}

        /// The page's width and height in points.
        package var pageSize: (width: Double, height: Double) {
            let size = paper.portraitSize
            return orientation == .portrait ? size : (size.height, size.width)
        }

        /// The rows and columns of `count` panels a page, wider than high on landscape paper.
        package static func grid(perPage count: Int, orientation: Orientation) -> (rows: Int, columns: Int)? {
            let across: [Int: (Int, Int)] = [
                1: (1, 1), 2: (1, 2), 3: (1, 3), 4: (2, 2), 6: (2, 3), 8: (2, 4), 9: (3, 3), 12: (3, 4),
            ]
            guard let (rows, columns) = across[count] else { return nil }
            return orientation == .landscape ? (rows, columns) : (columns, rows)
        }

        /// The options a request's query asks for (`paper`, `orientation`,
        /// `per-page`, `grid`, `text`, `fields`, `pages`); absent ones keep their defaults.
        /// `name` spells a parameter in messages (the CLI's `--paper`).
        /// - Throws: `APIError.badRequest` naming the parameter and what it may be.
        package init(query: (String) -> String?, naming name: (String) -> String = { $0 }) throws(APIError) {
            if let text = query("paper") {
                guard let paper = Paper(named: text) else {
                    throw APIError(
                        .badRequest,
                        "\(name("paper")) must be one of \(Self.list(Paper.allCases.map(\.rawValue))), not '\(text)'")
                }
                self.paper = paper
            }
            if let text = query("orientation") {
                guard let orientation = Orientation(rawValue: text.lowercased()) else {
                    throw APIError(.badRequest, "\(name("orientation")) must be portrait or landscape, not '\(text)'")
                }
                self.orientation = orientation
            }
            if let text = query("grid") {
                guard query("per-page") == nil else {
                    throw APIError(.badRequest, "ask for \(name("per-page")) or \(name("grid")), not both")
                }
                (rows, columns) = try Self.grid(text, named: name("grid"))
            } else if let text = query("per-page") {
                guard let count = Int(text), let grid = Self.grid(perPage: count, orientation: orientation) else {
                    throw APIError(
                        .badRequest,
                        "\(name("per-page")) must be one of \(Self.list(Self.perPageChoices.map(String.init))) (or ask for a \(name("grid")) such as 2x3), not '\(text)'"
                    )
                }
                (rows, columns) = grid
            } else {
                (rows, columns) = Self.grid(perPage: 6, orientation: orientation) ?? (2, 3)
            }
            if let text = query("text") {
                guard let placement = TextPlacement(rawValue: text.lowercased()) else {
                    throw APIError(.badRequest, "\(name("text")) must be below or beside, not '\(text)'")
                }
                self.text = placement
            }
            if let text = query("fields") { fields = try Self.fields(text, named: name("fields")) }
            if let text = query("pages") { pages = try Self.pages(text, named: name("pages")) }
        }

        /// `ROWSxCOLS` (`2x3`).
        /// - Throws: `APIError.badRequest` when it is not two numbers in `gridRange`.
        package static func grid(_ text: String, named name: String = "grid") throws(APIError) -> (
            rows: Int, columns: Int
        ) {
            let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let rows = Int(parts[0]), let columns = Int(parts[1]), gridRange.contains(rows),
                gridRange.contains(columns)
            else {
                throw APIError(
                    .badRequest,
                    "\(name) must be ROWSxCOLUMNS with \(gridRange.lowerBound) to \(gridRange.upperBound) of each (such as 2x3), not '\(text)'"
                )
            }
            return (rows, columns)
        }

        /// A comma-separated list of fields, each once (`label,caption`).
        /// - Throws: `APIError.badRequest` naming an unknown or repeated field.
        package static func fields(_ text: String, named name: String = "fields") throws(APIError) -> [Field] {
            var fields: [Field] = []
            guard !text.isEmpty else { return fields }
            for field in text.split(separator: ",", omittingEmptySubsequences: false).map({
                $0.trimmingCharacters(in: .whitespaces)
            }) {
                guard let value = Field(rawValue: field.lowercased()) else {
                    throw APIError(
                        .badRequest,
                        "\(name) takes \(Self.list(Field.allCases.map(\.rawValue))), separated by commas; '\(field)' is not one of them"
                    )
                }
                guard !fields.contains(value) else { throw APIError(.badRequest, "\(name) names \(field) twice") }
                fields.append(value)
            }
            return fields
        }

        /// `FROM-TO` (`2-5`), `N` (one page) or `FROM-` (to the end), pages counted from 1.
        /// - Throws: `APIError.badRequest` when it is none of those or runs backwards.
        package static func pages(_ text: String, named name: String = "pages") throws(APIError) -> ClosedRange<Int> {
            let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let last = parts.count == 2 ? (parts[1].isEmpty ? Int.max : Int(parts[1])) : Int(parts[0])
            guard let first = Int(parts[0]), let last, first >= 1, last >= first else {
                throw APIError(
                    .badRequest, "\(name) must be FROM-TO with 1 ≤ FROM ≤ TO (such as 2-5, 3 or 4-), not '\(text)'")
            }
            return first...last
        }

        /// The options as a query (what the CLI sends).
        package var query: String {
            var items = [
                "paper=\(paper.rawValue)", "orientation=\(orientation.rawValue)", "grid=\(rows)x\(columns)",
                "text=\(text.rawValue)",
            ]
            items.append("fields=" + fields.map(\.rawValue).joined(separator: ","))
            if let pages {
                items.append("pages=\(pages.lowerBound)-" + (pages.upperBound == Int.max ? "" : "\(pages.upperBound)"))
            }
            return items.joined(separator: "&")
        }

        private static func list(_ names: [String]) -> String {
            names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
        }
    }

    /// `GET /v1/projects/{id}/exports/contact-sheet`: every panel in a grid, one PNG.
    package enum ContactSheet {
        /// The image's widths that may be asked for (`?width=`), in pixels.
        package static let widths = 320...4096
        /// The width when none is asked for.
        package static let defaultWidth = 1600
    }
}
