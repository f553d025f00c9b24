#if COEXIST_FUZZING
import CoexistRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The target chosen by the first argument; set once, before libFuzzer starts calling.
nonisolated(unsafe) private var selected = FuzzTarget.events

/// libFuzzer calls this before parsing its flags: the first argument names the target, and is removed.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    let count = Int(argc.pointee)
    guard count >= 2, let arguments = argv.pointee, let first = arguments[1],
        let target = FuzzTarget(rawValue: String(cString: first))
    else {
        StandardStreams.error(FuzzTarget.usage)
        exit(ExitCode.usage.rawValue)
    }
    selected = target
    for index in 1..<count { arguments[index] = arguments[index + 1] }
    argc.pointee -= 1
    return 0
}

/// libFuzzer's entry point: one input through the selected target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selected.callback(data, size)
}
#endif
