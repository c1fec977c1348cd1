#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The quick half of the mutation check, run by make check.

scripts/mutate.sh (make mutate) builds and boots a test kernel per mutant,
which takes about 90 s each; this checks in a second that the mutants still
answer the question they are for:

- coverage: every call into the series' own code (amdgpu_spm_*,
  amdgpu_rdma_*, amdgpu_peer_*, amdgpu_profiler_*, amdkfd_rdma_*, and the
  profiler's ioctl table entry) that a patch of series/ adds to an upstream
  file is removed by some mutant in scripts/mutants/, as many times as it
  is added, or is listed with its reason in scripts/mutants/not-covered;
- every "Suites:" glob of a mutant names at least one KUnit case of the
  series (suite, or suite.case);
- with a tree given (the applied series), every mutant applies to it.

Prints PASS/FAIL lines for make check; exits 1 on any FAIL.
Usage: mutants-check.py <project-top> [<applied-tree>]
"""

import fnmatch
import glob
import os
import re
import subprocess
import sys

CALL = re.compile(r'\b(amdgpu_(spm|rdma|peer|profiler)_\w+|amdkfd_rdma_\w+)\s*\('
                  r'|DRM_IOCTL_DEF_DRV\(AMDGPU_PROFILER\b')
COMMENT = re.compile(r'^\s*(/\*|\*|//)')


def diff_lines(text, sign):
    """(path, stripped line) for each line starting with sign, per file."""
    path = None
    for line in text.splitlines():
        if line.startswith('+++ '):
            path = line[4:].split('\t')[0]
            path = path[2:] if path.startswith('b/') else path
            continue
        if line.startswith('--- ') or line.startswith('diff --git'):
            continue
        if path and line.startswith(sign) and not line.startswith(sign * 3):
            yield path, line[1:]


def wiring_calls(top):
    """Calls into the series' code that its patches add to upstream files."""
    series = [d.strip() for d in open(os.path.join(top, 'series/series'))
              if d.strip() and not d.startswith('#')]
    new_files = set()
    for d in series:
        fl = os.path.join(top, 'series', d, 'files')
        if os.path.exists(fl):
            new_files.update(x.strip() for x in open(fl) if x.strip())
    calls = {}
    for d in series:
        for p in sorted(glob.glob(os.path.join(top, 'series', d, '*.patch'))):
            for path, line in diff_lines(open(p).read(), '+'):
                if path in new_files or COMMENT.match(line):
                    continue
                # A definition or prototype starts in column 0
                if not line[:1].isspace():
                    continue
                if CALL.search(line):
                    key = (path, line.strip())
                    calls.setdefault(key, []).append(d)
    return calls


def kunit_cases(top):
    """suite.case names of the series' KUnit suites."""
    names = set()
    for f in glob.glob(os.path.join(top, 'drivers/gpu/drm/amd/amdgpu/tests/*.c')):
        src = open(f).read()
        for arr, body in re.findall(r'struct kunit_case (\w+)\[\] = \{(.*?)\n\};',
                                    src, re.S):
            cases = re.findall(r'KUNIT_CASE\w*\(\s*(\w+)', body)
            for suite in re.findall(r'\.name = "(\w+)",[^}]*?\.test_cases = ' +
                                    arr + r'\b', src, re.S):
                names.update(f'{suite}.{c}' for c in cases)
    return names


def main():
    top = os.path.abspath(sys.argv[1])
    tree = sys.argv[2] if len(sys.argv) > 2 else None
    fail = False
    mutants = sorted(glob.glob(os.path.join(top, 'scripts/mutants/*.patch')))
    removed = {}
    cases = kunit_cases(top)
    bad_suites = []
    for m in mutants:
        text = open(m).read()
        for path, line in diff_lines(text, '-'):
            key = (path, line.strip())
            removed[key] = removed.get(key, 0) + 1
        suites = re.search(r'^Suites:\s*(.*)$', text, re.M)
        globs = suites.group(1).split() if suites else []
        if not globs:
            bad_suites.append(f'{os.path.basename(m)}: no Suites: line')
        for g in globs:
            if not any(fnmatch.fnmatchcase(c, g) or
                       fnmatch.fnmatchcase(c.split('.')[0], g) for c in cases):
                bad_suites.append(f'{os.path.basename(m)}: {g} names no case')

    calls = wiring_calls(top)
    exempt = {}
    nc = os.path.join(top, 'scripts/mutants/not-covered')
    if os.path.exists(nc):
        for line in open(nc):
            if line.startswith('#') or not line.strip():
                continue
            path, call, why = [x.strip() for x in line.split('|', 2)]
            exempt[(path, call)] = why
    for k, why in sorted(exempt.items()):
        if k in calls:
            print(f'mutants: not covered on purpose: "{k[1]}" ({k[0]}): {why}')
        else:
            print(f'mutants: scripts/mutants/not-covered names "{k[1]}" ({k[0]}), '
                  'which the series does not add')
            fail = True
    missing = [(k, v) for k, v in sorted(calls.items())
               if k not in exempt and removed.get(k, 0) < len(v)]
    for (path, line), dirs in missing:
        print(f'mutants: no mutant removes "{line}" ({path}, series/{dirs[0]})')
    if missing:
        print(f'FAIL mutants cover the wiring: {len(missing)} of {len(calls)} '
              'calls into the series are removed by no mutant')
        fail = True
    else:
        print(f'PASS mutants cover the wiring ({len(calls)} calls, '
              f'{len(mutants)} mutants)')

    for b in bad_suites:
        print('mutants: ' + b)
    if bad_suites:
        print('FAIL mutants name existing KUnit cases')
        fail = True
    else:
        print(f'PASS mutants name existing KUnit cases ({len(cases)} cases)')

    if tree:
        stale = []
        for m in mutants:
            r = subprocess.run(['git', 'apply', '--check', m], cwd=tree,
                               capture_output=True, text=True)
            if r.returncode:
                stale.append(os.path.basename(m))
        for s in stale:
            print(f'mutants: {s} does not apply to the series')
        if stale:
            print('FAIL mutants apply to the series')
            fail = True
        else:
            print(f'PASS mutants apply to the series ({len(mutants)})')
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
