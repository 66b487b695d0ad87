#!/usr/bin/env python3
"""Where a request's server CPU goes, by kind of work: reads `perf script` output of a
`perf record -g` of the server during one bench scenario and prints a Markdown table of
each kind's share and its µs per request (the share × the CPU per request the bench printed).

    perf record -F 2000 -g -p "$(pgrep -f 'herald serve' | head -1)" -o herald.data -- sleep 5
    perf script -i herald.data -F comm,ip,sym,dso | bench/profile/categorize.py --us-per-request 300

A sample is put under the library or kernel path its innermost frame is in; kernel samples by
the system call or interrupt they serve. Issue #39's closing accounting is made with it.
"""
import argparse
import collections
import re
import sys

FRAME = re.compile(r"\s*[0-9a-f]+ (.*) \((.*)\)\s*$")


def samples(lines):
    """Each sample's frames, innermost first, as (symbol, object file)."""
    frames = None
    for line in lines:
        if not line.strip():
            if frames:
                yield frames
            frames = None
        elif not line[0].isspace():
            if frames:
                yield frames
            frames = []
        elif frames is not None:
            match = FRAME.match(line)
            if match:
                frames.append((match.group(1), match.group(2)))
    if frames:
        yield frames


def kind(frames):
    symbol, dso = frames[0]
    stack = " ".join(name for name, _ in frames)
    if "kallsyms" in dso:
        for label, pattern in [
            ("kernel: loopback TCP (send, receive)", r"tcp_|ip_|net_rx|sendmsg|recvfrom|sock_|__dev_queue|netif"),
            ("kernel: fsync / fdatasync (durability)", r"fsync|fdatasync"),
            ("kernel: database file reads and writes", r"pwrite|pread"),
            ("kernel: log writes", r"vfs_write|ksys_write"),
            ("kernel: epoll", r"epoll"),
            ("kernel: thread wake-ups and switches", r"futex|schedule|finish_task_switch|eventfd|try_to_wake"),
        ]:
            if re.search(pattern, stack):
                return label
        return "kernel: other (interrupts, faults, timers)"
    if "libcrypto" in dso:
        return "OpenSSL (libcrypto)"
    if "libsqlite3" in dso:
        return "SQLite"
    if "libpq" in dso:
        return "libpq"
    if "libmicrohttpd" in dso:
        return "libmicrohttpd"
    if "libc.so" in dso:
        if re.search(r"malloc|free|_int_|consolidate|unlink_chunk|usable", symbol):
            return "libc: malloc / free"
        if re.search(r"mem(set|move|cpy|cmp)", symbol):
            return "libc: memset / memcpy / memcmp"
        return "libc: other"
    if "libswift_Concurrency" in dso or "dispatch" in dso.lower():
        return "Swift concurrency, dispatch"
    if "libswift" in dso:
        if re.search(r"retain|release|Release|Retain|dealloc|RefCount|allocObject|slowAlloc", symbol):
            return "Swift runtime: reference counting, allocation"
        return "Swift standard library (strings, dictionaries, hashing)"
    if "herald" in dso:
        return "Herald's code (with the generics specialized into it)"
    return "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--us-per-request", type=float, help="server CPU µs per request, from the bench")
    arguments = parser.parse_args()
    counts = collections.Counter(kind(frames) for frames in samples(sys.stdin) if frames)
    total = sum(counts.values())
    if not total:
        sys.exit("categorize: no samples on standard input (perf script -F comm,ip,sym,dso)")
    print("| kind of work | share | µs per request |" if arguments.us_per_request else "| kind of work | share |")
    print("|---|---:|---:|" if arguments.us_per_request else "|---|---:|")
    for label, count in counts.most_common():
        share = 100 * count / total
        if arguments.us_per_request:
            print(f"| {label} | {share:.1f} % | {arguments.us_per_request * count / total:.0f} |")
        else:
            print(f"| {label} | {share:.1f} % |")
    print(f"\n{total} samples")


if __name__ == "__main__":
    main()
