#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `--output` sends the report, checked before any measuring starts.
///
/// A regular file (or a new one) is replaced atomically: the report goes to a temporary file in the
/// same directory, which is then renamed over the destination, so an interrupted run never leaves
/// half a report. Anything else the user names — a symbolic link, a FIFO, a terminal, `/dev/stdout`,
/// `/dev/full` — is opened and written through, as a shell redirection would: renaming over it
/// would replace the link or device node with a regular file. `-` is standard output.
enum ReportDestination: Equatable {
    case standardOutput
    /// A regular file, or a name that does not exist yet: written to a temporary file and renamed.
    case replacing(path: String)
    /// Anything that is not a regular file: opened and written in place.
    case writingThrough(path: String)

    /// What went wrong, naming the path and what was expected.
    struct Failure: Error, CustomStringConvertible, Equatable {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Checks that `path` can take a report and says how it will be written.
    static func check(_ path: String) throws(Failure) -> ReportDestination {
        if path == "-" { return .standardOutput }
        guard !path.isEmpty else { throw Failure("--output needs a file name (or - for standard output)") }
        var link = stat()
        guard lstat(path, &link) == 0 else {
            let error = errno
            guard error == ENOENT else { throw Failure("cannot write the report to \(path): \(describe(error))") }
            let directory = parentDirectory(of: path)
            var info = stat()
            guard stat(directory, &info) == 0, isDirectory(info) else {
                throw Failure("cannot write the report to \(path): the directory \(directory) does not exist")
            }
            guard access(directory, W_OK | X_OK) == 0 else {
                throw Failure("cannot write the report to \(path): the directory \(directory) is not writable (\(describe(errno)))")
            }
            return .replacing(path: path)
        }
        var target = stat()
        guard stat(path, &target) == 0 else {
            throw Failure("cannot write the report to \(path): it is a symbolic link to something that does not exist")
        }
        if isDirectory(target) {
            throw Failure("cannot write the report to \(path): it is a directory; name a file inside it")
        }
        guard access(path, W_OK) == 0 else {
            throw Failure("cannot write the report to \(path): \(describe(errno))")
        }
        // A regular file is renamed over only if it is not a link and its directory lets us
        // create the temporary file; otherwise it is rewritten in place.
        if isRegular(link), access(parentDirectory(of: path), W_OK | X_OK) == 0 {
            return .replacing(path: path)
        }
        return .writingThrough(path: path)
    }

    /// Writes `text`, or throws a ``Failure`` naming the path and the system's reason.
    func write(_ text: String) throws(Failure) {
        switch self {
        case .standardOutput:
            try Self.writeAll(text, to: STDOUT_FILENO, path: "standard output")
        case .writingThrough(let path):
            let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            guard descriptor >= 0 else { throw Failure("cannot write the report to \(path): \(Self.describe(errno))") }
            defer { close(descriptor) }
            try Self.writeAll(text, to: descriptor, path: path)
        case .replacing(let path):
            try Self.replace(path, with: text)
        }
    }

    private static func replace(_ path: String, with text: String) throws(Failure) {
        let directory = parentDirectory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? "report"
        var template = Array("\(directory)/.\(name).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw Failure("cannot write the report to \(path): cannot create a temporary file in \(directory): \(describe(errno))")
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        // mkstemp creates the file 0600; give the report the mode a new file would get, or keep
        // the one of the file it replaces.
        var existing = stat()
        let mode: mode_t
        if stat(path, &existing) == 0 {
            mode = existing.st_mode & 0o7777
        } else {
            let mask = umask(0)
            umask(mask)
            mode = 0o666 & ~mask
        }
        fchmod(descriptor, mode)
        do {
            try writeAll(text, to: descriptor, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw Failure("cannot write the report to \(path): \(describe(errno))") }
        guard rename(temporary, path) == 0 else {
            throw Failure("cannot write the report to \(path): \(describe(errno))")
        }
        renamed = true
    }

    private static func writeAll(_ text: String, to descriptor: Int32, path: String) throws(Failure) {
        var bytes = Array(text.utf8)
        let error: Int32? = bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let error { throw Failure("cannot write the report to \(path): \(describe(error))") }
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    static func describe(_ error: Int32) -> String {
        String(cString: strerror(error)).lowercased()
    }

    private static func isDirectory(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }
    private static func isRegular(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }
}

/// The C library's `write(2)`, out of reach by its own name inside a type with a `write` method.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
