// Reaches into StoryCore's internals, which only a debug build (the one
// tests run in) exposes to `@testable import`; a release build of the whole
// package leaves this file out.
#if DEBUG
    @testable package import StoryCore

    /// What a hostile member's daemon can do to its own copy of a document, for
    /// tests that check every honest daemon refuses the result.
    extension ProjectDocument {
        /// Signs a change of any operations as this replica and logs it, with no
        /// check of its rights (what a modified daemon would do).
        package mutating func forge(_ operations: [Operation], at time: Int64) throws -> EncodedChange {
            var core = replicaState.core
            let header = core.nextLocalChangeHeader()
            let change = Change(
                replica: core.replica, seq: header.seq, startCounter: header.startCounter, wallTime: time,
                dependencies: header.dependencies, operations: operations, declaration: core.declaration(forSeq: header.seq))
            let (sign, hash) = try core.localSigner(seq: header.seq)!
            let encoded = change.encodedSharingPoints(sign: sign).change
            core.commitLocal(change, encoded: encoded, hash: hash())
            replicaState.core = core
            return encoded.markedAnchor(true)
        }

        /// Makes this copy believe its identity is an editor, so its editor makes
        /// (signed) edits the identity has no right to.
        package mutating func pretendToBeAnEditor() { replicaState.core.pretendToBeAnEditor() }

        /// The next sequence number and first counter a change of `replica` would have here.
        package func nextHeader(of replica: ReplicaID) -> (seq: UInt64, counter: UInt64) {
            (versionVector[replica] + 1, replicaState.core.clock + 1)
        }
    }

    extension LibraryDocument {
        /// Makes this copy of a library (a shared folder) believe its identity is
        /// an editor (see `ProjectDocument.pretendToBeAnEditor`).
        package mutating func pretendToBeAnEditor() { replicaState.core.pretendToBeAnEditor() }
    }

    extension ReplicaCore {
        /// Grants this replica's identity the editor role in its own access list,
        /// with no change that says so (what a modified daemon would do).
        mutating func pretendToBeAnEditor() {
            guard let author else { return }
            if access.owner == nil { access.owner = PeerID(digest: [UInt8](repeating: 0, count: 32)) }
            access.add(
                AccessGrant(
                    id: OpID(counter: 1 << 60, replica: author.replica), seq: 1, author: author.identity.peer,
                    target: author.identity.peer, role: .editor))
        }
    }

    extension SigningIdentity {
        /// Signs like the identity's daemon would (for forged changes in tests).
        package func signForTest(_ message: [UInt8]) -> [UInt8] { sign(message) }
    }

    extension Change {
        /// Encodes with a signature made by `identity` over the body alone (not
        /// a chain any replica continues): what a forger can produce.
        package func forgedEncoding(signedBy identity: SigningIdentity) -> EncodedChange {
            encodedSharingPoints(sign: { body in identity.signForTest(Authorship.signedMessage(identity.crypto.sha256(nil, body))) }).change
        }
    }
#endif
