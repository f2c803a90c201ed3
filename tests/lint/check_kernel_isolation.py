#!/usr/bin/env python3
"""Checks, on the linked fastk binary, that every instruction beyond x86-64 lies in a kernel
object of cmake/FastkKernels.cmake, and none in the start-up check.

What it proves (docs/build.md §1): the baseline code of a FASTK_MARCH=x86-64 build, static
initialisers and every inline function or template the linker kept included, runs on any
x86-64 CPU; the wider code is only what a kernel entry point leads to (the kernel objects
export nothing else: check_kernel_object.sh). Non-vacuous: the kernel objects must hold AVX2
(ymm) and, where built, AVX-512 (zmm) code, or the test fails. For other FASTK_MARCH values only
the start-up check (isa/cpu.cc, isa/startup_check.cc) is held to x86-64.

Usage: check_kernel_isolation.py BINARY LINKER_MAP FASTK_MARCH "KERNEL_LEVELS"
"""
import re
import subprocess
import sys

# Mnemonics of x86-64-v3 and -v4 beyond VEX/EVEX (which all begin with "v"): BMI1/2, LZCNT, MOVBE.
BEYOND = {"andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "sarx", "shlx", "shrx", "rorx",
          "pdep", "pext", "mulx", "lzcnt", "movbe"}


def wide(mnemonic):
    return (mnemonic.startswith("v") and mnemonic not in ("verr", "verw")) or mnemonic in BEYOND


def ranges(map_path, pattern):
    """Address ranges of the input sections from objects whose name matches `pattern`."""
    found, section = [], None
    line_re = re.compile(r"^\s*(\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)\s*$")
    with open(map_path) as lines:
        for line in lines:
            if re.match(r"^\s(\.\S+)\s*$", line):
                section = line.split()[0]
                continue
            m = line_re.match(line)
            if not m:
                section = None
                continue
            name = m.group(1) or section
            section = None
            start, size = int(m.group(2), 16), int(m.group(3), 16)
            if name and name.startswith(".text") and size and re.search(pattern, m.group(4)):
                found.append((start, start + size))
    return found


def inside(address, spans):
    return any(a <= address < b for a, b in spans)


def main():
    binary, map_path, march, levels = sys.argv[1:5]
    kernels = ranges(map_path, r"_kernels_x86_64_v[234]\.o")
    startup = ranges(map_path, r"(startup_check|cpu)\.cc\.o")
    if not startup:
        print("no start-up check in the linker map: is isa/startup_check.cc linked?")
        return 1
    disassembly = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], check=True,
                                 capture_output=True, text=True).stdout
    function, outside, in_startup, kernel_regs = "?", {}, {}, set()
    for line in disassembly.splitlines():
        label = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if label:
            function = label.group(1)
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if not m or not wide(m.group(2)):
            continue
        address = int(m.group(1), 16)
        if inside(address, startup):
            in_startup.setdefault(function, m.group(2))
        elif inside(address, kernels):
            kernel_regs.update(re.findall(r"%([yz])mm", m.group(3)))
        else:
            outside.setdefault(function, m.group(2))
    failed = False
    for f, insn in in_startup.items():
        print(f"start-up check uses {insn} (beyond x86-64) in {f}")
        failed = True
    if march in ("x86-64", ""):
        for f, insn in sorted(outside.items())[:20]:
            print(f"baseline code uses {insn} (beyond x86-64) in {f}")
        failed = failed or bool(outside)
        for level, reg in (("x86-64-v3", "y"), ("x86-64-v4", "z")):
            if level in levels.split(";") and reg not in kernel_regs:
                print(f"the {level} kernels hold no {reg}mm instruction: not built for {level}?")
                failed = True
    print(f"-march={march or 'default'}, kernels {levels or 'none'}: "
          f"{len(kernels)} kernel sections, {len(startup)} start-up sections; "
          + ("FAILED" if failed else "every wider instruction is in a kernel object"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
