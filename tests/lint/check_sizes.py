#!/usr/bin/python3
"""The size rules of docs/design.md ("Conventions"): in the folders given, no file over 600
lines, no class over 400, no function over 60 (counted from the line of its opening brace to
the line of its closing one, lambdas inside it included). A rough C++ reader: comments and
string literals are blanked, then braces are matched and each block is classed by the text
before it (namespace, class or struct, a function when that text has a parameter list and the
block opens in a namespace or class, anything else).

Usage: check_sizes.py ROOT FOLDER...   (exit 1 and one line per breach when a rule breaks)
"""
import pathlib
import re
import sys

MAX_FILE, MAX_CLASS, MAX_FUNCTION = 600, 400, 60


def blank(text):
    """Comments and string/char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def kind_of(header, enclosing):
    if re.search(r"\bnamespace\b", header):
        return "namespace"
    if re.search(r"\b(class|struct)\s+\w+[^(=]*$", header) and "enum" not in header:
        return "class"
    if "(" in header and enclosing in ("namespace", "class", None) and "=" not in header.split("(")[0]:
        return "function"
    return "other"


def check(path, breaches):
    text = path.read_text()
    lines = text.count("\n") + 1
    if lines > MAX_FILE:
        breaches.append(f"{path}: {lines} lines (files: at most {MAX_FILE})")
    code = blank(text)
    stack, header_start, line = [], 0, 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";{}":
            if c == "{":
                header = code[header_start:i].strip()
                enclosing = stack[-1][0] if stack else None
                stack.append((kind_of(header, enclosing), line, header.split("\n")[-1][:60]))
            elif c == "}" and stack:
                kind, start, name = stack.pop()
                length = line - start + 1
                if kind == "function" and length > MAX_FUNCTION:
                    breaches.append(f"{path}:{start}: function of {length} lines "
                                    f"(at most {MAX_FUNCTION}): {name}")
                if kind == "class" and length > MAX_CLASS:
                    breaches.append(f"{path}:{start}: class of {length} lines "
                                    f"(at most {MAX_CLASS}): {name}")
            header_start = i + 1


def main():
    root = pathlib.Path(sys.argv[1])
    breaches = []
    for folder in sys.argv[2:]:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".h", ".cc"):
                check(path, breaches)
    for b in breaches:
        print(b)
    if breaches:
        return 1
    print("size rules hold for: " + " ".join(sys.argv[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
