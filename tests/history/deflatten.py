"""Rebuild Python source from a module flattened onto one line (seed 002).

The scrape of seed 002 joined every line of ``recurrent.py`` with a space:
indentation, line breaks and comment ends are gone. Three questions must be
answered to get runnable code back, each with a small rule:

1. **Where does a statement end?** Outside brackets, a statement ends where a
   token cannot continue it: a name, string or number right after a name,
   literal or closing bracket (``... = 'simple' backward_cell_net.Proto()``),
   unless the token is an operator keyword (``in``, ``and``, ``if`` … ``else``
   of a conditional expression, ``as``). A ``:`` outside brackets ends a
   compound statement's header (``for x in y:``).
2. **Where does a comment end?** At the earliest word from which the rest
   reads as a *plausible* statement: one that compiles, is not a bare word,
   and uses only names the module binds somewhere (or builtins). English
   rarely satisfies all three (``# Format (a, b)`` compiles but ``Format`` is
   bound nowhere). Inside brackets a comment ends at the first non-word token.
3. **Where does a block end?** ``else``/``elif``/``except``/``finally`` close
   the body above them; a ``return``/``raise``/``break``/``continue`` closes
   its block; a ``def`` body otherwise runs on; any other block keeps a
   statement only if it uses a name the block binds (its loop targets or
   assignments in its body) — ``for input_t, ... in inputs: ... input_t ...``.

Checked by exec-ing the result: seed 002's ``recurrent_net`` and ``LSTM``
come back exactly (their ops equal the ones this project builds). Elsewhere in
that module (``cudnn_LSTM``'s comments inside a dict, ``InitFromLSTMParams``'
loop bodies that share no name with the loop) the rules guess wrong; it is
not a general tool.
"""

import builtins
import keyword
import re

_TOKEN = re.compile(
    r"""
    (?P<string>(?:[rRuUbB]{0,2})(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"))
  | (?P<comment>\#)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<number>\d[\w.]*)
  | (?P<cont>\\)
  | (?P<op>\*\*=?|//=?|>>=?|<<=?|[-+*/%&|^=<>!]=|->|[-+*/%&|^~<>=.,:;@()\[\]{}])
  | (?P<space>\s+)
""",
    re.VERBOSE | re.DOTALL,
)

#: Keywords that continue an expression (never start a statement there).
#: (``for`` only inside brackets: comprehensions.)
_INFIX = {"in", "not", "and", "or", "is", "if", "else", "as", "lambda"}
_CLAUSES = {"else", "elif", "except", "finally"}
_COMPOUND = {
    "if",
    "elif",
    "else",
    "for",
    "while",
    "def",
    "class",
    "with",
    "try",
    "except",
    "finally",
}
_ENDERS = {"return", "raise", "break", "continue"}
#: Blocks that only a return (or a clause) ends.
_RUN_ON = {"def", "class", "with", "try"}
#: Which open block a clause keyword continues.
_OPENERS = {
    "else": {"if", "elif", "for", "while", "try", "except"},
    "elif": {"if", "elif"},
    "except": {"try", "except"},
    "finally": {"try", "except", "else"},
}


class Tok:
    __slots__ = ("kind", "text")

    def __init__(self, kind, text):
        self.kind, self.text = kind, text

    def ends_operand(self):
        return (
            self.kind in ("string", "number")
            or (self.kind == "name" and self.text not in keyword.kwlist)
            or self.text in (")", "]", "}", "None", "True", "False", "pass", "break", "continue")
        )


def tokenize(text):
    """Tokens of ``text``; a comment is one ``#`` token (its words follow as names)."""
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise SyntaxError("cannot tokenise at %r" % text[pos : pos + 40])
        if match.lastgroup == "string" and _is_apostrophe(text, match):
            tokens.append(Tok("word", text[pos]))
            pos += 1
            continue
        pos = match.end()
        if match.lastgroup not in ("space", "cont"):
            tokens.append(Tok(match.lastgroup, match.group()))
    return tokens


def _is_apostrophe(text, match):
    """A quote in a comment ("Add 'em all up"), not the start of a string.

    Code strings of this style are single-line names and messages: a one-quote
    "string" spanning brackets or ``=`` is really an apostrophe followed by code.
    """
    literal = match.group()
    if literal[:3] in ("'''", '"""'):
        return False
    return any(c in literal for c in "()[]=")


def _bound_names(tokens):
    """Every name the code could bind: assignment and loop targets, defs,
    parameters, imports. Read from the tokens outside string literals, with
    patterns English prose rarely matches (``x, y = ``, ``import a as b``)."""
    text = " ".join(t.text for t in tokens if t.kind != "string")
    names = set()
    for targets in re.findall(r"((?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*)\s*(?<![=!<>])=(?!=)", text):
        names |= set(re.findall(r"[A-Za-z_]\w*", targets))
    names |= set(re.findall(r"(?:def|class)\s+([A-Za-z_]\w*)", text))
    item = r"[\w.]+(?:\s+as\s+\w+)?"
    for imported in re.findall(r"import\s+\(?\s*((?:%s\s*,\s*)*%s)" % (item, item), text):
        names |= {name.split()[-1] for name in imported.split(",") if name.strip()}
    for targets in re.findall(r"for\s+([\w\s,()]+?)\s+in\s+[\w.()\[\]' ]{1,80}?[:\])}]", text):
        names |= set(re.findall(r"[A-Za-z_]\w*", targets))
    for params in re.findall(r"def\s+\w+\s*\((.*?)\)\s*:", text):
        names |= set(re.findall(r"([A-Za-z_]\w*)\s*(?:=|,|$)", params))
    return names | set(dir(builtins))


def _join(tokens):
    """One logical line from tokens, spaced the usual way (``f(a, b)``, ``x.y``)."""
    out = ""
    for i, tok in enumerate(tokens):
        unary = tokens[i - 1].text == "-" and (i < 2 or not tokens[i - 2].ends_operand())
        glue = (
            i == 0
            or unary
            or tok.text in (")", "]", "}", ",", ":", ".")
            or tokens[i - 1].text in ("(", "[", "{", ".")
            or (
                tok.text in ("(", "[")
                and tokens[i - 1].ends_operand()
                and tokens[i - 1].kind != "string"
            )
        )
        out += ("" if glue else " ") + tok.text
    return out


class _Splitter:
    """Cuts the token stream into statements and comments (rules 1 and 2)."""

    def __init__(self, tokens, bound):
        self.tokens, self.bound = tokens, bound

    def statement_end(self, i):
        """Index after the statement starting at ``i`` (and whether it is a header)."""
        tokens, depth, pending_if = self.tokens, 0, 0
        header = tokens[i].text in _COMPOUND
        from_import = tokens[i].text == "from"
        j = i
        while j < len(tokens):
            tok = tokens[j]
            if tok.kind == "comment" and depth == 0 and j > i:
                return j, header
            if j > i and depth == 0:
                prev = tokens[j - 1]
                if tok.text == ":" and header and tokens[i].text != "lambda":
                    return j + 1, True
                if tok.text == "if" and self.is_conditional_expression(j):
                    pending_if += 1
                elif tok.text == "if" and prev.ends_operand():
                    return j, header
                if tok.text == "import" and from_import:
                    from_import = False
                elif prev.kind == "string" and j == i + 1 and tok.text in "([":
                    return j, header  # a docstring, then ``(a, b) = ...``
                elif tok.text == "else" and pending_if:
                    pending_if -= 1
                elif (
                    (
                        prev.ends_operand()
                        and tok.kind in ("name", "number")
                        and tok.text not in _INFIX
                    )
                    or (prev.ends_operand() and prev.kind != "string" and tok.kind == "string")
                    or (tok.text in _CLAUSES and not pending_if)
                ):
                    return j, header
            if tok.kind == "comment":
                j = self.comment_end(j, depth)
                continue
            if tok.text in "([{":
                depth += 1
            elif tok.text in ")]}":
                depth -= 1
            j += 1
        return j, header

    def is_conditional_expression(self, j):
        """``a if c else b`` (an ``else`` comes first) or an ``if`` header (a ``:``)?"""
        depth = 0
        for tok in self.tokens[j + 1 :]:
            if tok.text in "([{":
                depth += 1
            elif tok.text in ")]}":
                depth -= 1
            elif depth == 0 and tok.text in (":", "else"):
                return tok.text == "else"
        return False

    def plausible(self, i, lookahead=2):
        """True if a real statement starts at token ``i`` (rule 2), and the
        ``lookahead`` statements after it look real too (or a comment comes)."""
        tok = self.tokens[i]
        if tok.kind == "string":
            return tok.text.lstrip("rRuUbB")[:3] in ("'''", '"""')  # a docstring
        if not (tok.kind == "name" or tok.text in ("(", "[")) or (
            tok.text in keyword.kwlist
            and tok.text
            not in _COMPOUND | _ENDERS | {"assert", "pass", "del", "import", "from", "global"}
        ):
            return False
        end, header = self.statement_end(i)
        body = self.tokens[i:end]
        if len(body) == 1 and body[0].text not in ("return", "break", "continue"):
            return False  # a lone word (or ``pass``) is prose
        if body[0].text in _CLAUSES:
            return True
        source = _join(body) + ("\n pass" if header else "")
        if body[0].text not in ("from", "import"):
            # Inside a function and a loop, so return/break are allowed.
            source = "def _f():\n while 1:\n  " + source.replace("\n", "\n  ")
        try:
            compile(source, "<seed>", "exec")
        except SyntaxError:
            return False
        used = {
            t.text
            for k, t in enumerate(body)
            if t.kind == "name"
            and t.text not in keyword.kwlist
            and not (k and body[k - 1].text == ".")
            and not (
                k + 1 < len(body)
                and body[k + 1].text == "="
                and k
                and body[k - 1].text in ("(", ",")
            )
        }
        if not (body[0].text in ("def", "class", "import", "from", "global") or used <= self.bound):
            return False
        assigns = any(t.text.endswith("=") and t.text not in ("==", "<=", ">=", "!=") for t in body)
        if body[0].text not in keyword.kwlist and not assigns and body[-1].text != ")":
            return False  # "(a remark in brackets)", "inputs or outputs"
        if lookahead and end < len(self.tokens) and self.tokens[end].kind != "comment":
            return self.plausible(end, lookahead - 1)
        return True

    def comment_end(self, j, depth):
        """Index of the first token after the comment starting at ``j``."""
        k = j + 1
        while k < len(self.tokens):
            tok = self.tokens[k]
            if tok.kind == "comment":
                return k
            if depth > 0 and (tok.kind in ("string", "number") or tok.text in ")]}"):
                return k
            if depth == 0 and self.plausible(k):
                return k
            k += 1
        return k

    def pieces(self):
        """``("comment", text)`` and ``("stmt", tokens, is_header)`` in order."""
        i = 0
        while i < len(self.tokens):
            if self.tokens[i].kind == "comment":
                end = self.comment_end(i, 0)
                words = " ".join(t.text for t in self.tokens[i + 1 : end])
                if words:
                    yield ("comment", "# " + words)
                i = end
                continue
            end, header = self.statement_end(i)
            yield ("stmt", self.tokens[i:end], header)
            i = end


def _binds(tokens):
    """Names a statement binds (assignment targets, loop targets, def name)."""
    names, depth = set(), 0
    first = tokens[0].text
    if first in ("def", "class") and len(tokens) > 1:
        return {tokens[1].text}
    if first == "for":
        for tok in tokens[1:]:
            if tok.text == "in":
                break
            if tok.kind == "name":
                names.add(tok.text)
        return names
    for k, tok in enumerate(tokens):
        if tok.text in "([{":
            depth += 1
        elif tok.text in ")]}":
            depth -= 1
        elif tok.text == "=" and depth == 0:
            names |= {t.text for t in tokens[:k] if t.kind == "name"}
    return names


def _uses(tokens):
    return {
        t.text
        for k, t in enumerate(tokens)
        if t.kind == "name" and not (k and tokens[k - 1].text == ".")
    }


def deflatten(text, known_names=()):
    """Python source rebuilt from ``text`` (one line) — see the module docstring.

    ``known_names``: names bound outside ``text`` (a function's module imports).
    """
    tokens = tokenize(text)
    splitter = _Splitter(tokens, _bound_names(tokens) | set(known_names))
    lines = []
    blocks = []  # [kind, names bound, statements so far]
    pending_comments = []
    closed = False  # the innermost block just ended with return/raise...
    for piece in splitter.pieces():
        if piece[0] == "comment":
            pending_comments.append(piece[1])
            continue
        _, stmt, header = piece
        first = stmt[0].text
        if first in _CLAUSES:
            # The clause replaces the body it follows, at its header's level.
            while blocks and blocks[-1][0] not in _OPENERS[first]:
                blocks.pop()
            if blocks:
                blocks.pop()
        elif closed and first in ("def", "class"):
            # Code after a return is dead: a def there starts a new function.
            while blocks and blocks.pop()[0] not in ("def", "class"):
                pass
        else:
            if closed and blocks:
                blocks.pop()
            while (
                blocks
                and blocks[-1][2]
                and blocks[-1][0] not in _RUN_ON
                and not (_uses(stmt) & blocks[-1][1])
            ):
                blocks.pop()
        indent = "    " * len(blocks)
        lines.extend(indent + c for c in pending_comments)
        pending_comments = []
        lines.append(indent + _join(stmt))
        if blocks:
            blocks[-1][2] += 1
            blocks[-1][1] |= _binds(stmt)
        closed = first in _ENDERS
        if header:
            blocks.append([first, _binds(stmt) if first == "for" else set(), 0])
            closed = False
    lines.extend(pending_comments)
    return "\n".join(lines) + "\n"


def function_text(text, name, next_name):
    """The flat text of ``def name(`` up to ``def next_name(`` (the next top-level
    def: which ``def`` is top-level is unknowable from flat text, so the caller
    names it)."""
    start = text.find("def %s(" % name)
    end = text.find("def %s(" % next_name, start + 1)
    if start < 0 or end < 0:
        raise ValueError("no 'def %s(' followed by 'def %s(' in the text" % (name, next_name))
    return text[start:end]
