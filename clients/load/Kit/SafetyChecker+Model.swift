extension SafetyChecker {
    /// Starts the panel model at the first snapshot: its seq, its fence, and the
    /// buttons already pressed then (their fences are unknown).
    func startModel(at seq: Int64, fence: Int64, pressed: [Int32]) {
        modelStarted = true
        nextApply = seq + 1
        lastFence = fence
        modelStartFence = fence
        for b in pressed {
            let g = buttons.groups[Int(b)]
            fair[g].line = nil  // who waits behind an owner the model never saw is unknown
            fair[g].owned = true
            var placeholder = WireMessage(kind: .pressed)
            placeholder.button = b
            open[g].append(OpenGrant(pressed: placeholder, witness: 0, preexisting: true))
        }
    }

    /// Applies the window's events to the model while the next seq is known.
    func applyReady() {
        guard modelStarted else { return }
        while let entry = window.entry(nextApply) {
            apply(entry.message, witness: entry.stream)
            nextApply += 1
        }
    }

    private func apply(_ m: WireMessage, witness: Int32) {
        orderCounts[Int(m.kind.rawValue)] += 1
        applyFair(m, witness: witness)
        guard m.button >= 0, Int(m.button) < buttons.count else { return }
        let b = Int(m.button)
        let g = buttons.groups[b]
        let kind = buttons.kinds[b]
        switch m.kind {
        case .pressed:
            if m.fence <= lastFence {
                var evidence = [describe(Int(witness), m)]
                if let (previous, by) = lastPressed { evidence.insert(describe(Int(by), previous), at: 0) }
                violate(.fenceOrder, "fence \(m.fence) is not above the last fence \(lastFence)", evidence)
            }
            lastFence = max(lastFence, m.fence)
            lastPressed = (m, witness)
            if let current = open[g].first {
                let holder = buttons.ids[Int(current.pressed.button)]
                violate(
                    .twoOwners, "group \(buttons.groupNames[g]) granted while \(holder) still owns it",
                    [
                        current.preexisting ? "(owned since before the first snapshot: \(holder))" : describe(Int(current.witness), current.pressed),
                        describe(Int(witness), m),
                    ])
            }
            // Kept beside the other, so each is still closed by its own RELEASED.
            open[g].append(OpenGrant(pressed: m, witness: witness))
            pressedApplied(m, witness: witness)
        case .fired:
            guard let i = matching(g, m) else {
                return violate(.firedCount, "FIRED without an open grant of that button and fence", [describe(Int(witness), m)])
            }
            open[g][i].fired += 1
            let grant = open[g][i]
            if kind == .talk {
                violate(.firedCount, "a talk button never fires", [describe(Int(witness), m)])
            } else if grant.fired > 1 {
                violate(.firedCount, "FIRED \(grant.fired) times for one grant", [describe(Int(grant.witness), grant.pressed), describe(Int(witness), m)])
            }
        case .released:
            guard let i = matching(g, m) else {
                return violate(
                    .pressRelease, "RELEASED without an open PRESSED of that button and fence (released twice, or never pressed)",
                    [describe(Int(witness), m)])
            }
            let grant = open[g].remove(at: i)
            noteReleased(m)
            guard !grant.preexisting else { return }
            checkFiring(grant, kind: kind, released: m, witness: witness)
        default:
            break
        }
    }

    /// Where in group `g` the open grant that `m` names (button and fence) is.
    private func matching(_ g: Int, _ m: WireMessage) -> Int? {
        open[g].firstIndex { $0.pressed.button == m.button && ($0.preexisting || $0.pressed.fence == m.fence) }
    }

    private func checkFiring(_ grant: OpenGrant, kind: PanelButtonKind, released m: WireMessage, witness: Int32) {
        let evidence = [describe(Int(grant.witness), grant.pressed), describe(Int(witness), m)]
        switch kind {
        case .hold:
            if m.reason == .fired && grant.fired != 1 {
                violate(.firedCount, "hold completed (reason=fired) with \(grant.fired) FIRED", evidence)
            } else if m.reason != .fired && grant.fired != 0 {
                violate(.firedCount, "hold FIRED but was released reason=\(m.reason.word)", evidence)
            }
        case .tap:
            if grant.fired != 1 { violate(.firedCount, "tap grant with \(grant.fired) FIRED (exactly one at the grant)", evidence) }
        case .talk:
            break
        }
    }

    func compareGrant(_ stream: Int, _ grant: WireMessage, _ pressed: WireMessage, _ witness: Int32) {
        lastMatchedFence = max(lastMatchedFence, grant.fence)
        let session = streams[stream].session
        if grant.button != pressed.button || (session >= 0 && session != pressed.session) {
            violate(
                .grantMismatch, "GRANTED and PRESSED of fence=\(grant.fence) disagree on the button or the owner",
                [describe(stream, grant) + " (session s\(session))", describe(Int(witness), pressed)])
        }
    }

    func oldestNeeded() -> Int64 {
        sinceTrim += 1
        if sinceTrim >= 256 || cachedOldest == 0 {
            sinceTrim = 0
            var oldest = nextApply
            for s in streams where s.active && s.joined && s.term == modelTerm && s.expected < oldest { oldest = s.expected }
            cachedOldest = oldest
        }
        return cachedOldest
    }
}
