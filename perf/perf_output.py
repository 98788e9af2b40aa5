"""Where the perf scripts' JSON goes, in the words of the C perf programs
(apps/common/perf_common.c) and of every clmg command: --output FILE writes
the JSON document to FILE (replaced only once the new one is complete),
--json prints it on stdout instead of the table (which then goes nowhere).
The old spelling --json FILE (and --json=FILE) still writes FILE, with a
note on stderr, until 0.3.0.

    parser = argparse.ArgumentParser(...)
    perf_output.add_arguments(parser)
    args = perf_output.parse(parser, "program")
    with perf_output.table(args):
        document = ...            # prints the table
    return perf_output.write("program", args, document)
"""
import contextlib
import io
import json
import os
import sys

OLD_SPELLING = ("{program}: --json FILE is now --output FILE (and --json alone prints it) "
                "(every command's name for it); the old spelling goes in 0.3.0")


def add_arguments(parser):
    """--output FILE and --json, with the C programs' help texts."""
    parser.add_argument("--output", metavar="FILE",
                        help="write the results as JSON to FILE (replaced only once the new "
                             "one is complete)")
    parser.add_argument("--json", action="store_true",
                        help="print the results as JSON on stdout instead of the table (the "
                             "old spelling --json FILE writes FILE, with a note, until 0.3.0)")


def translate_old_spelling(program, argv):
    """argv with the old --json FILE and --json=FILE as --output FILE (a note
    on stderr for each); --json - is --json. A value is FILE when it does not
    start with '-', as the C programs read it. An empty name: exit status 2."""
    out = []
    k = 0
    while k < len(argv):
        word = argv[k]
        if word == "--":
            out.extend(argv[k:])
            break
        file = None
        if word.startswith("--json="):
            file = word[len("--json="):]
            if not file:
                print(f"{program}: {word} needs a file name", file=sys.stderr)
                sys.exit(2)
        elif word == "--json" and k + 1 < len(argv) and (
                not argv[k + 1].startswith("-") or argv[k + 1] == "-"):
            file = argv[k + 1]
            k += 1
        if file is None:
            out.append(word)
        else:
            print(OLD_SPELLING.format(program=program), file=sys.stderr)
            out.extend(["--json"] if file == "-" else ["--output", file])
        k += 1
    return out


def parse(parser, program, argv=None):
    """parser.parse_args with the old spelling translated; an empty --output
    is refused (exit status 2) before anything runs."""
    args = parser.parse_args(translate_old_spelling(
        program, sys.argv[1:] if argv is None else argv))
    if args.output is not None and not args.output:
        parser.error("--output needs a file name")
    return args


@contextlib.contextmanager
def table(args):
    """The table's stdout: nowhere with --json (stderr stays)."""
    if args.json:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    else:
        yield


def write(program, args, document):
    """Writes the document to --output's FILE (through FILE.tmp, then
    renamed) and prints it with --json. Returns the exit status: 0, or 1
    after saying why FILE could not be written."""
    text = json.dumps(document, indent=1) + "\n"
    status = 0
    if args.output:
        temporary = args.output + ".tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, args.output)
        except OSError as error:
            print(f"{program}: cannot write {args.output}: {error}", file=sys.stderr)
            with contextlib.suppress(OSError):
                os.remove(temporary)
            status = 1
    if args.json:
        sys.stdout.write(text)
        sys.stdout.flush()
    return status
