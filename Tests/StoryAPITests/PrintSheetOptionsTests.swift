import StoryAPI
import Testing

/// `API.PrintSheetOptions`: a print sheet's query parsed, with defaults as
/// storyboard tools have them and mistakes said in the asker's words.
@Suite struct PrintSheetOptionsTests {
    static func options(_ query: [String: String], naming: @escaping (String) -> String = { $0 }) throws(APIError)
        -> API.PrintSheetOptions
    {
        try API.PrintSheetOptions(query: { query[$0] }, naming: naming)
    }

    @Test func theDefaultsAreA4LandscapeSixAPageWithLabelCaptionDialogueAndDuration() throws {
        let options = try Self.options([:])
        #expect(
            options.paper == .a4 && options.orientation == .landscape && options.text == .below && options.pages == nil)
        #expect(options.rows == 2 && options.columns == 3)
        #expect(options.fields == [.label, .caption, .dialogue, .duration])
        #expect(options.pageSize == (841.89, 595.276))
    }

    @Test(arguments: [
        (1, "landscape", 1, 1), (2, "landscape", 1, 2), (3, "landscape", 1, 3), (4, "landscape", 2, 2),
        (6, "landscape", 2, 3),
        (8, "landscape", 2, 4), (9, "landscape", 3, 3), (12, "landscape", 3, 4), (6, "portrait", 3, 2),
        (12, "portrait", 4, 3),
    ])
    func perPageIsTheGridOfStoryboardTools(count: Int, orientation: String, rows: Int, columns: Int) throws {
        let options = try Self.options(["per-page": String(count), "orientation": orientation])
        #expect(options.rows == rows && options.columns == columns)
    }

    @Test func paperOrientationGridTextFieldsAndPagesAreRead() throws {
        let options = try Self.options([
            "paper": "letter", "orientation": "Portrait", "grid": "4X2", "text": "beside", "fields": "notes, label",
            "pages": "2-",
        ])
        #expect(options.paper == .letter && options.pageSize == (612, 792))
        #expect(options.rows == 4 && options.columns == 2 && options.text == .beside)
        #expect(options.fields == [.notes, .label])
        #expect(options.pages == 2...Int.max)
        #expect(try Self.options(["pages": "3"]).pages == 3...3)
        #expect(try Self.options(["fields": ""]).fields.isEmpty, "the panels alone")
        // What the CLI sends is read back the same.
        let sent = Dictionary(
            uniqueKeysWithValues: options.query.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts[0], parts.count > 1 ? parts[1] : "")
            })
        #expect(try Self.options(sent) == options)
    }

    @Test(arguments: [
        (["paper": "B5"], "paper must be one of A4, A3, Letter, Legal or Tabloid, not 'B5'"),
        (
            ["per-page": "0"],
            "per-page must be one of 1, 2, 3, 4, 6, 8, 9 or 12 (or ask for a grid such as 2x3), not '0'"
        ),
        (["per-page": "5"], "per-page must be one of"),
        (["grid": "2by3"], "grid must be ROWSxCOLUMNS with 1 to 8 of each"),
        (["grid": "0x3"], "grid must be ROWSxCOLUMNS"), (["grid": "3x9"], "grid must be ROWSxCOLUMNS"),
        (["grid": "x"], "grid must be"),
        (["grid": "2x2", "per-page": "4"], "ask for per-page or grid, not both"),
        (["pages": "0"], "pages must be FROM-TO"),
        (["pages": "5-2"], "pages must be FROM-TO"), (["pages": "two"], "not 'two'"),
        (["pages": "-3"], "pages must be"),
        (["fields": "label,colour"], "'colour' is not one of them"),
        (["fields": "label,label"], "fields names label twice"),
        (["orientation": "sideways"], "orientation must be portrait or landscape"),
        (["text": "above"], "text must be below or beside"),
    ])
    func mistakesAreRefusedNamingTheParameter(query: [String: String], words: String) {
        #expect {
            try Self.options(query)
        } throws: { error in
            guard let error = error as? APIError else { return false }
            return error.code == .badRequest && error.message.contains(words)
        }
    }

    @Test func theCommandLineNamesItsOptions() {
        #expect {
            try Self.options(["grid": "2x2", "per-page": "4"], naming: { "--" + $0 })
        } throws: { error in
            (error as? APIError)?.message == "ask for --per-page or --grid, not both"
        }
    }
}
