/// Returns `value` unchanged, but hides it from the optimizer, so that the bare loops measured as
/// limits call their reducer and queries like the engine does instead of being folded away.
@_optimize(none)
func opaque<T>(_ value: T) -> T {
    value
}
