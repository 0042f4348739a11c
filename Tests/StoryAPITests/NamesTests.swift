import StoryAPI
import Testing

/// `API.resolve`: ids, prefixes, names and labels to the ids the API takes.
@Suite struct NamesTests {
    static let projects = [
        API.Candidate(id: "3f2a9c1e000000000000000000000001", names: ["Night Train", "Films/Night Train"], display: "Films/Night Train  3f2a9c1"),
        API.Candidate(id: "3f2b00000000000000000000000000ff", names: ["Night Bus"], display: "Night Bus  3f2b000"),
        API.Candidate(id: "9a0000000000000000000000000000aa", names: ["Storm"], display: "Storm  9a00000"),
        API.Candidate(id: "9b0000000000000000000000000000bb", names: ["Storm"], display: "Storm  9b00000"),
    ]

    @Test func aWholeIdANameAPathAndAUniquePrefixEachSelectOne() throws {
        #expect(try API.resolve("3f2a9c1e000000000000000000000001", among: Self.projects, kind: "project").id.hasPrefix("3f2a"))
        #expect(try API.resolve("Night Train", among: Self.projects, kind: "project").id.hasPrefix("3f2a"))
        #expect(try API.resolve("night bus", among: Self.projects, kind: "project").id.hasPrefix("3f2b"), "names ignore case")
        #expect(try API.resolve("Films/Night Train", among: Self.projects, kind: "project").id.hasPrefix("3f2a"))
        #expect(try API.resolve("3f2a", among: Self.projects, kind: "project").id.hasPrefix("3f2a"))
        #expect(try API.resolve("9A", among: Self.projects, kind: "project").id.hasPrefix("9a"), "prefixes ignore case")
    }

    @Test func anAmbiguousPrefixOrNameListsTheCandidates() throws {
        let prefix = #expect(throws: API.NameError.self) { try API.resolve("3f2", among: Self.projects, kind: "project") }
        #expect(prefix?.reason == .ambiguous(candidates: ["Films/Night Train  3f2a9c1", "Night Bus  3f2b000"]))
        #expect(prefix?.description.contains("'3f2' could be any of 2 projects") == true)
        let name = #expect(throws: API.NameError.self) { try API.resolve("Storm", among: Self.projects, kind: "project") }
        #expect(name?.reason == .ambiguous(candidates: ["Storm  9a00000", "Storm  9b00000"]))
        // The whole id still selects one of two with the same name.
        #expect(try API.resolve("9b0000000000000000000000000000bb", among: Self.projects, kind: "project").names == ["Storm"])
    }

    @Test func nothingFoundSuggestsNearNames() throws {
        let typo = #expect(throws: API.NameError.self) { try API.resolve("Nigth Train", among: Self.projects, kind: "project") }
        #expect(typo?.reason == .notFound(suggestions: ["Night Train"]))
        #expect(typo?.description == "no project 'Nigth Train' (did you mean 'Night Train'?)")
        let part = #expect(throws: API.NameError.self) { try API.resolve("night", among: Self.projects, kind: "project") }
        #expect(part?.reason == .notFound(suggestions: ["Films/Night Train", "Night Bus", "Night Train"]))
        let nothing = #expect(throws: API.NameError.self) {
            try API.resolve("zzz", among: Self.projects, kind: "project", hint: "`storyteller projects list`")
        }
        #expect(nothing?.description == "no project 'zzz' (`storyteller projects list` lists them)")
    }

    @Test func peerPrefixesIgnoreTheDashes() throws {
        let peers = [
            API.Candidate(id: "YBB5GOE-GQ5FJ33-5EEN22A-XE43GRK-VDMGR2H-3HRCQFX-DSTMRI6-ZPZJYQP", names: ["bob"], display: "bob  YBB5GOE"),
            API.Candidate(id: "AAAAAAA-GQ5FJ33-5EEN22A-XE43GRK-VDMGR2H-3HRCQFX-DSTMRI6-ZPZJYQP", names: ["ann"], display: "ann  AAAAAAA"),
        ]
        #expect(try API.resolve("ybb5goegq5", among: peers, kind: "peer").names == ["bob"])
        #expect(try API.resolve("YBB5GOE-GQ5", among: peers, kind: "peer").names == ["bob"])
        #expect(try API.resolve("ann", among: peers, kind: "peer").id.hasPrefix("AAAAAAA"))
    }

    @Test func shortIDsAreUniqueAndAtLeastSevenLong() {
        let ids = ["3f2a9c1e00", "3f2a9c1f00", "9a00000000", "ab"]
        let short = API.shortIDs(ids)
        #expect(short["3f2a9c1e00"] == "3f2a9c1e" && short["3f2a9c1f00"] == "3f2a9c1f", "one character past the shared prefix")
        #expect(short["9a00000000"] == "9a00000")
        #expect(short["ab"] == "ab", "never longer than the id")
        #expect(Set(short.values).count == ids.count)
    }

    @Test func letterLabelsCountLikeSpreadsheetColumns() {
        #expect((0..<3).map(API.letterLabel) == ["A", "B", "C"])
        #expect(API.letterLabel(25) == "Z" && API.letterLabel(26) == "AA" && API.letterLabel(27) == "AB" && API.letterLabel(701) == "ZZ")
    }

    @Test func shotsScenesAndLayersByLabelNumberTitleAndName() throws {
        let project = Self.project
        let shots = API.shotCandidates(project)
        #expect(try API.resolve("1-2", among: shots, kind: "shot").id == "7@00000000000000a1")
        #expect(try API.resolve("1B", among: shots, kind: "shot").id == "7@00000000000000a1")
        #expect(try API.resolve("2a", among: shots, kind: "shot").id == "9@00000000000000a1")
        let scenes = API.sceneCandidates(project)
        #expect(try API.resolve("2", among: scenes, kind: "scene").id == "8@00000000000000a1")
        #expect(try API.resolve("platform", among: scenes, kind: "scene").id == "3@00000000000000a1", "by title")
        let layers = API.layerCandidates(project)
        let ink = #expect(throws: API.NameError.self) { try API.resolve("ink", among: layers, kind: "layer") }
        #expect(ink?.description.contains("could be any of 2 layers") == true, "two shots have an ink layer")
        #expect(try API.resolve("1-2/ink", among: layers, kind: "layer").id == "11@00000000000000a1")
        #expect(try API.resolve("2A/ink", among: layers, kind: "layer").id == "10@00000000000000a1")
        #expect(try API.resolve("ink", among: API.layerCandidates(project, shot: "9@00000000000000a1"), kind: "layer").id == "10@00000000000000a1")
    }

    static func layer(_ id: String, _ name: String) -> API.Layer {
        API.Layer(id: id, name: name, visible: true, locked: false, opacity: 1, transform: [1, 0, 0, 1, 0, 0], group: nil, strokes: [])
    }

    static func shot(_ id: String, _ label: String, _ layers: [API.Layer]) -> API.Shot {
        API.Shot(id: id, label: label, background: nil, caption: nil, notes: nil, duration: nil, aspectRatio: 1.78, layers: layers)
    }

    static let project = API.Project(
        id: "3f2a9c1e000000000000000000000001", name: "Night Train", title: "Night Train", description: nil, aspectRatio: 1.78, createdAt: nil,
        updatedAt: nil, deleted: false, role: "owner", readOnly: false, owner: nil, legacy: false,
        scenes: [
            API.Scene(
                id: "3@00000000000000a1", number: 1, title: "Platform", description: nil,
                shots: [shot("4@00000000000000a1", "1-1", []), shot("7@00000000000000a1", "1-2", [layer("11@00000000000000a1", "ink")])]),
            API.Scene(
                id: "8@00000000000000a1", number: 2, title: "Tunnel", description: nil,
                shots: [shot("9@00000000000000a1", "2-1", [layer("10@00000000000000a1", "ink")])]),
        ])
}

@Suite struct TimeFormatTests {
    @Test func isoTimesAreUTCWithMilliseconds() {
        #expect(API.isoTime(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(API.isoTime(milliseconds: 1_795_319_712_345) == "2026-11-22T03:55:12.345Z")
        #expect(API.isoTime(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(API.isoTime(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
    }
}
