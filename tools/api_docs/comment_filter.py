#!/usr/bin/env python3
"""Doxygen's INPUT_FILTER for Tessera's headers: they are commented with plain // (the project's style),
which Doxygen ignores, so this turns them into Doxygen comments as it reads each file, leaving the
files themselves as they are. Line numbers do not move, so warnings point at the real lines.

- a comment on a line of its own becomes ///, documenting the declaration that follows;
- a comment after code on the same line becomes ///<, documenting that line's declaration;
- a comment over consecutive one-line declarations of one name (an overload set, one-line inline
  definitions and explicit specializations such as f<float>() included) documents all of them: the run
  becomes a Doxygen member group, whose comment DISTRIBUTE_GROUP_DOC gives each member;
- a comment over one line declaring several variables (`Tensor weight, bias;`) documents each of them;
- a comment after a one-line struct with a single member (`struct S { using type = T; };  // ...`)
  documents both the struct and that member (a table of trait specializations, one per line);
- a comment block followed by a blank line (a section note) stays a plain comment;
- `#pragma once` becomes `/// @file`, so the comment block that opens each header documents the file.
"""
import re
import sys

OWN_LINE = re.compile(r"^(\s*)//(?![/!])\s?(.*)$")
TRAILING = re.compile(r"^([^\"']*?[;,{}]\s*)//(?![/!<])\s?(.*)$")
NAMESPACE_END = re.compile(r"^\s*}\s*//")
ONE_MEMBER_STRUCT = re.compile(r"^(\s*(?:template\s*<[^>]*>\s*)?struct\s[^{]*\{[^{};]*;\s*)(\};\s*)$")
ACCESS = re.compile(r"^\s*(public|private|protected):\s*$")


def convert(line):
    if line.strip() == "#pragma once":
        return "/// @file"
    m = OWN_LINE.match(line)
    if m:
        return f"{m.group(1)}/// {m.group(2)}"
    m = TRAILING.match(line)
    if m and not NAMESPACE_END.match(line):
        one = ONE_MEMBER_STRUCT.match(m.group(1))
        if one:
            return f"{one.group(1)}/**< {m.group(2)} */ {one.group(2)}///< {m.group(2)}"
        return f"{m.group(1)}///< {m.group(2)}"
    return line


def code_part(line):
    return line.split("//", 1)[0].rstrip()


MULTI_DECLARATION = re.compile(r"^\s*[\w:<>]+\s+\w+(\s*=\s*[^,;(]+)?(\s*,\s*\w+(\s*=\s*[^,;(]+)?)+;\s*$")
DECLARED_NAME = re.compile(r"(operator\s*[^\s(]+|~?\w+)(?:<[^()]*>)?\s*\(")


def overload_run(lines, start):
    """The end (exclusive) of the run of one-line declarations of one name (an overload set) starting at
    `start`; start when there are fewer than two, or the lines open a body."""
    end, names = start, set()
    while end < len(lines):
        code = code_part(lines[end])
        if not code or OWN_LINE.match(lines[end]) or ACCESS.match(lines[end]) or not code.endswith((";", "}")):
            break
        if code.count("(") != code.count(")") or code.count("{") != code.count("}"):
            break
        m = DECLARED_NAME.search(code)
        if not m or (names and m.group(1) not in names):
            break
        names.add(m.group(1))
        end += 1
    return end if end - start >= 2 and len(names) == 1 else start


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = [convert(line) for line in lines]
    # A comment block with a blank line under it documents nothing in particular (a section note):
    # it stays a plain comment, so that it does not join the next declaration's documentation.
    i = 0
    while i < len(lines):
        if OWN_LINE.match(lines[i]):
            end = i
            while end < len(lines) and OWN_LINE.match(lines[end]):
                end += 1
            if end < len(lines) and not lines[end].strip() and not (i > 0 and lines[i - 1].strip() == "#pragma once"):
                out[i:end] = lines[i:end]
            i = end
        else:
            i += 1
    i = 0
    while i < len(lines):
        if OWN_LINE.match(lines[i]) and i + 1 < len(lines) and not OWN_LINE.match(lines[i + 1]):
            end = overload_run(lines, i + 1)
            if end == i + 1 and MULTI_DECLARATION.match(code_part(lines[i + 1])):
                end = i + 2  # one member group whose comment each of the variables receives
            if end > i + 1:
                out[i + 1] = "/**@{*/ " + out[i + 1]
                last = out[end - 1]
                code = code_part(last)  # the group closes before a trailing ///< comment, not inside it
                out[end - 1] = code + " /**@}*/" + last[len(code):]
                i = end
                continue
        i += 1
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
