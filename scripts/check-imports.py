#!/usr/bin/env python3
"""Fails when a target's `import` lines and its Package.swift dependencies differ.

For every Swift target of the package (tests and test support included) the modules its
files import that are targets of this package must be exactly the targets it declares as
dependencies: an import without a declared dependency builds only by accident (through another
target's dependency), and a declared dependency nobody imports is a false edge in the graph.
An import that is neither a target of this package nor a toolchain module is an error too.

The manifest is read with `swift package dump-package` under a throwaway scratch path, so
it neither waits for nor disturbs a build running in .build.

Usage: scripts/check-imports.py [PACKAGE_DIR]   (exit 0 clean, 1 on a difference)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Modules that come with the Swift toolchain or the platform: never a package dependency.
TOOLCHAIN_MODULES = {
    "Swift", "_Concurrency", "_StringProcessing", "Foundation", "FoundationEssentials",
    "FoundationInternationalization", "FoundationNetworking", "FoundationXML", "CoreFoundation",
    "Dispatch", "Glibc", "Musl", "Darwin", "Android", "WinSDK", "Synchronization", "RegexBuilder",
    "Observation", "Distributed", "Testing", "XCTest", "os",
}

# `import X`, `@testable import X`, `@_implementationOnly import X`, `public import X`,
# `import struct X.Y`: the module is the first name after `import` and the optional kind.
IMPORT = re.compile(
    r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?"
    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)


def swift_binary():
    return shutil.which("swift") or "/opt/swift/usr/bin/swift"


def dump_package(root):
    scratch = tempfile.mkdtemp(prefix="check-imports-")
    try:
        output = subprocess.run(
            [swift_binary(), "package", "--package-path", root, "--scratch-path", scratch, "dump-package"],
            check=True, capture_output=True, text=True,
        ).stdout
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return json.loads(output)


def declared_dependencies(target):
    names = set()
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target"):
            if kind in dependency:
                names.add(dependency[kind][0])
        if "product" in dependency:
            names.add(dependency["product"][0])
    return names


def target_path(root, target):
    if target.get("path"):
        return os.path.join(root, target["path"])
    folder = "Tests" if target["type"] == "test" else "Sources"
    return os.path.join(root, folder, target["name"])


def imports_in(folder):
    """Module name → the first file:line that imports it, skipping multi-line string literals."""
    found = {}
    for directory, _, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            in_string = False
            with open(path, encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    if line.count('"""') % 2 == 1:
                        in_string = not in_string
                        continue
                    if in_string:
                        continue
                    match = IMPORT.match(line)
                    if match:
                        found.setdefault(match.group(1), f"{os.path.relpath(path)}:{number}")
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    package = dump_package(root)
    swift_targets = [t for t in package["targets"] if t["type"] in ("regular", "executable", "test")]
    package_modules = {t["name"] for t in package["targets"]}
    problems = []
    for target in swift_targets:
        name = target["name"]
        imported = imports_in(target_path(root, target))
        declared = declared_dependencies(target)
        for module, where in sorted(imported.items()):
            if module == name:
                continue
            if module in package_modules:
                if module not in declared:
                    problems.append(f"{name}: imports {module} ({where}) but does not declare it in Package.swift")
            elif module not in TOOLCHAIN_MODULES:
                problems.append(f"{name}: imports {module} ({where}), neither a target of this package nor a toolchain module")
        for module in sorted(declared - set(imported)):
            problems.append(f"{name}: declares {module} in Package.swift but no file of it imports {module}")
    for problem in problems:
        print(f"check-imports: {problem}", file=sys.stderr)
    if problems:
        print(f"check-imports: {len(problems)} difference(s) between imports and Package.swift", file=sys.stderr)
        return 1
    print(f"check-imports: {len(swift_targets)} targets, imports match Package.swift")
    return 0


if __name__ == "__main__":
    sys.exit(main())
