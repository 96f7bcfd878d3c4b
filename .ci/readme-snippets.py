#!/usr/bin/env python3
"""Keeps README.md's Swift code blocks identical to the code CI compiles and runs.

A block in README.md that follows a marker line

    <!-- snippet: Examples/Readme/TwentyLines.swift -->      (a whole file)
    <!-- snippet: Tests/FeedbackLoopTestingTests/ReadmeTests.swift#feature -->   (a slice)

must hold exactly that code. A whole file is shown without its `// snippet.hide` …
`// snippet.show` parts (DocC's snippet markers); a slice is the lines between `// snippet.NAME`
and `// snippet.end`, without their common indentation.

    .ci/readme-snippets.py          check: exit 1 and name each block that differs
    .ci/readme-snippets.py sync     rewrite README.md's blocks from the sources
"""
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARKER = re.compile(r"^<!-- snippet: (?P<path>[^#\s]+)(?:#(?P<slice>[\w-]+))? -->$")


def visible(path: Path, slice_name: str | None) -> str:
    lines = path.read_text().splitlines()
    if slice_name is not None:
        start = f"// snippet.{slice_name}"
        try:
            begin = next(i for i, line in enumerate(lines) if line.strip() == start)
        except StopIteration:
            raise SystemExit(f"error: {path.relative_to(ROOT)} has no slice '{slice_name}'")
        end = next((i for i in range(begin + 1, len(lines)) if lines[i].strip() == "// snippet.end"), None)
        if end is None:
            raise SystemExit(f"error: slice '{slice_name}' of {path.relative_to(ROOT)} has no // snippet.end")
        return textwrap.dedent("\n".join(lines[begin + 1:end])).strip("\n")
    shown, hidden = [], False
    for line in lines:
        marker = line.strip()
        if marker == "// snippet.hide":
            hidden = True
        elif marker == "// snippet.show":
            hidden = False
        elif not hidden:
            shown.append(line)
    return "\n".join(shown).strip("\n")


def blocks(text: str):
    """Yields (marker line index, block start, block end, path, slice) for each marked block."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = MARKER.match(line.strip())
        if not match:
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```swift":
            raise SystemExit(f"error: README.md:{i + 1}: a snippet marker must be followed by a ```swift block")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise SystemExit(f"error: README.md:{i + 2}: unterminated code block")
        yield i, i + 2, end, match["path"], match["slice"]


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    if mode not in ("check", "sync"):
        print(__doc__)
        return 2
    text = README.read_text()
    lines = text.splitlines()
    found = list(blocks(text))
    if not found:
        print("error: README.md has no snippet markers", file=sys.stderr)
        return 1
    stale = []
    # Bottom-up, so that rewriting a block keeps the indices of the ones above it.
    for marker, start, end, path, slice_name in reversed(found):
        source = ROOT / path
        if not source.exists():
            raise SystemExit(f"error: README.md:{marker + 1}: {path} does not exist")
        expected = visible(source, slice_name).splitlines()
        if lines[start:end] != expected:
            stale.append((marker, path + (f"#{slice_name}" if slice_name else "")))
            lines[start:end] = expected
    if mode == "sync":
        README.write_text("\n".join(lines) + "\n")
        print(f"README.md: {len(stale)} of {len(found)} block(s) rewritten")
        return 0
    for marker, name in sorted(stale):
        print(f"README.md:{marker + 2}: the block differs from {name}; run .ci/readme-snippets.py sync",
              file=sys.stderr)
    if stale:
        return 1
    print(f"README.md: {len(found)} block(s) match their sources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
