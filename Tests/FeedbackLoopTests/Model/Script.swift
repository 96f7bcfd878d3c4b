import FeedbackLoop
import Foundation

/// A generated test script: an initial state and the steps to play on it. Steps name effects by
/// position among the commandable effects started so far, so that a shrunk script (steps
/// removed) still runs: a step whose target no longer exists does nothing, in the model and in
/// the loop alike.
struct Script: CustomStringConvertible {
    enum Command: Hashable, CustomStringConvertible {
        case send(ModelSystem.Op)
        case finish
        case finishSending(ModelSystem.Op)
        case fail

        var description: String {
            switch self {
            case .send(let op): "send \(op)"
            case .finish: "finish"
            case .finishSending(let op): "finish sending \(op)"
            case .fail: "throw"
            }
        }
    }

    enum Step: Hashable, CustomStringConvertible {
        case send(ModelSystem.Op)
        case sendAndWait(ModelSystem.Op)
        /// The `pick`-th commandable effect (modulo how many there are) does `command`.
        case effect(pick: Int, Command)
        case addObserver
        /// The `pick`-th observer still observing leaves.
        case removeObserver(pick: Int)
        case stop

        var description: String {
            switch self {
            case .send(let op): "send \(op)"
            case .sendAndWait(let op): "sendAndWait \(op)"
            case .effect(let pick, let command): "effect[\(pick)] \(command)"
            case .addObserver: "observe"
            case .removeObserver(let pick): "stop observing [\(pick)]"
            case .stop: "stop"
            }
        }
    }

    var initial: ModelSystem.State
    var steps: [Step]

    var description: String {
        "initial: \(initial)\n" + steps.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
    }

    // MARK: Generating

    static func random(using rng: inout SplitMix64, maxSteps: Int = 200) -> Script {
        var initial = ModelSystem.State()
        initial.a = rng.chance(0.5) ? rng.int(5) : nil
        initial.b = rng.chance(0.3) ? rng.int(3) : nil
        initial.c = rng.chance(0.3) ? rng.int(3) : nil
        initial.flag = rng.chance(0.3)
        initial.set = Set((0..<rng.int(3)).map { _ in rng.int(4) })
        initial.kid = rng.chance(0.3) ? rng.int(5) : nil
        // Mostly short scripts, some up to `maxSteps`: short ones find most bugs, and fast.
        let length = 1 + Int(Double(maxSteps - 1) * pow(rng.unit(), 2.5))
        let steps = (0..<length).map { _ in randomStep(using: &rng) }
        return Script(initial: initial, steps: steps)
    }

    static func randomOp(using rng: inout SplitMix64) -> ModelSystem.Op {
        let value: Int? = rng.chance(0.2) ? nil : rng.int(5)
        switch rng.int(10) {
        case 0, 1: return .setA(value)
        case 2: return .setB(rng.chance(0.5) ? nil : value)
        case 3: return .setC(value)
        case 4: return .setFlag(rng.chance(0.5))
        case 5: return .insert(rng.int(4))
        case 6: return .remove(rng.int(4))
        case 7: return .ping
        case 8: return .setKid(value)
        default: return .noop
        }
    }

    static func randomStep(using rng: inout SplitMix64) -> Step {
        let roll = rng.int(100)
        switch roll {
        case 0..<32: return .send(randomOp(using: &rng))
        case 32..<40: return .sendAndWait(randomOp(using: &rng))
        case 40..<84:
            let command: Command
            switch rng.int(10) {
            case 0..<5: command = .send(randomOp(using: &rng))
            case 5, 6: command = .finish
            case 7, 8: command = .finishSending(randomOp(using: &rng))
            default: command = .fail
            }
            return .effect(pick: rng.int(1_000), command)
        case 84..<91: return .addObserver
        case 91..<97: return .removeObserver(pick: rng.int(1_000))
        default: return .stop
        }
    }

    // MARK: Shrinking

    /// The smallest script found, by removing runs of steps, that still `fails`.
    func shrunk(while fails: (Script) async -> Bool) async -> Script {
        var best = self
        var chunk = max(1, best.steps.count / 2)
        while chunk >= 1 {
            var start = 0
            var removedAny = false
            while start < best.steps.count {
                var candidate = best
                candidate.steps.removeSubrange(start..<min(start + chunk, best.steps.count))
                if await fails(candidate) {
                    best = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return best
    }
}

/// A small, fast, seedable generator (SplitMix64), so that a failing script can be replayed
/// from its seed.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func chance(_ probability: Double) -> Bool { unit() < probability }
}
