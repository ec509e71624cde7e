"""An SMT-LIB2 solver process around the Bitwuzla Python package, for yosys-smtbmc.

PyPI's `bitwuzla` wheel ships the solver as a Python module, without the `bitwuzla` binary
that `yosys-smtbmc -s bitwuzla` starts. scripts/setup.sh installs the wheel and a
`bitwuzla` launcher that runs this file: it reads commands from stdin, one s-expression at
a time, hands declarations, assertions and push/pop to Bitwuzla's own SMT-LIB2 parser, and
answers `(check-sat)` and `(get-value ...)` on stdout itself, flushing each answer (the
parser's own printing goes through C++ buffers that a pipe would hold back).
"""

import sys

import bitwuzla as bw


def split_terms(s):
    """The top-level terms of `s` (the inside of get-value's list)."""
    res, depth, cur, quoted = [], 0, [], False
    for ch in s:
        if ch == "|":
            quoted = not quoted
        elif not quoted:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch.isspace() and depth == 0:
                if cur:
                    res.append("".join(cur))
                    cur = []
                continue
        cur.append(ch)
    if cur:
        res.append("".join(cur))
    return res


class Session:
    """One solver instance, fed command by command."""

    def __init__(self):
        self.tm = bw.TermManager()
        opts = bw.Options()
        opts.set(bw.Option.PRODUCE_MODELS, True)
        self.parser = bw.Parser(self.tm, opts)

    def solver(self):
        try:
            return self.parser.bitwuzla()
        except bw.BitwuzlaException:
            # No set-logic yet: the instance is made on the first declaration or logic.
            self.parser.parse("(set-logic ALL)", False, False)
            return self.parser.bitwuzla()

    def answer(self, text):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def run(self, cmd):
        """Executes one command; False on `(exit)`."""
        head = cmd[1:].lstrip().split(None, 1)[0].rstrip(")")
        if head == "check-sat":
            r = self.solver().check_sat()
            self.answer({bw.Result.SAT: "sat", bw.Result.UNSAT: "unsat"}.get(r, "unknown"))
        elif head == "get-value":
            inner = cmd[cmd.index("(", 1) : cmd.rindex(")")].strip()
            bz = self.solver()
            pairs = [
                "(%s %s)" % (t, bz.get_value(self.parser.parse_term(t)))
                for t in split_terms(inner[1:-1])
            ]
            self.answer("(" + " ".join(pairs) + ")")
        elif head == "exit":
            return False
        elif head == "get-info":
            self.answer('(:name "bitwuzla")')
        elif head != "set-option":
            # produce-models is set above; other options are yosys-smtbmc's defaults.
            self.parser.parse(cmd, False, False)
        return True


def commands(stream):
    """The s-expressions of `stream`, as they complete (comments dropped)."""
    buf, depth, quoted = [], 0, False
    for line in stream:
        for ch in line:
            if ch == "|":
                quoted = not quoted
            elif not quoted:
                if ch == ";":
                    break
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
            if depth > 0 or ch == ")":
                buf.append(ch)
            if depth == 0 and buf:
                yield "".join(buf)
                buf = []


def main(argv):
    if "--version" in argv:
        from importlib.metadata import version

        print("bitwuzla %s (Python package)" % version("bitwuzla"))
        return 0
    session = Session()
    try:
        for cmd in commands(sys.stdin):
            if not session.run(cmd):
                break
    except bw.BitwuzlaException as e:
        session.answer('(error "%s")' % str(e).replace('"', "'").splitlines()[0])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
