#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Operator mutants of the series' own C files.

Where scripts/mutants/ removes the lines that wire the series into upstream
files, these mutants change the series' own code, one operator at a time:

  negate-cond  the condition of an if, a while or a ?: is negated
  boundary     < <= > >= becomes <= < >= >
  shift        the right operand of < <= > >= is moved by one the other
               way (a < b becomes a < b - 1, a <= b becomes a <= b + 1,
               a > b becomes a > b + 1, a >= b becomes a >= b - 1: the
               direction that "boundary" does not already give)
  err-return   return -EXXX; becomes return 0;
  delete-call  a statement that only calls an unlock, a put, a free, an undo, a
               release, a register write (the SPM hooks stop / start /
               set_ring / set_vmid / set_rdptr, WREG32*), or one of the
               drain's stores into memory the RLC shares (spm_arm,
               spm_guard_fill) is deleted
  const        an integer constant n becomes n + 1 (1 becomes 0)

Comments (kernel-doc included), strings, character constants and
preprocessor lines are never touched; nor are module_param*(),
MODULE_*(), EXPORT_SYMBOL*(), static_assert() and BUILD_BUG_ON*()
statements, or array sizes in declarations.

A mutant's ID is <file>:<line>:<operator>:<n>, n counting the mutants of
that operator on that line from 1: stable while the file does not change.
Sampling is random.Random(seed).sample() over the sorted list.

Usage:
  mutants-op.py list [--tree T] [--select G] [--sample N] [--seed S]
                     [--equivalent F] [FILE...]
        one line per mutant: ID <TAB> the line <TAB> the line as it becomes
        <TAB> "listed" if F lists it as equivalent (for that line); the
        mutants whose ID matches G (default all; G1,G2 matches either),
        N of them if N is given
  mutants-op.py write --tree T --out PATH ID [FILE]
        write the mutated file to PATH
  mutants-op.py write-all --tree T --out DIR FILE
        write every mutant of FILE to DIR/<ID with ":" as "_">.c
  mutants-op.py patch --tree T ID [FILE]
        a git diff of the mutant against the tree, on stdout
  mutants-op.py suites ID
        the KUnit filter globs that must catch a mutant of its file
  mutants-op.py boot-glob --tests DIR [--very-slow-filtered] ID
        one kunit.py filter glob that runs, in one boot, every suite of
        DIR (the tests' sources) that those globs match and the leak
        check amdgpu_kunit_kmemleak (linked last, so it runs last): the
        kernel takes a single glob, so it is the common prefix of their
        names and a character class for each of the next characters,
        until it matches no other suite (or their names end); the
        suites it matches beyond those go to stderr (they run too)
  mutants-op.py schema --tree T --out DIR [--exclude X] IDS
        write to DIR (as paths under the tree) the series' files with
        every mutant IDS lists (one per line, first field; its number K
        is its line) behind "(amdgpu_mutant == K)", and amdgpu_drv.c
        with that variable as the module parameter "mutant"; no line
        number moves. Prints K <TAB> ID <TAB> "in" <TAB> file <TAB>
        first line <TAB> last line, or K <TAB> ID <TAB> "out" <TAB> why
        (its span crosses another's; X lists it: it did not compile)
  mutants-op.py schema-check --tree T
        every mutant of the files in one schema per file (those whose
        spans do not cross): resolved as the kernel runs it, each file
        must be the original token for token with no mutant chosen, and
        the mutant's file with its number; PASS / FAIL line
  mutants-op.py report [--equivalent F] [--goal P] [--glob G]
                       [--sample UNIVERSE] RESULTS
        the kill score per file of a run, from RESULTS (lines of ID <TAB>
        verdict <TAB> original line <TAB> mutated line <TAB> detail, the
        verdict one of killed, timeout, stillborn, survived, listed), with
        PASS / FAIL lines: FAIL on a survivor that F does not list, on a
        score under P percent of the mutants neither stillborn nor
        equivalent, and on an entry of F (whose ID matches G) that names a
        mutant of a file in RESULTS that is killed, not generated, or does
        not mutate the line it names.
        With --sample (a sampled run; UNIVERSE is "list" output for every
        mutant of the files sampled from), the score per file is printed
        without a verdict, and one PASS / FAIL line judges the score of
        the whole sample against P, listing its survivors: a file with two
        mutants in the sample does not fail the run on one survivor. The
        entries of F are checked against UNIVERSE (they name a mutant, of
        that line) and, for those in the sample, against the run (killed)
FILEs are paths relative to the tree (default: the files below).

The list of equivalent mutants (scripts/mutants-equivalent) has a line
per mutant: ID | the line it mutates, as mutants-op.py list prints it |
why no test can tell it from the original.
"""

import argparse
import difflib
import fnmatch
import os
import random
import re
import sys

AMDGPU = 'drivers/gpu/drm/amd/amdgpu/'
# The series' own kernel files, and the KUnit suites that exercise each
# (kunit.py filter globs, most specific first; scripts/mutate.sh runs
# them in turn and stops at the first that fails).
FILES = {
    AMDGPU + 'amdgpu_spm_drain.c': ['amdgpu_spm', 'amdgpu_spm_wiring'],
    AMDGPU + 'amdgpu_spm.c': ['amdgpu_spm', 'amdgpu_spm_wiring',
                              'amdgpu_spm_gfx_v9_*', 'amdgpu_spm_vmid',
                              'amdgpu_profiler_ioctl'],
    AMDGPU + 'amdgpu_spm_vmid.c': ['amdgpu_spm_vmid', 'amdgpu_spm_gfx_v9_*',
                                   'amdgpu_spm'],
    AMDGPU + 'amdgpu_spm_buf.c': ['amdgpu_spm', 'amdgpu_spm_wiring',
                                  'amdgpu_profiler_ioctl'],
    AMDGPU + 'amdgpu_profiler.c': ['amdgpu_profiler_ioctl', 'amdgpu_spm_wiring'],
    AMDGPU + 'amdgpu_peer_reg.c': ['amdgpu_peer_reg', 'amdgpu_peer_rdma*',
                                   'amdgpu_rdma_clients'],
    AMDGPU + 'amdgpu_rdma.c': ['amdgpu_peer_rdma*', 'amdgpu_peer_vm',
                               'amdgpu_rdma_clients', 'amdgpu_peer_reg'],
}
SEED = 20261202

PUNCT = sorted('''>>= <<= ... -> ++ -- << >> <= >= == != && || += -= *= /= %=
               &= |= ^= ## # ( ) [ ] { } ; , . ? : ~ ! + - * / % & | ^ = < >
               '''.split(), key=len, reverse=True)
ASSIGN = {'=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>='}
REL = {'<': ('<=', -1), '<=': ('<', +1), '>': ('>=', +1), '>=': ('>', -1)}
# Tokens that end the right operand of a relational operator (those that
# bind less tightly, and the ends of an expression)
OPERAND_END = {';', ',', '?', ':', '&&', '||', '==', '!=', '&', '|', '^',
               '<', '>', '<=', '>='} | ASSIGN
# Tokens before which a ?: condition starts
COND_START = {'(', '[', ',', ';', '{', '}', '?', ':', 'return'} | ASSIGN
DELETE = re.compile(r'unlock|unhold|^put_|_put$|_put_|^[a-z]*put$|free|unpin|'
                    r'unref|unreserve|unuse|release|destroy|fini|drop|unwatch|undo|'
                    r'_exit$|^up_(read|write)$|WREG32|wreg|writel|'
                    r'^(stop|start|set_ring|set_vmid|set_rdptr)$|'
                    r'^spm_(arm|guard_fill)$|'
                    r'flush_gpu_tlb|flush_hdp|^set_context$|'
                    r'^amdgpu_spm_pt_(clear|map)$|^amdgpu_spm_vmid_(use|park)$')
# Names DELETE matches that release nothing: a store, a debug hook
NOT_DELETE = re.compile(r'^smp_|^mutex_destroy$')
SKIP_STMT = re.compile(r'^(module_param\w*|MODULE_\w+|EXPORT_SYMBOL\w*|'
                       r'static_assert|BUILD_BUG_ON\w*)$')
NUMBER = re.compile(r'(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)$')


class Tok:
    __slots__ = ('kind', 'text', 'start', 'end', 'line')

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = \
            kind, text, start, end, line

    def __repr__(self):
        return f'{self.kind}:{self.text}@{self.line}'


def tokenize(src):
    """C tokens of src, without comments and preprocessor lines."""
    toks = []
    i, n, line = 0, len(src), 1
    bol = True          # only whitespace since the start of the line
    while i < n:
        c = src[i]
        if c == '\n':
            line += 1
            bol = True
            i += 1
            continue
        if c in ' \t\r\f\v':
            i += 1
            continue
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            line += src.count('\n', i, j)
            i = j
            continue
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
            continue
        if c == '#' and bol:
            # A preprocessor line, with its continuations
            while i < n:
                j = src.find('\n', i)
                if j < 0:
                    i = n
                    break
                k = j - 1
                while k > i and src[k] in ' \t\r':
                    k -= 1
                # a comment that starts on the line may span lines
                seg = src[i:j]
                if '/*' in seg and '*/' not in seg[seg.rfind('/*'):]:
                    e = src.find('*/', j)
                    e = n if e < 0 else e + 2
                    line += src.count('\n', j, e)
                    i = e
                    continue
                if src[k] == '\\':
                    line += 1
                    i = j + 1
                    continue
                i = j
                break
            continue
        bol = False
        if c in '"\'':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            j += 1
            toks.append(Tok('str', src[i:j], i, j, line))
            i = j
            continue
        if c.isalpha() or c == '_':
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] == '_'):
                j += 1
            toks.append(Tok('ident', src[i:j], i, j, line))
            i = j
            continue
        if c.isdigit() or (c == '.' and i + 1 < n and src[i + 1].isdigit()):
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] in '._' or
                             (src[j] in '+-' and src[j - 1] in 'eEpP' and
                              not src[i:j].lower().startswith('0x'))):
                j += 1
            toks.append(Tok('num', src[i:j], i, j, line))
            i = j
            continue
        for p in PUNCT:
            if src.startswith(p, i):
                toks.append(Tok('punct', p, i, i + len(p), line))
                i += len(p)
                break
        else:
            toks.append(Tok('punct', c, i, i + 1, line))
            i += 1
    return toks


def match_forward(toks, i):
    """Index of the bracket closing toks[i], or None."""
    pairs = {'(': ')', '[': ']', '{': '}'}
    stack = [pairs[toks[i].text]]
    for j in range(i + 1, len(toks)):
        t = toks[j].text
        if toks[j].kind != 'punct':
            continue
        if t in pairs:
            stack.append(pairs[t])
        elif t in ')]}':
            if t != stack.pop():
                return None
            if not stack:
                return j
    return None


def matching(toks):
    """For each bracket its partner (both ways)."""
    mate = {}
    stack = []
    for i, t in enumerate(toks):
        if t.kind != 'punct':
            continue
        if t.text in '([{':
            stack.append(i)
        elif t.text in ')]}':
            if stack:
                j = stack.pop()
                mate[i] = j
                mate[j] = i
    return mate


def stmt_head(toks, mate, i):
    """The first token of the statement or expression toks[i] is in:
    scanning back to a ; { } at bracket depth 0."""
    j = i - 1
    while j >= 0:
        t = toks[j]
        if t.kind == 'punct':
            if t.text in ')]' and j in mate:
                j = mate[j] - 1
                continue
            if t.text in ';{}' or (t.text in '([' and True):
                return j + 1
        j -= 1
    return 0


def skipped_stmt(toks, mate, i):
    """Whether toks[i] is inside a statement that is never mutated."""
    h = stmt_head(toks, mate, i)
    # Walk out of enclosing parentheses to the statement's first token
    j = i
    while True:
        h = stmt_head(toks, mate, j)
        if h > 0 and toks[h - 1].text in '([' and h - 1 in mate:
            j = h - 1
            continue
        break
    return toks[h].kind == 'ident' and SKIP_STMT.match(toks[h].text) is not None


def declared_size(toks, mate, i):
    """Whether the number toks[i] is an array size in a declaration."""
    if i == 0 or i + 1 >= len(toks):
        return False
    if toks[i - 1].text != '[' or toks[i + 1].text != ']':
        return False
    if i < 3 or toks[i - 2].kind != 'ident':
        return False
    before = toks[i - 3]
    return before.kind == 'ident' or before.text == '*' or \
        (before.text == ']' and True)


def bump(numtext):
    """The constant n + 1 (1 -> 0), in the same base and with its suffix."""
    m = NUMBER.match(numtext)
    if not m:
        return None
    digits, suffix = m.groups()
    if digits.lower().startswith('0x'):
        v = int(digits, 16)
        nv = 0 if v == 1 else v + 1
        body = digits[2:]
        s = format(nv, 'X' if body.isupper() and not body.isdigit() else 'x')
        return digits[:2] + s.rjust(len(body), '0') + suffix
    if len(digits) > 1 and digits.startswith('0'):
        v = int(digits, 8)
        nv = 0 if v == 1 else v + 1
        return '0' + format(nv, 'o') + suffix
    v = int(digits)
    return str(0 if v == 1 else v + 1) + suffix


def left_operand_stop(toks, mate, i, stops):
    """The index of the token before the operand that ends just before
    toks[i] (-1 at the start): scanning back over bracketed groups to a
    punctuator in stops or a return."""
    j = i - 1
    while j >= 0:
        u = toks[j]
        if u.kind == 'punct' and u.text in ')]' and j in mate:
            j = mate[j] - 1
            continue
        if (u.kind == 'punct' and u.text in stops) or \
                (u.kind == 'ident' and u.text == 'return'):
            break
        j -= 1
    return j


def right_operand_end(toks, mate, i):
    """The index just past the right operand of the operator toks[i]."""
    j = i + 1
    while j < len(toks):
        u = toks[j]
        if u.kind == 'punct':
            if u.text in '([' and j in mate:
                j = mate[j] + 1
                continue
            if u.text in ')]}' or u.text in OPERAND_END:
                break
        j += 1
    return j


def mutants_of(path, src):
    """(line, op, start, end, replacement) for every mutant of src."""
    toks = tokenize(src)
    mate = matching(toks)
    out = []

    def text(a, b):
        return src[toks[a].start:toks[b].end]

    def add(line, op, s, e, rep):
        out.append((line, op, s, e, rep))

    for i, t in enumerate(toks):
        if skipped_stmt(toks, mate, i) and t.kind != 'str':
            continue
        # negate-cond: if / while
        if t.kind == 'ident' and t.text in ('if', 'while') and \
                i + 1 < len(toks) and toks[i + 1].text == '(' and i + 1 in mate:
            o, c = i + 1, mate[i + 1]
            if c > o + 1:
                add(t.line, 'negate-cond', toks[o + 1].start, toks[c - 1].end,
                    '!(' + text(o + 1, c - 1) + ')')
        # negate-cond: ?:
        if t.text == '?' and t.kind == 'punct':
            j = left_operand_stop(toks, mate, i, COND_START)
            if j + 1 < i:
                add(toks[j + 1].line, 'negate-cond', toks[j + 1].start,
                    toks[i - 1].end, '!(' + text(j + 1, i - 1) + ')')
        # boundary and shift
        if t.kind == 'punct' and t.text in REL:
            swap, delta = REL[t.text]
            add(t.line, 'boundary', t.start, t.end, swap)
            j = right_operand_end(toks, mate, i)
            if j > i + 1:
                opnd = text(i + 1, j - 1)
                if j - 1 > i + 1:
                    opnd = '(' + opnd + ')'
                add(t.line, 'shift', toks[i + 1].start, toks[j - 1].end,
                    opnd + (' + 1' if delta > 0 else ' - 1'))
        # err-return
        if t.kind == 'ident' and t.text == 'return' and i + 3 < len(toks) and \
                toks[i + 1].text == '-' and re.match(r'^E[A-Z0-9]+$', toks[i + 2].text) \
                and toks[i + 3].text == ';':
            add(t.line, 'err-return', toks[i + 1].start, toks[i + 2].end, '0')
        # delete-call: NAME(...); or a->b.NAME(...); as a statement
        if t.kind == 'ident' and DELETE.search(t.text) and \
                not NOT_DELETE.search(t.text) and i + 1 < len(toks) \
                and toks[i + 1].text == '(' and i + 1 in mate:
            c = mate[i + 1]
            h = i
            while h >= 2 and toks[h - 1].text in ('->', '.') and toks[h - 2].kind == 'ident':
                h -= 2
            prev = toks[h - 1] if h > 0 else None
            ok_prev = prev is None or prev.text in (';', '{', '}', 'else') or \
                (prev.text == ':' and h >= 2 and toks[h - 2].kind == 'ident') or \
                (prev.text == ')' and h - 1 in mate and mate[h - 1] > 0 and
                 toks[mate[h - 1] - 1].text in ('if', 'while', 'for'))
            if ok_prev and c + 1 < len(toks) and toks[c + 1].text == ';':
                add(toks[h].line, 'delete-call', toks[h].start, toks[c].end, '(void)0')
        # const
        if t.kind == 'num' and not declared_size(toks, mate, i):
            nb = bump(t.text)
            if nb is not None:
                add(t.line, 'const', t.start, t.end, nb)
    # IDs: file:line:op:n
    base = os.path.basename(path)
    out.sort(key=lambda m: (m[0], m[2], m[1]))
    seen = {}
    res = []
    for line, op, s, e, rep in out:
        k = (line, op)
        seen[k] = seen.get(k, 0) + 1
        res.append((f'{base}:{line}:{op}:{seen[k]}', line, s, e, rep))
    return res


def apply_mutant(src, m):
    _, _, s, e, rep = m
    return src[:s] + rep + src[e:]


def mutated_line(src, m):
    """The mutant's first changed line as it becomes, blanks squeezed."""
    _, line, s, e, rep = m
    new = apply_mutant(src, m)
    return ' '.join(new.splitlines()[line - 1].split())


def original_line(src, m):
    """The line the mutant changes (its first), blanks squeezed."""
    return ' '.join(src.splitlines()[m[1] - 1].split())


def load(tree, files):
    res = {}
    for f in files:
        p = os.path.join(tree, f)
        with open(p) as fh:
            src = fh.read()
        res[f] = (src, mutants_of(f, src))
    return res


def all_ids(tree, files):
    out = []
    for f, (src, ms) in load(tree, files).items():
        for m in ms:
            out.append((f, src, m))
    return out


def find(tree, ident, files):
    base = ident.split(':', 1)[0]
    cand = [f for f in files if os.path.basename(f) == base]
    if not cand:
        sys.exit(f'mutants-op.py: {ident}: no file {base} among {" ".join(files)}')
    f = cand[0]
    with open(os.path.join(tree, f)) as fh:
        src = fh.read()
    for m in mutants_of(f, src):
        if m[0] == ident:
            return f, src, m
    sys.exit(f'mutants-op.py: no mutant {ident} in {f}')


def read_equivalent(path):
    """{ID: (line, why)} of the list of equivalent mutants."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path) as fh:
        for n, l in enumerate(fh, 1):
            l = l.rstrip('\n')
            if not l.strip() or l.lstrip().startswith('#'):
                continue
            try:
                ident, rest = l.split(' | ', 1)
                line, why = rest.rsplit(' | ', 1)
            except ValueError:
                sys.exit(f'{path}:{n}: not "ID | line | why"')
            out[ident.strip()] = (' '.join(line.split()), why.strip())
    return out


def report(results, equiv_path, goal, glob='*', universe=None):
    """Print the kill score per file (and, for a sample, of the whole
    sample); return whether the run passes."""
    equiv = read_equivalent(equiv_path)
    whole = {'n': 0, 'killed': 0, 'tmo': 0, 'still': 0, 'eq': 0, 'surv': []}
    per = {}
    order = []
    with open(results) as fh:
        for l in fh:
            f = l.rstrip('\n').split('\t')
            if len(f) < 4:
                continue
            ident, verdict, orig, mutated = f[:4]
            detail = f[4] if len(f) > 4 else ''
            base = ident.split(':', 1)[0]
            if base not in per:
                per[base] = []
                order.append(base)
            per[base].append((ident, verdict, ' '.join(orig.split()),
                              ' '.join(mutated.split()), detail))
    ok = True
    seen = {}
    for base in order:
        n = len(per[base])
        killed = sum(v in ('killed', 'timeout') for _, v, _, _, _ in per[base])
        tmo = sum(v == 'timeout' for _, v, _, _, _ in per[base])
        still = sum(v == 'stillborn' for _, v, _, _, _ in per[base])
        eq, surv = [], []
        for ident, v, orig, mutated, detail in per[base]:
            seen[ident] = (v, orig)
            if v not in ('survived', 'listed'):
                continue
            if ident in equiv and equiv[ident][0] == orig:
                eq.append((ident, mutated, equiv[ident][1]))
            else:
                surv.append((ident, orig, mutated))
        notrun = sum(v == 'listed' for _, v, _, _, _ in per[base])
        print(f'mutants {base}: {n} generated, {killed} killed ({tmo} by timeout or deadline), '
              f'{still} stillborn, {len(eq)} equivalent (listed'
              f'{f", {notrun} of them not run" if notrun else ""}), {len(surv)} survived')
        for ident, mutated, why in eq:
            print(f'  equivalent {ident}: {mutated}  -- {why}')
        for ident, orig, mutated in surv:
            print(f'  SURVIVED {ident}: {orig}  =>  {mutated}')
        live = n - still - len(eq)
        pct = killed * 100 // live if live else 100
        whole['n'] += n
        whole['killed'] += killed
        whole['tmo'] += tmo
        whole['still'] += still
        whole['eq'] += len(eq)
        whole['surv'] += surv
        if universe is not None:
            print(f'  score of {base} in this sample: {killed} of {live} killed ({pct}%)')
        elif surv or pct < goal:
            ok = False
            print(f'FAIL mutants of {base}: {killed} of {live} killed ({pct}%, goal {goal}%), '
                  f'{len(surv)} survivor(s) neither killed nor listed in scripts/mutants-equivalent')
        else:
            print(f'PASS mutants of {base}: {killed} of {live} killed ({pct}%, goal {goal}%), '
                  'every survivor listed as equivalent')
    if universe is not None:
        live = whole['n'] - whole['still'] - whole['eq']
        pct = whole['killed'] * 100 // live if live else 100
        print(f'mutants in the sample: {whole["n"]} generated, {whole["killed"]} killed '
              f'({whole["tmo"]} by timeout or deadline), {whole["still"]} stillborn, '
              f'{whole["eq"]} equivalent (listed), {len(whole["surv"])} survived')
        for ident, orig, mutated in whole['surv']:
            print(f'  survivor {ident}: {orig}  =>  {mutated}')
        if not live or pct < goal:
            ok = False
            print(f'FAIL mutants of the sample: {whole["killed"]} of {live} killed ({pct}%, '
                  f'goal {goal}%); survivors above')
        else:
            print(f'PASS mutants of the sample: {whole["killed"]} of {live} killed ({pct}%, '
                  f'goal {goal}%); {len(whole["surv"])} survivor(s) above, neither '
                  'killed nor listed as equivalent')
    stale = []
    for ident, (line, why) in sorted(equiv.items()):
        base = ident.split(':', 1)[0]
        if universe is not None:
            # A sample: every entry of the files sampled from names a
            # mutant of its line; those in the sample are not killed
            if base not in universe['files']:
                continue
            if ident not in universe['ids']:
                stale.append(f'{ident} names no mutant (the file changed?)')
            elif universe['ids'][ident] != line:
                stale.append(f'{ident} no longer mutates "{line}" but '
                             f'"{universe["ids"][ident]}"')
            elif ident in seen and seen[ident][0] in ('killed', 'timeout'):
                stale.append(f'{ident} is killed: it is not equivalent')
            continue
        if base not in per or not fnmatch.fnmatchcase(ident, glob):
            continue
        if ident not in seen:
            stale.append(f'{ident} names no mutant of this run (the file changed?)')
        elif seen[ident][1] != line:
            stale.append(f'{ident} no longer mutates "{line}" but "{seen[ident][1]}"')
        elif seen[ident][0] in ('killed', 'timeout'):
            stale.append(f'{ident} is killed: it is not equivalent')
    for s in stale:
        print(f'mutants-equivalent: {s}')
    if stale:
        ok = False
        print(f'FAIL scripts/mutants-equivalent: {len(stale)} stale entries for the files of this run')
    elif per:
        print('PASS scripts/mutants-equivalent: its entries for the files of this run hold')
    return ok


LEAK_SUITE = 'amdgpu_kunit_kmemleak'


def registered_suites(test_dir, very_slow_filtered):
    """The suites test_dir registers, as scripts/kunit-result.py reads them."""
    import importlib.util
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location(
        'kunit_result', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     'kunit-result.py'))
    kr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kr)
    problems = []
    names = kr.registered_suites(test_dir, problems, very_slow_filtered)
    if problems:
        sys.exit('mutants-op.py: ' + '; '.join(problems))
    return names


def boot_glob(globs, test_dir, very_slow_filtered):
    """One glob for the suites globs match and the leak check; see boot-glob."""
    if not test_dir:
        sys.exit('mutants-op.py: boot-glob needs --tests DIR')
    reg = registered_suites(test_dir, very_slow_filtered)
    want = {r for r in reg if any(fnmatch.fnmatchcase(r, g) for g in globs)}
    for g in globs:
        if not any(fnmatch.fnmatchcase(r, g) for r in reg):
            sys.exit(f'mutants-op.py: {g} matches no registered suite')
    if LEAK_SUITE not in reg:
        sys.exit(f'mutants-op.py: no suite {LEAK_SUITE} in {test_dir}')
    want.add(LEAK_SUITE)
    prefix = os.path.commonprefix(sorted(want))
    glob = prefix + '*'
    k = len(prefix)
    while k < min(len(w) for w in want):
        if {r for r in reg if fnmatch.fnmatchcase(r, glob)} == want:
            break
        classes = glob[:-1] + '[' + ''.join(sorted({w[k] for w in want})) + ']'
        glob = classes + '*'
        k += 1
    extra = sorted(r for r in reg if fnmatch.fnmatchcase(r, glob) and r not in want)
    if extra:
        print(f'mutants-op.py: {glob} also runs {" ".join(extra)}', file=sys.stderr)
    missing = sorted(w for w in want if not fnmatch.fnmatchcase(w, glob))
    if missing:
        sys.exit(f'mutants-op.py: {glob} misses {" ".join(missing)}')
    return glob


# Mutation schemata: every mutant of a run compiled into one kernel, each
# behind a test of a number the kernel reads from its command line
# (amdgpu.mutant=K), so that a sampled run builds once and boots once per
# mutant. A mutant whose code cannot take a run-time choice (a constant
# expression: a case label, a static initializer, a FIELD_PREP() mask) or
# whose span crosses another's is left out, and scripts/mutate.sh builds
# it on its own as before.
SCHEMA_PRELUDE = 'extern int amdgpu_mutant; '
# Appended to amdgpu_drv.c: the number, as the module parameter "mutant"
SCHEMA_PARAM = ('\nint amdgpu_mutant;\n'
                'module_param_named(mutant, amdgpu_mutant, int, 0444);\n')
SCHEMA_PARAM_FILE = AMDGPU + 'amdgpu_drv.c'
# Tokens before which the left operand of a relational operator starts
LEFT_START = {'(', '[', ',', ';', '{', '}', '?', ':', '&&', '||', '==', '!=',
              '&', '|', '^', '<', '>', '<=', '>='} | ASSIGN


def schema_span(toks, mate, m):
    """(S, E, s, e, f): the span [S, E) of source a mutant's run-time choice
    replaces, the span [s, e) inside it that the mutant changes, and f, which
    makes the change from the text of [s, e)."""
    ident, line, s, e, rep = m
    op = ident.split(':')[2]
    if op == 'negate-cond':
        return s, e, s, e, lambda t: '!(' + t + ')'
    if op == 'shift':
        # as mutants_of() writes it: a single token is not parenthesized
        delta = ' + 1' if rep.endswith(' + 1') else ' - 1'
        one = sum(1 for t in toks if s <= t.start and t.end <= e) == 1
        return s, e, s, e, lambda t: (t if one else '(' + t + ')') + delta
    if op == 'delete-call':
        return s, e, s, e, None
    if op in ('err-return', 'const'):
        return s, e, s, e, lambda t: rep
    if op == 'boundary':
        i = next(k for k, t in enumerate(toks) if t.start == s)
        j = left_operand_stop(toks, mate, i, LEFT_START)
        k = right_operand_end(toks, mate, i)
        if j + 1 >= i or k <= i + 1:
            return None
        return toks[j + 1].start, toks[k - 1].end, s, e, lambda t: rep
    return None


def schemata(src, chosen, number):
    """src with every mutant of chosen (mutants_of() tuples) behind
    AMDGPU_MUT(number[ID]); returns (text, {ID: reason left out})."""
    toks = tokenize(src)
    mate = matching(toks)
    out = {}
    spans = []
    for m in chosen:
        sp = schema_span(toks, mate, m)
        if sp is None:
            out[m[0]] = 'no operands found'
            continue
        if re.search(r'\n[ \t]*#', src[sp[0]:sp[1]]):
            out[m[0]] = 'a preprocessor line inside'
            continue
        nxt = [t.text for t in toks if t.start >= sp[1]][:2]
        if m[0].split(':')[2] == 'negate-cond' and nxt == ['?', ':']:
            # "a ?: b" is a, not 1, when a is true: no !! around it
            out[m[0]] = 'the condition of a ?: without a middle operand'
            continue
        spans.append((m, sp))
    # Parents before children: by start, then the longer first
    spans.sort(key=lambda x: (x[1][0], -x[1][1]))
    kept = []
    for m, sp in spans:
        S, E, s, e, _ = sp
        bad = False
        for _, q in kept:
            inside = q[0] <= S and E <= q[1]
            apart = E <= q[0] or q[1] <= S
            if inside:
                # inside the parent's changed span, or wholly outside it
                if not (q[2] <= S and E <= q[3]) and not (E <= q[2] or q[3] <= S):
                    bad = True
            elif not apart:
                bad = True
        if bad:
            out[m[0]] = "its span crosses another mutant's"
            continue
        kept.append((m, sp))

    def flat(a, b):
        return ' '.join(t.text for t in toks if a <= t.start and t.end <= b)

    def render(a, b, items, one):
        res, pos, k = [], a, 0
        while k < len(items):
            m, (S, E, s, e, f) = items[k]
            kids = []
            k += 1
            while k < len(items) and items[k][1][1] <= E:
                kids.append(items[k])
                k += 1
            res.append(flat(pos, S) if one else src[pos:S])
            orig = render(S, E, kids, one)
            sel = f'(amdgpu_mutant == {number[m[0]]})'
            if f is None:
                res.append(f'do {{ if (!{sel}) {orig}; }} while (0)')
            else:
                pre = [x for x in kids if x[1][1] <= s]
                mid = [x for x in kids if s <= x[1][0] and x[1][1] <= e]
                post = [x for x in kids if x[1][0] >= e]
                mut = (render(S, s, pre, True) + ' ' + f(render(s, e, mid, True)) +
                       ' ' + render(e, E, post, True))
                if m[0].split(':')[2] == 'negate-cond':
                    # a condition: both sides as 0 or 1, whatever its type
                    res.append(f'({sel} ? !!({mut}) : !!({orig}))')
                else:
                    res.append(f'({sel} ? ({mut}) : ({orig}))')
            pos = E
        res.append(flat(pos, b) if one else src[pos:b])
        return ''.join(res) if not one else ' '.join(x for x in res if x)

    # the declaration on the first line, so that no line number moves
    return SCHEMA_PRELUDE + render(0, len(src), kept, False), out, kept


# C's binary operators by precedence (higher binds tighter): wrapping a
# span in parentheses keeps its meaning only if it is a whole operand
BINARY = {'*': 13, '/': 13, '%': 13, '+': 12, '-': 12, '<<': 11, '>>': 11,
          '<': 10, '<=': 10, '>': 10, '>=': 10, '==': 9, '!=': 9, '&': 8,
          '^': 7, '|': 6, '&&': 5, '||': 4, '?': 3, ':': 3, ',': 1}
BINARY.update({a: 2 for a in ASSIGN})
PRIMARY = 14


def operand_end(t):
    return t.kind in ('ident', 'num', 'str') or t.text in (')', ']', '++', '--')


def loosest(toks, mate, a, b):
    """The precedence of the loosest binary operator at depth 0 in
    toks[a:b] (PRIMARY if there is none)."""
    low = PRIMARY
    i = a
    while i < b:
        t = toks[i]
        if t.text in '([' and t.kind == 'punct' and i in mate:
            i = mate[i] + 1
            continue
        if t.kind == 'punct' and t.text in BINARY and i > a and operand_end(toks[i - 1]):
            low = min(low, BINARY[t.text])
        i += 1
    return low


def whole_operand(toks, mate, a, b, lo, hi):
    """Whether toks[a:b], a choice's branch, means in toks[lo - 1] ...
    toks[hi] (the tokens around the choice) what it means in parentheses."""
    low = loosest(toks, mate, a, b)
    before = toks[lo - 1] if lo > 0 else None
    after = toks[hi] if hi < len(toks) else None
    if before is not None and before.kind == 'punct':
        if before.text in BINARY and lo > 1 and operand_end(toks[lo - 2]) and \
                before.text not in ('?', ','):
            if BINARY[before.text] >= low:
                return False
        elif before.text in ('-', '+', '!', '~', '*', '&', ')', '++', '--') and low < PRIMARY:
            return False
    if after is not None and after.kind == 'punct':
        if after.text in BINARY and after.text not in (':', ','):
            if BINARY[after.text] > low:
                return False
        elif after.text in ('[', '(', '.', '->', '++', '--') and low < PRIMARY:
            return False
    return True


def resolve(toks, k, a=0, b=None, mate=None):
    """The token texts of schema tokens toks[a:b] as the kernel runs them
    with amdgpu_mutant == k: each choice replaced by the branch it takes."""
    if b is None:
        b = len(toks)
        mate = matching(toks)
    out = []
    i = a
    txt = [t.text for t in toks]
    while i < b:
        if txt[i:i + 7][:3] == ['(', '(', 'amdgpu_mutant'] and txt[i + 3] == '==' and \
                txt[i + 5:i + 7] == [')', '?']:
            n = int(txt[i + 4])
            j = i + 7
            bang = txt[j:j + 2] == ['!', '!']
            j += 2 if bang else 0
            m_end = mate[j]
            j2 = m_end + 2 + (2 if bang else 0)
            o_end = mate[j2]
            if txt[m_end + 1] != ':' or mate[i] != o_end + 1:
                raise ValueError(f'not a schema choice at line {toks[i].line}')
            # !!x is x only where the value is taken as true or false: the
            # condition of an if, a while, or a ?: with a middle operand
            after = txt[mate[i] + 1:mate[i] + 3]
            if bang and not (after[:1] == ['?'] and after[1:] != [':']) and \
                    not (after[:1] == [')'] and mate[i] + 1 in mate and
                         txt[mate[mate[i] + 1] - 1] in ('if', 'while')):
                raise ValueError(f'!! around a value that is not a condition at line '
                                 f'{toks[i].line}')
            if not bang and not (whole_operand(toks, mate, j + 1, m_end, i, mate[i] + 1) and
                                 whole_operand(toks, mate, j2 + 1, o_end, i, mate[i] + 1)):
                raise ValueError(f'a choice that is not a whole operand at line {toks[i].line}')
            if n == k:
                out += resolve(toks, k, j + 1, m_end, mate)
            else:
                out += resolve(toks, k, j2 + 1, o_end, mate)
            i = mate[i] + 1
            continue
        if txt[i:i + 7] == ['do', '{', 'if', '(', '!', '(', 'amdgpu_mutant']:
            n = int(txt[i + 8])
            close = mate[i + 1]
            # do { if (!(amdgpu_mutant == n)) CALL; } while (0)
            if txt[close - 1] != ';' or txt[close + 1:close + 5] != ['while', '(', '0', ')']:
                raise ValueError(f'not a schema deletion at line {toks[i].line}')
            if n == k:
                out += ['(', 'void', ')', '0']
            else:
                out += resolve(toks, k, i + 11, close - 1, mate)
            i = close + 5
            continue
        out.append(txt[i])
        i += 1
    return out


def schema_check(tree):
    """Every mutant of every file in one schema per file (as many as do not
    cross): with amdgpu_mutant == 0 each file must read as the original,
    token for token, and with each mutant's number as that mutant."""
    bad = checked = left = 0
    for f, (src, ms) in load(tree, list(FILES)).items():
        number = {m[0]: k for k, m in enumerate(ms, 1)}
        text, out, kept = schemata(src, ms, number)
        left += len(out)
        toks = tokenize(text)
        if [t.text for t in toks[:4]] != ['extern', 'int', 'amdgpu_mutant', ';']:
            print(f'schema-check: {f}: no declaration on the first line')
            bad += 1
            continue
        toks = toks[4:]
        if len(text.splitlines()) != len(src.splitlines()):
            print(f'schema-check: {f}: the schema moves line numbers')
            bad += 1
        want = [t.text for t in tokenize(src)]
        try:
            resolve(toks, 0)
        except ValueError as e:
            print(f'schema-check: {f}: {e}')
            bad += 1
            continue
        if resolve(toks, 0) != want:
            print(f'schema-check: {f}: with no mutant chosen it is not the original')
            bad += 1
        for m, _ in kept:
            checked += 1
            want = [t.text for t in tokenize(apply_mutant(src, m))]
            try:
                got = resolve(toks, number[m[0]])
            except ValueError as e:
                print(f'schema-check: {m[0]}: chosen: {e}')
                bad += 1
                continue
            if got != want:
                k = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y),
                         min(len(got), len(want)))
                print(f'schema-check: {m[0]}: chosen, the schema differs from the mutant at '
                      f'"{" ".join(got[max(0, k - 5):k + 5])}" (mutant: '
                      f'"{" ".join(want[max(0, k - 5):k + 5])}")')
                bad += 1
    print(f'{"FAIL" if bad else "PASS"} mutation schemata: {checked} mutants of '
          f'{len(FILES)} files, compiled in one schema per file, each read as its '
          f'mutant when chosen and the file as it is when none is ({left} left '
          f'out: spans that cross, or a choice the code cannot take; {bad} problem(s))')
    return 1 if bad else 0


def write_schemata(tree, outdir, idfile, exclude):
    """The schema command: see the usage."""
    with open(idfile) as fh:
        ids = [l.split('\t')[0].strip() for l in fh if l.strip()]
    number = {ident: k for k, ident in enumerate(ids, 1)}
    skip = set()
    if exclude and os.path.exists(exclude):
        with open(exclude) as fh:
            skip = {l.split('\t')[0].strip() for l in fh if l.strip()}
    verdict = {}
    for f, (src, ms) in load(tree, list(FILES)).items():
        chosen = [m for m in ms if m[0] in number]
        for m in chosen:
            if m[0] in skip:
                verdict[m[0]] = ('out', 'did not compile in the schema')
        chosen = [m for m in chosen if m[0] not in skip]
        text, left, kept = schemata(src, chosen, number)
        for ident, why in left.items():
            verdict[ident] = ('out', why)
        for m, (S, E, _, _, _) in kept:
            verdict[m[0]] = ('in', f'{f}\t{src.count(chr(10), 0, S) + 1}\t'
                             f'{src.count(chr(10), 0, E) + 1}')
        os.makedirs(os.path.join(outdir, os.path.dirname(f)), exist_ok=True)
        with open(os.path.join(outdir, f), 'w') as fh:
            fh.write(text)
    with open(os.path.join(tree, SCHEMA_PARAM_FILE)) as fh:
        drv = fh.read()
    os.makedirs(os.path.join(outdir, os.path.dirname(SCHEMA_PARAM_FILE)), exist_ok=True)
    with open(os.path.join(outdir, SCHEMA_PARAM_FILE), 'w') as fh:
        fh.write(drv + SCHEMA_PARAM)
    for ident in ids:
        v = verdict.get(ident, ('out', 'no such mutant'))
        print(f'{number[ident]}\t{ident}\t{v[0]}\t{v[1]}')
    return 0


def sample(items, n, seed):
    items = sorted(items, key=lambda x: (x[0], x[2][1], x[2][0]))
    if n is None or n >= len(items):
        return items
    pick = random.Random(seed).sample(range(len(items)), n)
    return [items[i] for i in sorted(pick)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('cmd', choices=['list', 'write', 'write-all', 'patch', 'suites',
                                    'boot-glob', 'report', 'schema', 'schema-check'])
    ap.add_argument('args', nargs='*')
    ap.add_argument('--tree', default='.')
    ap.add_argument('--out')
    ap.add_argument('--sample', type=int)
    ap.add_argument('--seed', type=int, default=SEED)
    ap.add_argument('--equivalent')
    ap.add_argument('--goal', type=int, default=90)
    ap.add_argument('--glob', default='*')
    ap.add_argument('--universe')
    ap.add_argument('--select', default='*')
    ap.add_argument('--tests')
    ap.add_argument('--very-slow-filtered', action='store_true')
    ap.add_argument('--exclude')
    a = ap.parse_intermixed_args()
    files = list(FILES)
    if a.cmd == 'schema-check':
        return schema_check(a.tree)
    if a.cmd == 'schema':
        if len(a.args) != 1 or not a.out:
            ap.error('schema takes --out DIR and a file of IDs')
        return write_schemata(a.tree, a.out, a.args[0], a.exclude)
    if a.cmd == 'list':
        if a.args:
            files = a.args
        equiv = read_equivalent(a.equivalent)
        chosen = [x for x in all_ids(a.tree, files)
                  if any(fnmatch.fnmatchcase(x[2][0], g) for g in a.select.split(','))]
        for f, src, m in sample(chosen, a.sample, a.seed):
            orig = original_line(src, m)
            listed = 'listed' if equiv.get(m[0], ('',))[0] == orig else ''
            print(f'{m[0]}\t{orig}\t{mutated_line(src, m)}\t{listed}')
        return 0
    if a.cmd == 'write-all':
        if len(a.args) != 1 or not a.out:
            ap.error('write-all takes --out DIR and one FILE')
        src, ms = load(a.tree, a.args)[a.args[0]]
        os.makedirs(a.out, exist_ok=True)
        for m in ms:
            with open(os.path.join(a.out, m[0].replace(':', '_') + '.c'), 'w') as fh:
                fh.write(apply_mutant(src, m))
        return 0
    if a.cmd == 'report':
        if len(a.args) != 1:
            ap.error('report takes a results file')
        universe = None
        if a.sample:
            ap.error('report takes --universe FILE, not --sample')
        if a.universe:
            universe = {'files': set(), 'ids': {}}
            with open(a.universe) as fh:
                for l in fh:
                    f = l.rstrip('\n').split('\t')
                    if len(f) >= 2:
                        universe['ids'][f[0]] = ' '.join(f[1].split())
                        universe['files'].add(f[0].split(':', 1)[0])
        return 0 if report(a.args[0], a.equivalent, a.goal, a.glob, universe) else 1
    if not a.args:
        ap.error(f'{a.cmd} takes a mutant ID')
    ident = a.args[0]
    if a.args[1:]:
        files = a.args[1:]
    if a.cmd in ('suites', 'boot-glob'):
        base = ident.split(':', 1)[0]
        for f, g in FILES.items():
            if os.path.basename(f) == base:
                if a.cmd == 'suites':
                    print(' '.join(g))
                else:
                    print(boot_glob(g, a.tests, a.very_slow_filtered))
                return 0
        sys.exit(f'mutants-op.py: no suites for {base}')
    f, src, m = find(a.tree, ident, files)
    new = apply_mutant(src, m)
    if a.cmd == 'write':
        if not a.out:
            ap.error('write needs --out')
        with open(a.out, 'w') as fh:
            fh.write(new)
        return 0
    sys.stdout.write(f'Mutant {ident}: {mutated_line(src, m)}\n\n')
    sys.stdout.write(f'diff --git a/{f} b/{f}\n')
    sys.stdout.writelines(difflib.unified_diff(
        src.splitlines(True), new.splitlines(True), f'a/{f}', f'b/{f}', n=3))
    return 0


if __name__ == '__main__':
    sys.exit(main())
