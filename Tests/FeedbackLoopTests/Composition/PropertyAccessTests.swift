import Testing

@testable import FeedbackLoop

/// A scope reads and writes its child through `PropertyAccess`: by a pointer step where the key
/// path is a chain of stored properties, as a key path otherwise. Both must do exactly what the
/// key path does, whatever the layout around the child.
@Suite struct PropertyAccessTests {
    final class Box: @unchecked Sendable {  // @unchecked: the tests touch it from one task
        var count = 0
        var tags: [String] = []
    }

    struct Inner: Equatable {
        var flag = false
        var names: [String] = ["a"]
        var count = 1
    }

    struct Root: @unchecked Sendable {  // @unchecked: `box` is only read by the tests' one task
        var byte: UInt8 = 7
        var inner = Inner()
        var pair: (Int8, [Int]) = (3, [1, 2])
        var optional: Inner? = Inner(flag: true, names: [], count: 9)
        var box = Box()
        var computed: Int {
            get { inner.count * 2 }
            set { inner.count = newValue / 2 }
        }
    }

    @Test func storedPropertiesTakeThePointerStepAndTheRestTheKeyPath() {
        #expect(PropertyAccess(\Root.inner).offset != nil)
        #expect(PropertyAccess(\Root.inner.names).offset != nil)
        #expect(PropertyAccess(\Root.pair.1).offset != nil)
        #expect(PropertyAccess(\Root.optional).offset != nil)
        #expect(PropertyAccess(\Root.computed).offset == nil)
        #expect(PropertyAccess(\Root.box.tags).offset == nil)
    }

    @Test func readsAndWritesWhatTheKeyPathReadsAndWrites() {
        var viaAccess = Root()
        var viaKeyPath = viaAccess
        viaKeyPath.box = Box()
        viaAccess.box = Box()

        func check<Value: Equatable>(_ keyPath: WritableKeyPath<Root, Value> & Sendable, _ change: (inout Value) -> Void) {
            let access = PropertyAccess(keyPath)
            #expect(access.read(viaAccess) == viaKeyPath[keyPath: keyPath])
            access.modify(&viaAccess, change)
            change(&viaKeyPath[keyPath: keyPath])
            #expect(access.read(viaAccess) == viaKeyPath[keyPath: keyPath])
        }
        check(\Root.byte) { $0 += 1 }
        check(\Root.inner) { $0.flag.toggle() }
        check(\Root.inner.names) { $0.append("b") }
        check(\Root.inner.count) { $0 += 40 }
        check(\Root.pair.1) { $0.append(3) }
        check(\Root.optional) { $0 = nil }
        check(\Root.computed) { $0 = 100 }
        check(\Root.box.tags) { $0.append("x") }
        check(\Root.box.count) { $0 += 1 }

        #expect(viaAccess.byte == viaKeyPath.byte)
        #expect(viaAccess.inner == viaKeyPath.inner)
        #expect(viaAccess.inner == Inner(flag: true, names: ["a", "b"], count: 50))
        #expect(viaAccess.pair.0 == 3 && viaAccess.pair.1 == [1, 2, 3])
        #expect(viaAccess.optional == nil)
        #expect(viaAccess.box.tags == ["x"] && viaAccess.box.count == 1)
    }

    /// A write through the access changes the root it was given, never a copy of it: the other
    /// copy keeps its value (the array's storage is copied on write, not shared).
    @Test func aWriteChangesOnlyTheRootItWasGiven() {
        let access = PropertyAccess(\Root.inner.names)
        var root = Root()
        let before = root
        access.modify(&root) { $0.append("z") }
        #expect(root.inner.names == ["a", "z"])
        #expect(before.inner.names == ["a"])
        #expect(access.read(before) == ["a"])
    }
}
